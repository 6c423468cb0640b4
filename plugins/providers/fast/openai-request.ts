/**
 * The chat-completions request pi-ai 0.73.1 (`streamSimpleOpenAICompletions`) and the `openai`
 * SDK would send, built without loading either: the options pi-ai derives, its compatibility
 * flags per provider / URL, its message and tool conversion (pi-ai's own transformMessages and
 * sanitizeSurrogates, which load no SDK, are used for the shared steps), the SDK's URL and
 * headers. The direct path (direct.ts) sends it; direct.test.ts checks URL, headers and JSON
 * body against what pi-ai and the SDK send, for a matrix of models, options and contexts.
 *
 * Only the cases the direct path serves are built here (`directOpenAIApplies`): an API key in
 * the options, a plain http(s) base URL, and none of the providers whose requests pi-ai
 * special-cases (GitHub Copilot's dynamic headers, Cloudflare's URL templates and gateway auth),
 * nor the SDK's environment settings (OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_LOG).
 */
import type { Model, Api } from "@mariozechner/pi-ai";

/* eslint-disable @typescript-eslint/no-explicit-any -- pi-ai's context / model shapes, handled as pi-ai does */
type Json = any;

/** pi-ai's helpers that load no SDK (pi-ai-parts.ts). */
export interface RequestParts {
  transformMessages(messages: Json[], model: Model<Api>, normalizeToolCallId: (id: string) => string): Json[];
  sanitizeSurrogates(text: string): string;
  /** pi-ai 1.6's default headers of a client identity (its `User-Agent`, provider attribution). */
  identityHeaders(target: Model<Api>, identity: unknown): Record<string, string>;
  /** The `openai` package's version (its x-stainless headers). */
  sdkVersion: string;
}

export interface OpenAIRequest {
  url: string;
  /** Header names as the SDK spells them; values as sent. */
  headers: Record<string, string>;
  /** The payload (before onPayload). */
  params: Record<string, unknown>;
  /** What the SDK would get: its timeout (ms) and retries. */
  timeoutMs: number;
}

const SDK_ENV = ["OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_LOG"];

