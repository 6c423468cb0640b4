/**
 * pi 1.6's `createCodemodeExtension`: the `codemode` tool runs a JavaScript script the model
 * wrote, which calls the session's tools and returns only what it chooses to the model.
 *
 * The sandbox is QuickJS compiled to WebAssembly (`quickjs-emscripten-core` with the
 * `@jitl/quickjs-wasmfile-release-sync` build). A script gets a fresh QuickJS runtime in its own
 * worker thread (codemode-worker.ts) with a 256 MB memory limit; the worker is terminated on
 * abort and at the script's deadline, so even `while (true) {}` is stopped; it sees
 * ECMAScript's built-ins and the globals below and nothing of Node (no require, process, import,
 * file system, network or timers). Its tool calls are host functions that run
 * `ctx.executeTool` — the loop's nested calls, with validation, `tool_call`/`tool_result` hooks
 * and the permission gate — so a script can call exactly the tools the session could.
 *
 * Globals: `tools.<name>(args)` (resolves to the tool's text, rejects with its error text),
 * `text(value)`, `console.log/info/warn/error/debug(...)`, `return value`, `exit()`,
 * `ALL_TOOLS` ({name, description}[]), `searchTools(query, {limit?})`. The callable tools are the
 * declared ones plus registered tools with `codemode` / `deferred` exposure (MCP tools by default,
 * not declared to the model); MCP tools behind our `mcp` search tool (when mcp.toolMode puts them
 * there) are callable by their names too, the call going through the `mcp` tool. Not here (1.6 has them): `image()`, `store()`/`load()`, `models`,
 * `describeTool()`, `describeNamespace()`, `codemode.mode: "only"`.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "typebox";
import type { ExtensionAPI, ExtensionFactory } from "../extensions/types.js";
import { searchEntries } from "../mcp/search-tool.js";
import { codemodeWorkerSource, quickjsPaths, quickjsWasmModule, type WorkerInput, type WorkerMessage } from "./codemode-worker.js";

export interface CodemodeExtensionOptions {
  /** "on" (the default) only: tools stay declared. 1.6's "only" (hide them) is not available. */
  mode?: "on" | "only";
  /** 1.6: estimated tokens of tool declarations in the description. Accepted, no effect: the description lists no tools (scripts read ALL_TOOLS). */
  inlineBudget?: number;
  /** 1.6 exposes the model catalog as `models`; not available here (accepted, no effect). */
  models?: boolean;
}

export const CODEMODE_TOOL_NAME = "codemode";
const MEMORY_LIMIT = 256 * 1024 * 1024;
const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;
const MAX_OUTPUT_CHARS = 16_777_216;
const MAX_OUTPUT_ITEMS = 100_000;
const OPTIONS_LINE = /^\s*\/\/\s*@options:(.*)$/;

/** A JavaScript identifier for a tool name: other characters become `_`. */
export const toolIdentifier = (name: string) => name.replace(/[^A-Za-z0-9_$]/g, "_");

interface ScriptOptions {
  maxOutputTokens: number;
  timeoutMs?: number;
}

