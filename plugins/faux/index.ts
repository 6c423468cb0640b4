/**
 * faux: a scripted, deterministic model for tests, demos and extension authors.
 *
 * Registers the API "faux" and the provider "faux" (model "faux-1"; code and scripts may add
 * more). It needs no key. Each request takes the next step of the script:
 *
 *   - a string: one text answer;
 *   - an object (FauxResponse): `content` blocks and/or the shorthands `thinking`, `text`,
 *     `toolCalls`; `stopReason`; `error` (the stream ends with an error event after the
 *     content); `usage`; `delayMs` between chunks; `chunkSize` (characters per delta,
 *     default one word per delta);
 *   - in code, a function (context, info) => response (may be async).
 *
 * Scripts come from code (`setFauxScript(steps)`, or a `FauxModel` of your own passed to
 * `createFauxPlugin`) or from a JSON file named by the environment variable PI_FAUX_SCRIPT or
 * the setting `faux.script`: either an array of steps or
 * `{ "steps": [...], "models": [{ "id": "faux-2", "reasoning": true }], "loop": false, "delayMs": 0, "chunkSize": 0 }`.
 * With no script at all the model echoes the last user message ("Echo: …"); once a script is
 * set and used up, a request ends with an error event saying so.
 *
 * Streams are real AssistantMessageEvent sequences (start, text_*, thinking_*, toolcall_*,
 * done | error) whose `partial` is the growing message; an abort ends the stream with an
 * `error` event of reason "aborted" that keeps the content streamed so far.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { TextContent, ThinkingContent } from "@earendil-works/pi-ai";
import type { AssistantMessage, Context, SimpleStreamOptions, ToolCall, Usage } from "@mariozechner/pi-ai";
import { definePlugin, type ApiProvider, type AssistantStream, type Kernel, type ModelDefinition, type ProviderModels, type StreamFn, type AnyModel, jsonErrorPosition } from "../../core/kernel/index.js";
import { AssistantMessageEventStream, describeError, emptyAssistantMessage } from "../../core/stores/index.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    /** The FauxModel the faux plugin serves. */
    faux: FauxModel;
  }
}

export const FAUX_API = "faux";
export const FAUX_PROVIDER = "faux";
export const FAUX_SCRIPT_ENV = "PI_FAUX_SCRIPT";

export type FauxBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "toolCall"; id?: string; name: string; arguments?: Record<string, unknown> };

export interface FauxToolCallSpec {
  id?: string;
  name: string;
  arguments?: Record<string, unknown>;
}

export interface FauxResponse {
  /** Blocks in order; a string is one text block. */
  content?: string | FauxBlock | FauxBlock[];
  /** Shorthands, streamed after `content` in this order: thinking, text, toolCalls. */
  thinking?: string;
  text?: string;
  toolCalls?: FauxToolCallSpec[];
  /** Default: "toolUse" when there are tool calls, else "stop" ("error" when `error` is set). */
  stopReason?: AssistantMessage["stopReason"];
  /** End with an error event (stopReason "error") carrying this errorMessage, after the content. */
  error?: string;
  /** The errorMessage when stopReason is "error" or "aborted" (same as `error`). */
  errorMessage?: string;
  /** Token counts; missing ones are estimated (characters / 4). */
  usage?: Partial<Omit<Usage, "cost">>;
  /** Milliseconds to wait before each chunk (overrides the model's default). */
  delayMs?: number;
  /** Characters per delta; 0 or missing = one word per delta. */
  chunkSize?: number;
  responseId?: string;
}

export interface FauxStepInfo {
  model: AnyModel;
  options?: SimpleStreamOptions;
  /** 1 for the first request this FauxModel serves. */
  callCount: number;
}

export type FauxStepValue = string | FauxResponse;
export type FauxStep = FauxStepValue | ((context: Context, info: FauxStepInfo) => FauxStepValue | Promise<FauxStepValue>);

export interface FauxScriptFile {
  steps: FauxStepValue[];
  models?: ModelDefinition[];
  loop?: boolean;
  delayMs?: number;
  chunkSize?: number;
}

export interface FauxModelOptions {
  api?: string;
  provider?: string;
  models?: ModelDefinition[];
  steps?: FauxStep[];
  loop?: boolean;
  /** Default pause before each chunk. */
  delayMs?: number;
  /** Default characters per delta (0 = per word). */
  chunkSize?: number;
}