/** Whether the direct path builds this request itself (else pi-ai and the SDK do). */
export function directOpenAIApplies(model: Model<Api>, options: Json): boolean {
  if (typeof options?.apiKey !== "string" || options.apiKey === "") return false;
  if (options.client !== undefined || options.transport !== undefined && options.transport !== "sse") return false;
  if (model.provider === "github-copilot" || model.provider === "cloudflare-workers-ai" || model.provider === "cloudflare-ai-gateway") return false;
  if (typeof model.baseUrl !== "string" || !/^https?:\/\//i.test(model.baseUrl) || /[{?#]/.test(model.baseUrl)) return false;
  if (SDK_ENV.some((k) => process.env[k] !== undefined)) return false;
  if (options.timeoutMs !== undefined && !(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0)) return false;
  return true;
}

// ---- options (pi-ai's streamSimple → stream options) -------------------------------------------

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** pi-ai's levels of a model: a level mapped to null is not offered; xhigh and max only where mapped. */
function supportedLevels(model: Json): string[] {
  if (!model.reasoning) return ["off"];
  return LEVELS.filter((level) => {
    const mapped = model.thinkingLevelMap?.[level];
    if (mapped === null) return false;
    return (level !== "xhigh" && level !== "max") || mapped !== undefined;
  });
}

/** pi-ai's clamp: the level itself, else the next higher one it takes, else the next lower. */
function clampLevel(model: Json, level: string): string {
  const available = supportedLevels(model);
  if (available.includes(level)) return level;
  const at = LEVELS.indexOf(level);
  if (at === -1) return available[0] ?? "off";
  for (let i = at; i < LEVELS.length; i++) if (available.includes(LEVELS[i]!)) return LEVELS[i]!;
  for (let i = at - 1; i >= 0; i--) if (available.includes(LEVELS[i]!)) return LEVELS[i]!;
  return available[0] ?? "off";
}

/** The stream options pi-ai's streamSimpleOpenAICompletions derives from the simple options. */
export function simpleToStreamOptions(model: Json, options: Json): Json {
  const reasoning = options?.reasoning ? clampLevel(model, options.reasoning) : undefined;
  return {
    temperature: options?.temperature,
    maxTokens: options?.maxTokens ?? (model.maxTokens > 0 ? Math.min(model.maxTokens, 32000) : undefined),
    signal: options?.signal,
    apiKey: options?.apiKey,
    cacheRetention: options?.cacheRetention,
    sessionId: options?.sessionId,
    headers: options?.headers,
    identity: options?.identity,
    onPayload: options?.onPayload,
    onResponse: options?.onResponse,
    timeoutMs: options?.timeoutMs,
    maxRetries: options?.maxRetries,
    reasoningEffort: reasoning === "off" ? undefined : reasoning,
    toolChoice: options?.toolChoice,
  };
}

// ---- compatibility flags -----------------------------------------------------------------------

function detectCompat(model: Json): Json {
  const p = model.provider;
  const url: string = model.baseUrl;
  const zai = p === "zai" || url.includes("api.z.ai");
  const moonshot = p === "moonshotai" || p === "moonshotai-cn" || url.includes("api.moonshot.");
  const cfWorkers = p === "cloudflare-workers-ai" || url.includes("api.cloudflare.com");
  const cfGateway = p === "cloudflare-ai-gateway" || url.includes("gateway.ai.cloudflare.com");
  const grok = p === "xai" || url.includes("api.x.ai");
  const deepseek = p === "deepseek" || url.includes("deepseek.com");
  const nonStandard =
    p === "cerebras" || url.includes("cerebras.ai") || grok || url.includes("chutes.ai") || url.includes("deepseek.com") || zai || moonshot || p === "opencode" || url.includes("opencode.ai") || cfWorkers || cfGateway;
  return {
    supportsStore: !nonStandard,
    supportsDeveloperRole: !nonStandard,
    supportsReasoningEffort: !grok && !zai && !moonshot && !cfGateway,
    supportsUsageInStreaming: true,
    maxTokensField: url.includes("chutes.ai") || moonshot || cfGateway ? "max_tokens" : "max_completion_tokens",
    requiresToolResultName: false,
    requiresAssistantAfterToolResult: false,
    requiresThinkingAsText: false,
    requiresReasoningContentOnAssistantMessages: deepseek,
    thinkingFormat: deepseek ? "deepseek" : zai ? "zai" : p === "openrouter" || url.includes("openrouter.ai") ? "openrouter" : "openai",
    openRouterRouting: {},
    vercelGatewayRouting: {},
    zaiToolStream: false,
    supportsStrictMode: !moonshot && !cfGateway,
    cacheControlFormat: p === "openrouter" && model.id.startsWith("anthropic/") ? "anthropic" : undefined,
    sendSessionAffinityHeaders: false,
    supportsLongCacheRetention: !(cfWorkers || cfGateway),
  };
}

/** pi-ai's compat: the model's own `compat` fields over the detected ones. */
export function resolveCompat(model: Json): Json {
  const detected = detectCompat(model);
  const c = model.compat;
  if (!c) return detected;
  const out: Json = {};
  for (const k of Object.keys(detected)) out[k] = c[k] ?? detected[k];
  // pi-ai takes the model's openRouterRouting or an empty object, never the detected one.
  out.openRouterRouting = c.openRouterRouting ?? {};
  return out;
}

// ---- messages and tools ------------------------------------------------------------------------

const hasToolHistory = (messages: Json[]) =>
  messages.some((m) => m.role === "toolResult" || (m.role === "assistant" && m.content.some((b: Json) => b.type === "toolCall")));

const imagePart = (b: Json) => ({ type: "image_url", image_url: { url: `data:${b.mimeType};base64,${b.data}` } });

function convertMessages(model: Json, context: Json, compat: Json, parts: RequestParts): Json[] {
  const clean = parts.sanitizeSurrogates;
  const out: Json[] = [];
  const normalizeId = (id: string) => {
    if (id.includes("|")) return id.split("|")[0]!.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 40);
    if (model.provider === "openai") return id.length > 40 ? id.slice(0, 40) : id;
    return id;
  };
  const msgs = parts.transformMessages(context.messages, model, normalizeId);
  if (context.systemPrompt) out.push({ role: model.reasoning && compat.supportsDeveloperRole ? "developer" : "system", content: clean(context.systemPrompt) });
  const bridge = { role: "assistant", content: "I have processed the tool results." };
  let lastRole: string | null = null;
  for (let i = 0; i < msgs.length; i++) {
    const msg = msgs[i];
    if (compat.requiresAssistantAfterToolResult && lastRole === "toolResult" && msg.role === "user") out.push({ ...bridge });
    if (msg.role === "user") {
      if (typeof msg.content === "string") out.push({ role: "user", content: clean(msg.content) });
      else {
        const content = msg.content.map((b: Json) => (b.type === "text" ? { type: "text", text: clean(b.text) } : imagePart(b)));
        if (content.length === 0) continue;
        out.push({ role: "user", content });
      }
    } else if (msg.role === "assistant") {
      const am: Json = { role: "assistant", content: compat.requiresAssistantAfterToolResult ? "" : null };
      const textParts = msg.content.filter((b: Json) => b.type === "text" && b.text.trim().length > 0).map((b: Json) => ({ type: "text", text: clean(b.text) }));
      const text = textParts.map((p: Json) => p.text).join("");
      const thinking = msg.content.filter((b: Json) => b.type === "thinking" && b.thinking.trim().length > 0);
      if (thinking.length > 0) {
        if (compat.requiresThinkingAsText) am.content = [{ type: "text", text: thinking.map((b: Json) => clean(b.thinking)).join("\n\n") }, ...textParts];
        else {
          if (text.length > 0) am.content = text;
          const sig = thinking[0].thinkingSignature;
          if (sig && sig.length > 0) am[sig] = thinking.map((b: Json) => b.thinking).join("\n");
        }
      } else if (text.length > 0) am.content = text;
      const calls = msg.content.filter((b: Json) => b.type === "toolCall");
      if (calls.length > 0) {
        am.tool_calls = calls.map((tc: Json) => ({ id: tc.id, type: "function", function: { name: tc.name, arguments: JSON.stringify(tc.arguments) } }));
        const details = calls
          .filter((tc: Json) => tc.thoughtSignature)
          .map((tc: Json) => {
            try {
              return JSON.parse(tc.thoughtSignature);
            } catch {
              return null;
            }
          })
          .filter(Boolean);
        if (details.length > 0) am.reasoning_details = details;
      }
      if (compat.requiresReasoningContentOnAssistantMessages && model.reasoning && am.reasoning_content === undefined) am.reasoning_content = "";
      const c = am.content;
      if (!(c !== null && c !== undefined && c.length > 0) && !am.tool_calls) continue;
      out.push(am);
    } else if (msg.role === "toolResult") {
      const images: Json[] = [];
      let j = i;
      for (; j < msgs.length && msgs[j].role === "toolResult"; j++) {
        const tm = msgs[j];
        const text = tm.content
          .filter((b: Json) => b.type === "text")
          .map((b: Json) => b.text)
          .join("\n");
        const tr: Json = { role: "tool", content: clean(text.length > 0 ? text : "(see attached image)"), tool_call_id: tm.toolCallId };
        if (compat.requiresToolResultName && tm.toolName) tr.name = tm.toolName;
        out.push(tr);
        if (tm.content.some((b: Json) => b.type === "image") && model.input.includes("image")) {
          for (const b of tm.content) if (b.type === "image") images.push(imagePart(b));
        }
      }
      i = j - 1;
      if (images.length > 0) {
        if (compat.requiresAssistantAfterToolResult) out.push({ ...bridge });
        out.push({ role: "user", content: [{ type: "text", text: "Attached image(s) from tool result:" }, ...images] });
        lastRole = "user";
      } else lastRole = "toolResult";
      continue;
    }
    lastRole = msg.role;
  }
  return out;
}