/** The `// @options: {...}` first line; an options line anywhere else is an error. */
export function parseScriptOptions(code: string): ScriptOptions {
  const lines = code.split("\n");
  const out: ScriptOptions = { maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS };
  lines.forEach((line, i) => {
    const m = OPTIONS_LINE.exec(line);
    if (!m) return;
    if (i !== 0) throw new Error(`an // @options: line must be the first line of the script (found on line ${i + 1})`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(m[1]!.trim());
    } catch {
      throw new Error(`the // @options: line is not a JSON object: ${m[1]!.trim()}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the // @options: line must hold a JSON object");
    for (const [k, v] of Object.entries(parsed)) {
      if (k !== "max_output_tokens" && k !== "timeout_ms") throw new Error(`unknown script option "${k}" (known: max_output_tokens, timeout_ms)`);
      if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) throw new Error(`script option ${k} must be a positive integer, got ${JSON.stringify(v)}`);
      if (k === "max_output_tokens") out.maxOutputTokens = v;
      else out.timeoutMs = v;
    }
  });
  return out;
}

interface CallableTool {
  name: string;
  description: string;
  /** How to run it: by its own name, or through the `mcp` search tool. */
  via: "direct" | "mcp";
}

/** Run inside the sandbox once: builds the globals from three host functions, none of which stays global. */
const BOOTSTRAP = `(function (call, out, search, namesJson, all) {
  const names = JSON.parse(namesJson);
  const show = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2) ?? String(v));
  const tools = {};
  for (const [id, name] of names) tools[id] = (args) => call(name, JSON.stringify(args === undefined ? {} : args));
  Object.freeze(tools);
  const line = (...a) => a.map((x) => (typeof x === "string" ? x : show(x))).join(" ");
  const console = {};
  for (const k of ["log", "info", "warn", "error", "debug"]) console[k] = (...a) => out("console", line(...a));
  const EXIT = { exit: true };
  globalThis.tools = tools;
  globalThis.console = Object.freeze(console);
  globalThis.text = (v) => { out("text", show(v)); };
  globalThis.exit = () => { throw EXIT; };
  globalThis.ALL_TOOLS = Object.freeze(JSON.parse(all).map((t) => Object.freeze(t)));
  globalThis.searchTools = async (query, opts) => JSON.parse(await search(String(query ?? ""), JSON.stringify(opts ?? {})));
  return (result) => { if (result !== undefined) out("text", show(result)); };
})`;

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * The output as the model sees it: text items in order (numbered when there are several), then
 * the console lines in one block; cut in the middle beyond max_output_tokens, the whole text
 * saved to a temp file named in the result.
 */
function renderOutput(texts: string[], consoleLines: string[], maxTokens: number): string {
  const parts: string[] = [];
  texts.forEach((t, i) => parts.push(texts.length > 1 ? `==> text ${i + 1}/${texts.length} <==\n${t}` : t));
  if (consoleLines.length) parts.push(`<console_output>\n${consoleLines.join("\n")}\n</console_output>`);
  const whole = parts.join("\n");
  const maxChars = maxTokens * 4;
  if (whole.length <= maxChars) return whole;
  const dir = mkdtempSync(join(tmpdir(), "pi-codemode-"));
  const file = join(dir, "output.txt");
  writeFileSync(file, whole);
  const keep = Math.floor(maxChars / 2);
  return `${whole.slice(0, keep)}\n…${whole.length - 2 * keep} chars truncated (full output: ${file})…\n${whole.slice(whole.length - keep)}`;
}

class ScriptError extends Error {}

/**
 * Runs one script in a worker thread (codemode-worker.ts); resolves to the result text, rejects
 * with a ScriptError carrying the failure text. The worker is terminated when the call is
 * aborted or passes its `timeout_ms`, so a script that never yields cannot hold the agent; when
 * the process ends (SIGTERM, Ctrl-C), the worker ends with it.
 */
export async function runScript(
  code: string,
  callable: CallableTool[],
  callTool: (tool: CallableTool, args: unknown, signal: AbortSignal) => Promise<{ text: string; isError: boolean }>,
  signal: AbortSignal | undefined,
): Promise<string> {
  const started = Date.now();
  const texts: string[] = [];
  const consoleLines: string[] = [];
  let options: ScriptOptions = { maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS };
  const failure = (message: string): ScriptError => {
    const partial = renderOutput(texts, consoleLines, options.maxOutputTokens);
    return new ScriptError(`Script failed in ${formatSeconds(Date.now() - started)}\n${partial ? partial + "\n" : ""}Script error: ${message}`);
  };
  try {
    options = parseScriptOptions(code);
  } catch (e) {
    throw failure((e as Error).message);
  }
  if (signal?.aborted) throw failure("aborted");
  const deadline = options.timeoutMs !== undefined ? started + options.timeoutMs : undefined;
  const { Worker } = await import("node:worker_threads");
  const paths = quickjsPaths();
  const input: WorkerInput = {
    ...paths,
    wasmModule: await quickjsWasmModule(paths.variantPath),
    code,
    bootstrap: BOOTSTRAP,
    namesJson: JSON.stringify(callable.map((t) => [toolIdentifier(t.name), t.name])),
    allJson: JSON.stringify(callable.map((t) => ({ name: t.name, description: t.description }))),
    memoryLimit: MEMORY_LIMIT,
    deadline,
    timeoutMs: options.timeoutMs,
    maxOutputItems: MAX_OUTPUT_ITEMS,
    maxOutputChars: MAX_OUTPUT_CHARS,
  };
  const worker = new Worker(codemodeWorkerSource(), { eval: true, workerData: input, stdout: true, stderr: true });
  const calls = new AbortController();
  const byName = new Map(callable.map((t) => [t.name, t]));
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const end = (result: { text?: string; error?: string }) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      calls.abort();
      void worker.terminate();
      if (result.error !== undefined) reject(failure(result.error));
      else resolve(result.text!);
    };
    const onAbort = () => end({ error: "aborted" });
    signal?.addEventListener("abort", onAbort, { once: true });
    // Aborted while the worker's modules loaded (before the listener existed): end it now.
    if (signal?.aborted) onAbort();
    // The worker checks the deadline itself (and keeps the partial output); this is the backstop.
    if (deadline !== undefined) timer = setTimeout(() => end({ error: `the script passed its timeout_ms of ${options.timeoutMs} ms` }), Math.max(0, deadline - Date.now()) + 250);
    worker.on("message", (m: WorkerMessage) => {
      if (settled) return;
      if (m.type === "out") (m.kind === "console" ? consoleLines : texts).push(m.text);
      else if (m.type === "call") {
        void (async () => {
          let outcome: { text: string; isError: boolean };
          if (m.name === "\u0000search") {
            const { query, opts } = m.args as { query: string; opts: string };
            outcome = { text: searchAnswer(callable, query, opts), isError: false };
          } else {
            const tool = byName.get(m.name);
            try {
              outcome = tool ? await callTool(tool, m.args, calls.signal) : { text: `no tool named ${m.name}`, isError: true };
            } catch (e) {
              outcome = { text: (e as Error)?.message ?? String(e), isError: true };
            }
          }
          if (!settled) worker.postMessage({ type: "result", id: m.id, ...outcome });
        })();
      } else if (m.type === "done") {
        const output = renderOutput(texts, consoleLines, options.maxOutputTokens);
        end({ text: `Script completed in ${formatSeconds(Date.now() - started)}${output ? "\n" + output : ""}` });
      } else end({ error: m.message });
    });
    worker.on("error", (e) => end({ error: `the sandbox stopped: ${(e as Error)?.message ?? String(e)}` }));
    worker.on("exit", (code) => end({ error: `the sandbox stopped (exit code ${code})` }));
  });
}

/** searchTools(query, {limit}) for a script: the best-matching callable tools. */
function searchAnswer(callable: CallableTool[], query: string, optsJson: string): string {
  let opts: { limit?: unknown } = {};
  try {
    opts = JSON.parse(optsJson) as { limit?: unknown };
  } catch {
    opts = {};
  }
  const limit = typeof opts.limit === "number" && opts.limit > 0 ? Math.floor(opts.limit) : 8;
  const entries = callable.map((t) => ({ name: t.name, server: t.name.startsWith("mcp__") ? t.name.split("__")[1]! : "", tool: t.name, description: t.description, inputSchema: {} }));
  return JSON.stringify(searchEntries(entries, query, undefined, limit).map((e) => ({ name: e.name, description: e.description })));
}

/**
 * The tools a script may call: the call's scope (declared tools and registered `codemode` /
 * `deferred` ones; not codemode itself), and MCP tools behind the `mcp` search tool.
 */
function callableTools(pi: Pick<ExtensionAPI, "getAllTools">, ctxTools: Array<{ name: string; description?: string }>): CallableTool[] {
  const out: CallableTool[] = [];
  const seen = new Set<string>();
  for (const t of ctxTools) {
    if (t.name === CODEMODE_TOOL_NAME || seen.has(t.name)) continue;
    seen.add(t.name);
    out.push({ name: t.name, description: t.description ?? "", via: "direct" });
  }
  if (seen.has("mcp")) {
    for (const t of pi.getAllTools()) {
      if (!t.name.startsWith("mcp__") || seen.has(t.name)) continue;
      seen.add(t.name);
      out.push({ name: t.name, description: t.description ?? "", via: "mcp" });
    }
  }
  return out;
}

const textOf = (content: unknown): string =>
  Array.isArray(content) ? content.filter((c) => c?.type === "text").map((c) => c.text as string).join("\n") : "";

/** An extension factory registering the `codemode` tool. */
export function createCodemodeExtension(options: CodemodeExtensionOptions = {}): ExtensionFactory {
  if (options === null || typeof options !== "object") throw new TypeError("createCodemodeExtension: options must be an object");
  if (options.mode !== undefined && options.mode !== "on") {
    throw new TypeError(`createCodemodeExtension: mode ${JSON.stringify(options.mode)} is not supported here (only "on": the other tools stay declared)`);
  }
  const budget = options.inlineBudget ?? 3000;
  if (typeof budget !== "number" || !(budget >= 0)) throw new TypeError(`createCodemodeExtension: inlineBudget must be a number >= 0, got ${JSON.stringify(options.inlineBudget)}`);
  return (pi: ExtensionAPI) => {
    const tool = {
      name: CODEMODE_TOOL_NAME,
      label: CODEMODE_TOOL_NAME,
      description:
        "Run a JavaScript script that calls tools; only its output comes back to you. The script is the body of an async " +
        "function in a sandbox without Node APIs, files, network or timers: use top-level await and return. " +
        "Globals: tools.<name>(args) resolves to the tool's text output and rejects with its error (names with other characters " +
        "than letters, digits, _ and $ use _ instead); text(value) and return add output; console.log(...) lines follow in a " +
        "<console_output> block; exit() ends the script; ALL_TOOLS lists every callable tool as {name, description}; " +
        "searchTools(query, {limit}) ranks them. A first line `// @options: {\"timeout_ms\": 60000, \"max_output_tokens\": 2000}` " +
        "sets a deadline and the output budget. Tool calls are real and are not undone when the script fails.",
      promptSnippet: "Run a JavaScript script that calls other tools and returns only what matters",
      parameters: Type.Object({ code: Type.String({ description: "JavaScript source (not JSON, not a code fence)" }) }),
      async execute(_id: string, params: { code?: unknown }, signal: AbortSignal | undefined, _onUpdate: unknown, ctx: any) {
        const code = params?.code;
        if (typeof code !== "string" || !code.trim()) throw new Error("codemode needs code (JavaScript source, a non-empty string)");
        const callable = callableTools(pi, Array.isArray(ctx?.tools) ? ctx.tools : []);
        const callTool = async (t: CallableTool, args: unknown, callSignal: AbortSignal) => {
          const outcome =
            t.via === "direct"
              ? await ctx.executeTool(t.name, args, { signal: callSignal })
              : await ctx.executeTool("mcp", { action: "call", tool: t.name, arguments: args ?? {} }, { signal: callSignal });
          return { text: textOf(outcome?.result?.content), isError: !!outcome?.isError };
        };
        try {
          const text = await runScript(code, callable, callTool, signal);
          return { content: [{ type: "text" as const, text }], details: undefined };
        } catch (e) {
          if (e instanceof ScriptError) throw new Error(e.message);
          throw e;
        }
      },
    };
    pi.registerTool(tool as unknown as Parameters<ExtensionAPI["registerTool"]>[0]);
  };
}