export const FAUX_DEFAULT_MODEL: Readonly<ModelDefinition> = Object.freeze({
  id: "faux-1",
  name: "Faux 1",
  reasoning: false,
  input: ["text", "image"] as ("text" | "image")[],
  contextWindow: 128000,
  maxTokens: 16384,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

const RESPONSE_KEYS = new Set(["content", "thinking", "text", "toolCalls", "stopReason", "error", "errorMessage", "usage", "delayMs", "chunkSize", "responseId"]);
const STOP_REASONS = new Set(["stop", "length", "toolUse", "error", "aborted"]);

export class FauxModel {
  readonly api: string;
  readonly provider: string;
  private modelDefs: ModelDefinition[];
  private script: FauxStep[] = [];
  private cursor = 0;
  private scripted = false;
  private loop: boolean;
  private calls = 0;
  private defaultDelay: number;
  private defaultChunk: number;
  private loadError: string | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(opts: FauxModelOptions = {}) {
    this.api = opts.api ?? FAUX_API;
    this.provider = opts.provider ?? FAUX_PROVIDER;
    this.modelDefs = opts.models?.length ? opts.models.map((m) => ({ ...m })) : [{ ...FAUX_DEFAULT_MODEL }];
    this.loop = opts.loop ?? false;
    this.defaultDelay = opts.delayMs ?? 0;
    this.defaultChunk = opts.chunkSize ?? 0;
    if (opts.steps) this.setScript(opts.steps);
  }

  // ---- script ----

  /** Replace the script; requests take its steps in order. */
  setScript(steps: FauxStep[], opts: { loop?: boolean } = {}): void {
    this.script = [...steps];
    this.cursor = 0;
    this.scripted = true;
    this.loadError = undefined;
    if (opts.loop !== undefined) this.loop = opts.loop;
  }

  /** Add steps after the remaining ones. */
  appendSteps(...steps: FauxStep[]): void {
    this.script.push(...steps);
    this.scripted = true;
  }

  /** Back to no script (echo mode), call count kept. */
  reset(): void {
    this.script = [];
    this.cursor = 0;
    this.scripted = false;
    this.loadError = undefined;
  }

  get pendingSteps(): number {
    return this.scripted ? this.script.length - this.cursor : 0;
  }
  get callCount(): number {
    return this.calls;
  }
  get isScripted(): boolean {
    return this.scripted;
  }

  /** Load a JSON script file (throws an Error naming the file and the position or field). */
  loadScriptFile(path: string): void {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new Error(`faux script ${path}: cannot read: ${describeError(error)}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new Error(`faux script ${path}: malformed JSON at ${jsonErrorPosition(text, error)}`);
    }
    const file = parseScriptFile(data, path);
    if (file.models?.length) {
      for (const m of file.models) this.addModel(m);
    }
    if (file.delayMs !== undefined) this.defaultDelay = file.delayMs;
    if (file.chunkSize !== undefined) this.defaultChunk = file.chunkSize;
    this.setScript(file.steps, { loop: file.loop ?? false });
  }

  /** Make every request fail with this message (a script that could not be loaded). */
  setLoadError(message: string): void {
    this.loadError = message;
  }

  // ---- models ----

  get models(): readonly ModelDefinition[] {
    return this.modelDefs;
  }

  /** Add (or replace, by id) a model; registrations made by the plugin follow. */
  addModel(def: ModelDefinition): void {
    if (!def || typeof def.id !== "string" || !def.id) throw new Error("faux model needs an id");
    const full: ModelDefinition = { ...FAUX_DEFAULT_MODEL, name: def.id, ...def };
    const i = this.modelDefs.findIndex((m) => m.id === def.id);
    if (i >= 0) this.modelDefs[i] = full;
    else this.modelDefs.push(full);
    for (const l of this.listeners) l();
  }

  onModelsChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The provider entry for the kernel's model registry. */
  providerModels(): ProviderModels {
    return { name: this.provider, api: this.api, baseUrl: "faux://local", apiKey: "faux", keyless: true, models: this.modelDefs.map((m) => ({ ...m, api: this.api })) };
  }

  /** The API entry for the kernel's provider registry. */
  apiProvider(): ApiProvider {
    return { api: this.api, stream: this.stream };
  }

  // ---- streaming ----

  private nextStep(): FauxStep | { exhausted: string } {
    if (this.loadError) return { exhausted: this.loadError };
    if (!this.scripted) return echoStep;
    if (this.cursor >= this.script.length && this.loop && this.script.length) this.cursor = 0;
    if (this.cursor >= this.script.length) {
      return { exhausted: `faux: the script has no more steps (${this.script.length} used); add steps with setFauxScript() or the script file` };
    }
    return this.script[this.cursor++]!;
  }

  /** A StreamFn: the next scripted response as AssistantMessageEvents. */
  readonly stream: StreamFn = (model, context, options): AssistantStream => {
    const out = new AssistantMessageEventStream();
    const callCount = ++this.calls;
    const step = this.nextStep();
    void this.run(out, step, model, context, options, callCount);
    return out;
  };

  private async run(
    out: AssistantMessageEventStream,
    step: FauxStep | { exhausted: string },
    model: AnyModel,
    context: Context,
    options: SimpleStreamOptions | undefined,
    callCount: number,
  ): Promise<void> {
    const output = emptyAssistantMessage({ api: model.api, provider: model.provider, id: model.id });
    const signal = options?.signal;
    let started = false;
    const finishError = (reason: "error" | "aborted", message: string) => {
      output.stopReason = reason;
      output.errorMessage = message;
      out.push({ type: "error", reason, error: output });
      out.end(output);
    };
    const aborted = () => signal?.aborted === true;
    try {
      if (typeof step === "object" && step !== null && "exhausted" in step) {
        await Promise.resolve();
        return finishError("error", step.exhausted);
      }
      const value = typeof step === "function" ? await step(context, { model, options, callCount }) : step;
      const resp = normalizeResponse(value);
      const blocks = responseBlocks(resp, callCount);
      const delay = resp.delayMs ?? this.defaultDelay;
      const chunkSize = resp.chunkSize ?? this.defaultChunk;
      if (resp.responseId) output.responseId = resp.responseId;
      if (aborted()) return finishError("aborted", "Request was aborted");
      out.push({ type: "start", partial: output });
      started = true;
      let n = 0;
      const pace = async (): Promise<boolean> => {
        n++;
        if (delay > 0) await sleep(delay, signal);
        else if (n % 64 === 0) await new Promise((r) => setImmediate(r));
        else await Promise.resolve();
        return !aborted();
      };
      for (const block of blocks) {
        if (aborted()) return finishError("aborted", "Request was aborted");
        const index = output.content.length;
        if (block.type === "text") {
          const b: TextContent = { type: "text", text: "" };
          output.content.push(b);
          out.push({ type: "text_start", contentIndex: index, partial: output });
          for (const chunk of split(block.text, chunkSize)) {
            if (!(await pace())) return finishError("aborted", "Request was aborted");
            b.text += chunk;
            out.push({ type: "text_delta", contentIndex: index, delta: chunk, partial: output });
          }
          out.push({ type: "text_end", contentIndex: index, content: b.text, partial: output });
        } else if (block.type === "thinking") {
          const b: ThinkingContent = { type: "thinking", thinking: "" };
          output.content.push(b);
          out.push({ type: "thinking_start", contentIndex: index, partial: output });
          for (const chunk of split(block.thinking, chunkSize)) {
            if (!(await pace())) return finishError("aborted", "Request was aborted");
            b.thinking += chunk;
            out.push({ type: "thinking_delta", contentIndex: index, delta: chunk, partial: output });
          }
          out.push({ type: "thinking_end", contentIndex: index, content: b.thinking, partial: output });
        } else {
          const b: ToolCall = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
          output.content.push(b);
          out.push({ type: "toolcall_start", contentIndex: index, partial: output });
          const json = JSON.stringify(block.arguments);
          for (const chunk of split(json, chunkSize || 16)) {
            if (!(await pace())) return finishError("aborted", "Request was aborted");
            out.push({ type: "toolcall_delta", contentIndex: index, delta: chunk, partial: output });
          }
          b.arguments = block.arguments;
          out.push({ type: "toolcall_end", contentIndex: index, toolCall: { ...b }, partial: output });
        }
      }
      output.usage = usageFor(model, context, output, resp.usage);
      const errorText = resp.error ?? resp.errorMessage;
      const stop = resp.stopReason ?? (resp.error !== undefined ? "error" : blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop");
      if (stop === "error" || stop === "aborted") return finishError(stop, errorText ?? (stop === "aborted" ? "Request was aborted" : "faux: scripted error"));
      output.stopReason = stop;
      out.push({ type: "done", reason: stop, message: output });
      out.end(output);
    } catch (error) {
      if (out.isDone) return;
      if (!started) output.content = [];
      finishError(aborted() ? "aborted" : "error", aborted() ? "Request was aborted" : `faux: ${describeError(error)}`);
    }
  }
}

// ---- helpers ---------------------------------------------------------------------------------------

const echoStep: FauxStep = (context) => {
  for (let i = context.messages.length - 1; i >= 0; i--) {
    const m = context.messages[i]!;
    if (m.role !== "user") continue;
    const text = typeof m.content === "string" ? m.content : m.content.map((c) => (c.type === "text" ? c.text : "[image]")).join(" ");
    return `Echo: ${text}`;
  }
  return "Echo: (no user message)";
};

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Fixed-size chunks, or word chunks (each word with its following whitespace). */
function split(text: string, size: number): string[] {
  if (!text) return [];
  if (size > 0) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.match(/\s*\S+\s*/g) ?? [text];
}

function normalizeResponse(v: FauxStepValue): FauxResponse {
  if (typeof v === "string") return { text: v };
  if (!v || typeof v !== "object") throw new Error(`a step must be a string or an object, got ${v === null ? "null" : typeof v}`);
  return v;
}

type ResolvedBlock = { type: "text"; text: string } | { type: "thinking"; thinking: string } | { type: "toolCall"; id: string; name: string; arguments: Record<string, any> };

function responseBlocks(r: FauxResponse, callCount: number): ResolvedBlock[] {
  const raw: FauxBlock[] = [];
  if (typeof r.content === "string") raw.push({ type: "text", text: r.content });
  else if (Array.isArray(r.content)) raw.push(...r.content);
  else if (r.content) raw.push(r.content);
  if (r.thinking !== undefined) raw.push({ type: "thinking", thinking: r.thinking });
  if (r.text !== undefined) raw.push({ type: "text", text: r.text });
  for (const t of r.toolCalls ?? []) raw.push({ type: "toolCall", ...t });
  let toolIndex = 0;
  return raw.map((b): ResolvedBlock => {
    if (b.type === "text") return { type: "text", text: String(b.text ?? "") };
    if (b.type === "thinking") return { type: "thinking", thinking: String(b.thinking ?? "") };
    if (b.type === "toolCall") {
      if (typeof b.name !== "string" || !b.name) throw new Error("a tool call needs a name");
      return { type: "toolCall", id: b.id ?? `faux_call_${callCount}_${toolIndex++}`, name: b.name, arguments: b.arguments ?? {} };
    }
    throw new Error(`unknown block type ${JSON.stringify((b as { type?: unknown }).type)}`);
  });
}

function contextChars(context: Context): number {
  let n = context.systemPrompt?.length ?? 0;
  for (const m of context.messages) {
    if (typeof m.content === "string") n += m.content.length;
    else
      for (const c of m.content) {
        if (c.type === "text") n += c.text.length;
        else if (c.type === "thinking") n += c.thinking.length;
        else if (c.type === "toolCall") n += c.name.length + JSON.stringify(c.arguments).length;
        else n += 1000; // an image
      }
  }
  for (const t of context.tools ?? []) n += t.name.length + (t.description?.length ?? 0);
  return n;
}

function usageFor(model: AnyModel, context: Context, output: AssistantMessage, given?: Partial<Omit<Usage, "cost">>): Usage {
  let outChars = 0;
  for (const c of output.content) outChars += c.type === "text" ? c.text.length : c.type === "thinking" ? c.thinking.length : JSON.stringify(c.arguments).length + c.name.length;
  const input = given?.input ?? Math.ceil(contextChars(context) / 4);
  const out = given?.output ?? Math.ceil(outChars / 4);
  const cacheRead = given?.cacheRead ?? 0;
  const cacheWrite = given?.cacheWrite ?? 0;
  const rate = model.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  const cost = {
    input: (rate.input / 1e6) * input,
    output: (rate.output / 1e6) * out,
    cacheRead: (rate.cacheRead / 1e6) * cacheRead,
    cacheWrite: (rate.cacheWrite / 1e6) * cacheWrite,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output: out, cacheRead, cacheWrite, totalTokens: given?.totalTokens ?? input + out + cacheRead + cacheWrite, cost };
}

/** Check a parsed script file; errors name the file and the field. */
export function parseScriptFile(data: unknown, path = "faux script"): FauxScriptFile {
  const fail = (where: string, what: string): never => {
    throw new Error(`faux script ${path}: ${where}: ${what}`);
  };
  const obj = Array.isArray(data) ? { steps: data } : data;
  if (!obj || typeof obj !== "object") fail("root", "must be an array of steps or an object with \"steps\"");
  const f = obj as Record<string, unknown>;
  if (!Array.isArray(f.steps)) fail("steps", "must be an array");
  for (const k of ["delayMs", "chunkSize"]) {
    if (f[k] !== undefined && (typeof f[k] !== "number" || (f[k] as number) < 0)) fail(k, "must be a number ≥ 0");
  }
  if (f.loop !== undefined && typeof f.loop !== "boolean") fail("loop", "must be true or false");
  if (f.models !== undefined) {
    if (!Array.isArray(f.models)) fail("models", "must be an array");
    (f.models as unknown[]).forEach((m, i) => {
      if (!m || typeof m !== "object" || typeof (m as { id?: unknown }).id !== "string" || !(m as { id: string }).id) fail(`models[${i}].id`, "must be a non-empty string");
    });
  }
  (f.steps as unknown[]).forEach((s, i) => {
    const at = `steps[${i}]`;
    if (typeof s === "string") return;
    if (!s || typeof s !== "object" || Array.isArray(s)) return fail(at, "must be a string or an object");
    const r = s as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!RESPONSE_KEYS.has(k)) fail(`${at}.${k}`, "unknown field");
    for (const k of ["thinking", "text", "error", "errorMessage", "responseId"]) {
      if (r[k] !== undefined && typeof r[k] !== "string") fail(`${at}.${k}`, "must be a string");
    }
    if (r.stopReason !== undefined && !STOP_REASONS.has(r.stopReason as string)) fail(`${at}.stopReason`, `must be one of ${[...STOP_REASONS].join(", ")}`);
    for (const k of ["delayMs", "chunkSize"]) {
      if (r[k] !== undefined && (typeof r[k] !== "number" || (r[k] as number) < 0)) fail(`${at}.${k}`, "must be a number ≥ 0");
    }
    if (r.toolCalls !== undefined) {
      if (!Array.isArray(r.toolCalls)) fail(`${at}.toolCalls`, "must be an array");
      (r.toolCalls as unknown[]).forEach((t, j) => {
        const tc = t as Record<string, unknown> | null;
        if (!tc || typeof tc !== "object" || typeof tc.name !== "string" || !tc.name) fail(`${at}.toolCalls[${j}].name`, "must be a non-empty string");
        if (tc!.arguments !== undefined && (typeof tc!.arguments !== "object" || tc!.arguments === null || Array.isArray(tc!.arguments)))
          fail(`${at}.toolCalls[${j}].arguments`, "must be an object");
      });
    }
    if (r.content !== undefined && typeof r.content !== "string") {
      const blocks = Array.isArray(r.content) ? r.content : [r.content];
      blocks.forEach((b, j) => {
        const type = (b as { type?: unknown } | null)?.type;
        if (type !== "text" && type !== "thinking" && type !== "toolCall") fail(`${at}.content[${j}].type`, `must be "text", "thinking" or "toolCall"`);
      });
    }
  });
  return f as unknown as FauxScriptFile;
}

// ---- the plugin ------------------------------------------------------------------------------------

/** The FauxModel the default plugin uses (shared by every kernel in this process). */
export const defaultFaux = new FauxModel();

/** Script the default faux model (see the module comment for step shapes). */
export function setFauxScript(steps: FauxStep[], opts: { loop?: boolean } = {}): void {
  defaultFaux.setScript(steps, opts);
}

/** The FauxModel a kernel's faux plugin serves (its "faux" service). */
export function getFaux(kernel: Pick<Kernel, "service">): FauxModel | undefined {
  return kernel.service("faux");
}

/** A faux plugin serving `faux` (pass your own FauxModel to keep tests independent). */
export function createFauxPlugin(faux: FauxModel = defaultFaux) {
  return definePlugin({
    name: "faux",
    version: "1.0.0",
    kernel: "^1.0.0",
    description: "A scripted, deterministic model for tests and demos (provider and API \"faux\")",
    setup(api) {
      const settingScript = (api.kernel.settings.get().faux as { script?: unknown } | undefined)?.script;
      const file = process.env[FAUX_SCRIPT_ENV] || (typeof settingScript === "string" ? settingScript : undefined);
      if (file && !faux.pendingSteps) {
        const path = isAbsolute(file) ? file : resolve(api.kernel.cwd, file);
        try {
          faux.loadScriptFile(path);
        } catch (error) {
          const message = describeError(error);
          faux.setLoadError(message);
          api.report("error", message);
        }
      }
      api.registerApiProvider(faux.apiProvider());
      let undo = api.registerModels(faux.providerModels());
      const off = faux.onModelsChange(() => {
        // Our registration is gone (plugin disposed, or refused): stop following.
        if (!undo || api.kernel.models.entry(faux.provider)?.source !== api.name) return void off();
        undo();
        undo = api.registerModels(faux.providerModels());
      });
      api.provide("faux", faux);
    },
  });
}

export default createFauxPlugin();