function convertTools(tools: Json[], compat: Json): Json[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters, ...(compat.supportsStrictMode !== false && { strict: false }) },
  }));
}

/** Mark the text part of `message` (a string content becomes one text part); false when it has none. */
function markText(message: Json, cc: Json): boolean {
  const content = message.content;
  if (typeof content === "string") {
    if (content.length === 0) return false;
    message.content = [{ type: "text", text: content, cache_control: cc }];
    return true;
  }
  if (!Array.isArray(content)) return false;
  for (let i = content.length - 1; i >= 0; i--) {
    if (content[i]?.type === "text") {
      content[i].cache_control = cc;
      return true;
    }
  }
  return false;
}

function applyCacheControl(messages: Json[], tools: Json[] | undefined, cc: Json): void {
  const instruction = messages.find((m) => m.role === "system" || m.role === "developer");
  if (instruction) markText(instruction, cc);
  if (tools && tools.length > 0) tools[tools.length - 1].cache_control = cc;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if ((m.role === "user" || m.role === "assistant") && markText(m, cc)) return;
  }
}

// ---- the request -------------------------------------------------------------------------------

function buildParams(model: Json, context: Json, options: Json, compat: Json, retention: string, parts: RequestParts): Json {
  const messages = convertMessages(model, context, compat, parts);
  const cc =
    compat.cacheControlFormat !== "anthropic" || retention === "none"
      ? undefined
      : { type: "ephemeral", ...(retention === "long" && compat.supportsLongCacheRetention ? { ttl: "1h" } : {}) };
  const longCache = retention === "long" && compat.supportsLongCacheRetention;
  const params: Json = {
    model: model.id,
    messages,
    stream: true,
    prompt_cache_key: (model.baseUrl.includes("api.openai.com") && retention !== "none") || longCache ? options?.sessionId : undefined,
    prompt_cache_retention: longCache ? "24h" : undefined,
  };
  if (compat.supportsUsageInStreaming !== false) params.stream_options = { include_usage: true };
  if (compat.supportsStore) params.store = false;
  if (options?.maxTokens) {
    if (compat.maxTokensField === "max_tokens") params.max_tokens = options.maxTokens;
    else params.max_completion_tokens = options.maxTokens;
  }
  if (options?.temperature !== undefined) params.temperature = options.temperature;
  if (context.tools && context.tools.length > 0) {
    params.tools = convertTools(context.tools, compat);
    if (compat.zaiToolStream) params.tool_stream = true;
  } else if (hasToolHistory(context.messages)) params.tools = [];
  if (cc) applyCacheControl(messages, params.tools, cc);
  if (options?.toolChoice) params.tool_choice = options.toolChoice;
  const effort = options?.reasoningEffort;
  const mapped = (level: string) => model.thinkingLevelMap?.[level] ?? level;
  const fmt = compat.thinkingFormat;
  if ((fmt === "zai" || fmt === "qwen") && model.reasoning) params.enable_thinking = !!effort;
  else if (fmt === "qwen-chat-template" && model.reasoning) params.chat_template_kwargs = { enable_thinking: !!effort, preserve_thinking: true };
  else if (fmt === "deepseek" && model.reasoning) {
    params.thinking = { type: effort ? "enabled" : "disabled" };
    if (effort) params.reasoning_effort = mapped(effort);
  } else if (fmt === "openrouter" && model.reasoning) {
    if (effort) params.reasoning = { effort: mapped(effort) };
    else if (model.thinkingLevelMap?.off !== null) params.reasoning = { effort: model.thinkingLevelMap?.off ?? "none" };
  } else if (effort && model.reasoning && compat.supportsReasoningEffort) params.reasoning_effort = mapped(effort);
  else if (!effort && model.reasoning && compat.supportsReasoningEffort) {
    const off = model.thinkingLevelMap?.off;
    if (typeof off === "string") params.reasoning_effort = off;
  }
  if (model.baseUrl.includes("openrouter.ai") && model.compat?.openRouterRouting) params.provider = model.compat.openRouterRouting;
  if (model.baseUrl.includes("ai-gateway.vercel.sh") && model.compat?.vercelGatewayRouting) {
    const r = model.compat.vercelGatewayRouting;
    if (r.only || r.order) params.providerOptions = { gateway: { ...(r.only ? { only: r.only } : {}), ...(r.order ? { order: r.order } : {}) } };
  }
  return params;
}

function normalizeOs(platform: string): string {
  const p = platform.toLowerCase();
  if (p.includes("ios")) return "iOS";
  const known: Record<string, string> = { android: "Android", darwin: "MacOS", win32: "Windows", freebsd: "FreeBSD", openbsd: "OpenBSD", linux: "Linux" };
  return known[p] ?? (p ? `Other:${p}` : "Unknown");
}

function normalizeArch(arch: string): string {
  if (arch === "x32") return "x32";
  if (arch === "x86_64" || arch === "x64") return "x64";
  if (arch === "arm") return "arm";
  if (arch === "aarch64" || arch === "arm64") return "arm64";
  return arch ? `other:${arch}` : "unknown";
}

/**
 * Merge header sets as the SDK does: names are case-insensitive, a later set replaces a name
 * (keeping the later spelling), null removes it, undefined is skipped.
 */
function mergeHeaders(sets: (Record<string, unknown> | undefined)[]): Record<string, string> {
  const out = new Map<string, [string, string]>();
  for (const set of sets) {
    for (const [name, value] of Object.entries(set ?? {})) {
      if (value === undefined) continue;
      const key = name.toLowerCase();
      if (value === null) out.delete(key);
      else out.set(key, [name, String(value)]);
    }
  }
  return Object.fromEntries([...out.values()]);
}

/** The request pi-ai + the SDK would make for this call (payload before onPayload). */
export function buildOpenAIRequest(model: Model<Api>, context: Json, streamOptions: Json, parts: RequestParts): OpenAIRequest {
  const m = model as Json;
  const compat = resolveCompat(m);
  const retention = streamOptions.cacheRetention || (process.env.PI_CACHE_RETENTION === "long" ? "long" : "short");
  const sessionId = retention === "none" ? undefined : streamOptions.sessionId;
  // pi-ai 1.6: the identity's User-Agent and attribution, below the model's and the call's headers.
  const modelHeaders: Record<string, unknown> = { ...parts.identityHeaders(model, streamOptions.identity), ...m.headers };
  if (sessionId && compat.sendSessionAffinityHeaders) {
    modelHeaders.session_id = sessionId;
    modelHeaders["x-client-request-id"] = sessionId;
    modelHeaders["x-session-affinity"] = sessionId;
  }
  if (streamOptions.headers) Object.assign(modelHeaders, streamOptions.headers);
  const params = buildParams(m, context, streamOptions, compat, retention, parts);
  const base: string = m.baseUrl;
  const url = new URL(base + (base.endsWith("/") ? "chat/completions" : "/chat/completions")).toString();
  const v = parts.sdkVersion;
  const timeout: number | undefined = streamOptions.timeoutMs;
  const headers = mergeHeaders([
    {
      Accept: "application/json",
      "User-Agent": `OpenAI/JS ${v}`,
      "X-Stainless-Retry-Count": "0",
      ...(timeout ? { "X-Stainless-Timeout": String(Math.trunc(timeout / 1000)) } : {}),
      "X-Stainless-Lang": "js",
      "X-Stainless-Package-Version": v,
      "X-Stainless-OS": normalizeOs(process.platform ?? "unknown"),
      "X-Stainless-Arch": normalizeArch(process.arch ?? "unknown"),
      "X-Stainless-Runtime": "node",
      "X-Stainless-Runtime-Version": process.version ?? "unknown",
    },
    { Authorization: `Bearer ${streamOptions.apiKey}` },
    modelHeaders,
    { "content-type": "application/json" },
  ]);
  return { url, headers, params, timeoutMs: timeout ?? 600_000 };
}
