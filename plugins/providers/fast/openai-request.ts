/**
 * The chat-completions request pi-ai 1.6's `api/openai-completions` module and the `openai` SDK
 * would send, built without loading either: the options its streamSimple derives (the output
 * limit fitted into the context window), its compatibility flags per provider / URL, its message
 * and tool conversion (pi-ai's own transcript, transformMessages, sanitizeSurrogates and token
 * estimate, which load no SDK, are used for the shared steps), the SDK's URL and headers. The
 * direct path (direct.ts) sends it; direct.test.ts checks URL, headers and JSON body against
 * what pi-ai 1.6's module sends, for a table of models, options and contexts.
 *
 * Only the cases the direct path serves are built here (`directOpenAIApplies`): an API key in
 * the options, a plain http(s) base URL, and none of the providers whose requests pi-ai
 * special-cases (GitHub Copilot's dynamic headers, Cloudflare's URL templates and gateway auth),
 * nor the SDK's environment settings (OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_LOG), nor what
 * pi-ai sends only for some models (sampling parameters, thinking budgets, chat-template values,
 * constrained-sampling tools, system messages mid-conversation).
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
  /** pi-ai 1.6's transcript: `Context` to a message list led by a system message carrying prompt and tools. */
  normalizeContext(context: Json): { messages: Json[] };
  /** All system messages folded into one leading system message. */
  collapseSystemMessages(context: { messages: Json[] }): { messages: Json[] };
  /** The tools declared by a transcript's system messages. */
  getCurrentTools(messages: Json[]): Json[];
  /** The text of a (leading) system message. */
  getSystemMessageText(message: Json): string;
  /** pi-ai's estimate of a transcript's size in tokens. */
  estimateContextTokens(context: { messages: Json[] }): { tokens: number };
  /** pi-ai's short hash of long tool-call ids. */
  shortHash(text: string): string;
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
export function directOpenAIApplies(model: Model<Api>, options: Json, context?: Json): boolean {
  if (typeof options?.apiKey !== "string" || options.apiKey === "") return false;
  if (options.client !== undefined || options.fetch !== undefined || options.env !== undefined || (options.transport !== undefined && options.transport !== "sse")) return false;
  if (model.provider === "github-copilot" || model.provider === "cloudflare-workers-ai" || model.provider === "cloudflare-ai-gateway") return false;
  if (typeof model.baseUrl !== "string" || !/^https?:\/\//i.test(model.baseUrl) || /[{?#]/.test(model.baseUrl)) return false;
  if (SDK_ENV.some((k) => process.env[k] !== undefined)) return false;
  if (options.timeoutMs !== undefined && !(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0)) return false;
  // What pi-ai sends only for some models: sampling parameters, thinking budgets and chat
  // template values, grammar and strict JSON-schema tools, system messages mid-conversation.
  const m = model as Json;
  if (m.samplingParams !== undefined || m.samplingParamsByThinkingLevel !== undefined || options.samplingParams !== undefined) return false;
  const compat = resolveCompat(m);
  if (compat.supportsMidConvoSystemMessages || compat.supportsOpenAIGrammarTools || compat.supportsThinkingTokenBudget || compat.thinkingTokenBudgetField) return false;
  if (compat.thinkingFormat === "chat-template" || compat.thinkingFormat === "baseten") return false;
  if (context && ((context.tools ?? []) as Json[]).some((t) => t?.constrainedSampling !== undefined)) return false;
  if (context && ((context.messages ?? []) as Json[]).some((msg) => msg?.role === "system")) return false;
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

/**
 * pi-ai 1.6's output limit: the requested (else the model's) maxTokens, fitted into the context
 * window after the estimated input and a margin for the provider counting the input higher (a
 * fixed 4096 tokens or 15% of the input, whichever is more; only the fixed margin when the 15%
 * would leave less than 32768 tokens of output, then at most 32768).
 */
function fitMaxTokens(model: Json, transcript: { messages: Json[] }, maxTokens: number, parts: RequestParts): number {
  if (!(model.contextWindow > 0)) return Math.max(1, maxTokens);
  const input = parts.estimateContextTokens(transcript).tokens;
  let room = model.contextWindow - input - Math.max(4096, Math.ceil(input * 0.15));
  if (room < 32768) room = Math.min(32768, model.contextWindow - input - 4096);
  return Math.min(maxTokens, Math.max(1, room));
}

/** The stream options pi-ai's chat-completions streamSimple derives from the simple options. */
export function simpleToStreamOptions(model: Json, options: Json, transcript: { messages: Json[] }, parts: RequestParts): Json {
  const reasoning = options?.reasoning ? clampLevel(model, options.reasoning) : undefined;
  return {
    temperature: options?.temperature,
    maxTokens: fitMaxTokens(model, transcript, options?.maxTokens ?? model.maxTokens, parts),
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
  const zai = p === "zai" || p === "zai-coding-cn" || url.includes("api.z.ai") || url.includes("open.bigmodel.cn");
  const together = p === "together" || url.includes("api.together.ai") || url.includes("api.together.xyz");
  const moonshot = p === "moonshotai" || p === "moonshotai-cn" || url.includes("api.moonshot.");
  const openRouter = p === "openrouter" || url.includes("openrouter.ai");
  const cfWorkers = p === "cloudflare-workers-ai" || url.includes("api.cloudflare.com");
  const cfGateway = p === "cloudflare-ai-gateway" || url.includes("gateway.ai.cloudflare.com");
  const nvidia = p === "nvidia" || url.includes("integrate.api.nvidia.com");
  const antLing = p === "ant-ling" || url.includes("api.ant-ling.com");
  const cerebras = p === "cerebras" || url.includes("cerebras.ai");
  const deepseek = p === "deepseek" || url.toLowerCase().includes("deepseek.com");
  const grok = p === "xai" || url.includes("api.x.ai");
  const chutes = url.includes("chutes.ai");
  const nonStandard = nvidia || cerebras || grok || together || chutes || deepseek || zai || moonshot || p === "opencode" || url.includes("opencode.ai") || cfWorkers || cfGateway || antLing;
  const maxTokensField = chutes || deepseek || moonshot || cfGateway || together || nvidia || antLing || zai;
  return {
    supportsStore: !nonStandard,
    // The developer role only on OpenAI's own API; every host takes system.
    supportsDeveloperRole: p === "openai" || url.includes("api.openai.com"),
    supportsReasoningEffort: !grok && !zai && !moonshot && !together && !cfGateway && !nvidia && !antLing,
    supportsUsageInStreaming: true,
    maxTokensField: maxTokensField ? "max_tokens" : "max_completion_tokens",
    requiresToolResultName: false,
    requiresAssistantAfterToolResult: false,
    requiresNonNullAssistantContent: false,
    requiresToolsWithToolHistory: false,
    requiresThinkingAsText: false,
    requiresReasoningContentOnAssistantMessages: deepseek,
    thinkingFormat: deepseek ? "deepseek" : zai ? "zai" : together ? "together" : antLing ? "ant-ling" : openRouter ? "openrouter" : "openai",
    zaiToolStream: false,
    supportsThinkingTokenBudget: false,
    thinkingTokenBudgetField: undefined,
    supportsStrictMode: false,
    supportsOpenAIGrammarTools: false,
    supportsMidConvoSystemMessages: false,
    cacheControlFormat: p === "openrouter" && model.id.startsWith("anthropic/") ? "anthropic" : undefined,
    sendSessionAffinityHeaders: openRouter,
    sessionAffinityFormat: openRouter ? "openrouter" : "openai",
    supportsLongCacheRetention: !(together || cfWorkers || cfGateway || nvidia || antLing),
    promptCacheKeyMode: undefined,
    vllmPriority: undefined,
  };
}

/** pi-ai's compat: the model's own `compat` fields over the detected ones. */
export function resolveCompat(model: Json): Json {
  const detected = detectCompat(model);
  const c = model.compat;
  if (!c) return detected;
  const out: Json = {};
  for (const k of Object.keys(detected)) out[k] = c[k] ?? detected[k];
  return out;
}

// ---- messages and tools ------------------------------------------------------------------------

const hasToolHistory = (messages: Json[]) =>
  messages.some((m) => m.role === "toolResult" || (m.role === "assistant" && m.content.some((b: Json) => b.type === "toolCall")));

const imagePart = (b: Json) => ({ type: "image_url", image_url: { url: `data:${b.mimeType};base64,${b.data}` } });

const REASONING_FIELDS = ["reasoning", "reasoning_content", "reasoning_text"];

/** A reasoning detail as OpenRouter streams them and pi-ai replays them (`reasoning_details` entries). */
export function isReasoningDetail(d: Json): boolean {
  if (typeof d !== "object" || d === null || Array.isArray(d)) return false;
  if (!(d.id === undefined || d.id === null || typeof d.id === "string")) return false;
  if (!(d.format === undefined || typeof d.format === "string") || !(d.index === undefined || typeof d.index === "number")) return false;
  if (d.type === "reasoning.summary") return typeof d.summary === "string";
  if (d.type === "reasoning.encrypted") return typeof d.data === "string";
  if (d.type === "reasoning.text") return typeof d.text === "string" && (d.signature === undefined || d.signature === null || typeof d.signature === "string");
  return false;
}

function parseJson(text: string | undefined): Json {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A thinking block's signature holding a list of reasoning details. */
function signedDetails(signature: string | undefined): Json[] | undefined {
  const v = parseJson(signature);
  return Array.isArray(v) && v.length > 0 && v.every(isReasoningDetail) ? v : undefined;
}

/** A tool call's signature holding one encrypted reasoning detail (older sessions). */
function toolCallDetail(signature: string | undefined): Json {
  const v = parseJson(signature);
  return isReasoningDetail(v) && v.type === "reasoning.encrypted" && typeof v.id === "string" && v.id.length > 0 && v.data.length > 0 ? v : undefined;
}

/** Tool-call ids as chat completions take them (at most 40 characters of [a-zA-Z0-9_-] for `call|item` ids). */
function toolCallIdNormalizer(model: Json, parts: RequestParts): (id: string) => string {
  return (id) => {
    const bar = id.indexOf("|");
    if (bar !== -1) {
      const call = id.slice(0, bar).replace(/[^a-zA-Z0-9_-]/g, "_");
      const item = id.slice(bar + 1).replace(/[^a-zA-Z0-9_-]/g, "_");
      const joined = item.length > 0 ? `${call}_${item}` : call;
      if (joined.length <= 40) return joined;
      const hash = parts.shortHash(id).slice(0, 8);
      return `${call.slice(0, Math.max(1, 40 - hash.length - 1))}_${hash}`;
    }
    if (model.provider === "openai") return id.length > 40 ? id.slice(0, 40) : id;
    return id;
  };
}

/** A user message's parts: empty text parts dropped. */
function userContent(content: Json[], clean: (text: string) => string): Json[] {
  const out: Json[] = [];
  for (const b of content) {
    if (b.type !== "text") out.push(imagePart(b));
    else if (b.text.length > 0) out.push({ type: "text", text: clean(b.text) });
  }
  return out;
}

/** An assistant message as chat completions takes it; undefined when it carries neither content nor tool calls. */
function assistantMessage(msg: Json, model: Json, compat: Json, clean: (text: string) => string): Json | undefined {
  const am: Json = { role: "assistant", content: compat.requiresAssistantAfterToolResult || compat.requiresNonNullAssistantContent ? "" : null };
  // One pass over the blocks: the non-blank text parts, the non-blank thinking blocks, the tool
  // calls, and the reasoning details (the first thinking signature holding a list of them, else
  // the tool calls' encrypted ones).
  const textParts: Json[] = [];
  let text = "";
  const thinking: Json[] = [];
  let fromThinking: Json[] | undefined;
  const calls: Json[] = [];
  const fromCalls: Json[] = [];
  for (const b of msg.content) {
    if (b.type === "text") {
      if (b.text.trim().length > 0) {
        const t = clean(b.text);
        textParts.push({ type: "text", text: t });
        text += t;
      }
    } else if (b.type === "thinking") {
      fromThinking ??= signedDetails(b.thinkingSignature);
      if (b.thinking.trim().length > 0) thinking.push(b);
    } else if (b.type === "toolCall") {
      calls.push(b);
      const d = toolCallDetail(b.thoughtSignature);
      if (d !== undefined) fromCalls.push(d);
    }
  }
  const details = fromThinking ?? (fromCalls.length > 0 ? fromCalls : undefined);
  if (thinking.length > 0) {
    if (compat.requiresThinkingAsText) am.content = [{ type: "text", text: thinking.map((b: Json) => clean(b.thinking)).join("\n\n") }, ...textParts];
    else {
      if (text.length > 0) am.content = text;
      if (!details) {
        let sig = thinking[0].thinkingSignature;
        if (model.provider === "opencode-go" && sig === "reasoning") sig = "reasoning_content";
        if (sig && REASONING_FIELDS.includes(sig)) am[sig] = thinking.map((b: Json) => b.thinking).join("\n");
      }
    }
  } else if (text.length > 0) am.content = text;
  if (calls.length > 0) {
    const toolCalls: Json[] = [];
    for (const tc of calls) toolCalls.push({ id: tc.id, type: "function", function: { name: tc.name, arguments: JSON.stringify(tc.arguments) } });
    am.tool_calls = toolCalls;
  }
  if (details) am.reasoning_details = details;
  if (compat.requiresReasoningContentOnAssistantMessages && model.reasoning && am.reasoning_content === undefined) am.reasoning_content = "";
  const c = am.content;
  if (!(c !== null && c !== undefined && c.length > 0) && !am.tool_calls) return undefined;
  return am;
}

/** A tool result as a `tool` message; its images go to `images` when the model takes images. */
function toolMessage(tm: Json, model: Json, compat: Json, clean: (text: string) => string, images: Json[]): Json {
  const texts: Json[] = [];
  let hasImages = false;
  for (const b of tm.content) {
    if (b.type === "text") texts.push(b.text);
    else if (b.type === "image") hasImages = true;
  }
  const text = texts.join("\n");
  const shown = text.trim().length > 0 ? text : hasImages ? "(see attached image)" : "(no tool output)";
  const tr: Json = { role: "tool", content: clean(shown), tool_call_id: tm.toolCallId };
  if (compat.requiresToolResultName && tm.toolName) tr.name = tm.toolName;
  if (hasImages && model.input.includes("image")) {
    for (const b of tm.content) if (b.type === "image") images.push(imagePart(b));
  }
  return tr;
}

/**
 * `transcript`: collapsed (one leading system message at most). This runs over the whole history
 * for every request, so each kind of message has a function of its own with one loop over its
 * blocks: one function with a filter/map chain per block kind took about 2.5 times as long per
 * request, and V8's optimizing compile of it, some dozens of turns into a session, was the
 * largest of the session (about 5 MB of compiler memory on a worker thread).
 */
function convertMessages(model: Json, transcript: { messages: Json[] }, compat: Json, parts: RequestParts): Json[] {
  const clean = parts.sanitizeSurrogates;
  const out: Json[] = [];
  const msgs = parts.transformMessages(transcript.messages, model, toolCallIdNormalizer(model, parts));
  const instructionRole = model.reasoning && compat.supportsDeveloperRole ? "developer" : "system";
  const bridge = { role: "assistant", content: "I have processed the tool results." };
  let lastRole: string | null = null;
  for (let i = 0; i < msgs.length; i++) {
    const msg = msgs[i];
    if (compat.requiresAssistantAfterToolResult && lastRole === "toolResult" && msg.role === "user") out.push({ ...bridge });
    if (msg.role === "system") {
      const text = parts.getSystemMessageText(msg);
      if (text.length > 0) out.push({ role: instructionRole, content: clean(text) });
    } else if (msg.role === "user") {
      if (typeof msg.content === "string") out.push({ role: "user", content: clean(msg.content) });
      else {
        const content = userContent(msg.content, clean);
        if (content.length === 0) continue;
        out.push({ role: "user", content });
      }
    } else if (msg.role === "assistant") {
      const am = assistantMessage(msg, model, compat, clean);
      if (am === undefined) continue;
      out.push(am);
    } else if (msg.role === "toolResult") {
      const images: Json[] = [];
      let j = i;
      for (; j < msgs.length && msgs[j].role === "toolResult"; j++) out.push(toolMessage(msgs[j], model, compat, clean, images));
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

/** Tools without constrained sampling: `strict: false` only where the model is marked as taking strict mode. */
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
    if ((m.role === "user" || m.role === "assistant" || m.role === "tool") && markText(m, cc)) return;
  }
}

// ---- the request -------------------------------------------------------------------------------

/** `transcript`: collapsed (one leading system message at most, carrying the prompt and tools). */
function buildParams(model: Json, transcript: { messages: Json[] }, options: Json, compat: Json, retention: string, parts: RequestParts): Json {
  const messages = convertMessages(model, transcript, compat, parts);
  const tools = parts.getCurrentTools(transcript.messages.filter((m) => m.role === "system"));
  const cc =
    compat.cacheControlFormat !== "anthropic" || retention === "none"
      ? undefined
      : { type: "ephemeral", ...(retention === "long" && compat.supportsLongCacheRetention ? { ttl: "1h" } : {}) };
  const keyMode = compat.promptCacheKeyMode ?? "auto";
  const cacheKey = keyMode === "enabled" || (keyMode === "auto" && (model.baseUrl.includes("api.openai.com") || (retention === "long" && compat.supportsLongCacheRetention)));
  const sessionId: string | undefined = options?.sessionId;
  const params: Json = {
    model: model.id,
    messages,
    stream: true,
    // OpenAI takes a key of at most 64 characters (code points).
    prompt_cache_key: retention !== "none" && cacheKey && sessionId !== undefined ? Array.from(sessionId).slice(0, 64).join("") : undefined,
    prompt_cache_retention: retention === "long" && compat.supportsLongCacheRetention ? "24h" : undefined,
  };
  if (compat.supportsUsageInStreaming !== false) params.stream_options = { include_usage: true };
  if (compat.supportsStore) params.store = false;
  if (options?.maxTokens) {
    if (compat.maxTokensField === "max_tokens") params.max_tokens = options.maxTokens;
    else params.max_completion_tokens = options.maxTokens;
  }
  if (options?.temperature !== undefined) params.temperature = options.temperature;
  if (tools.length > 0) {
    params.tools = convertTools(tools, compat);
    if (compat.zaiToolStream) params.tool_stream = true;
  } else if (compat.requiresToolsWithToolHistory && hasToolHistory(transcript.messages)) params.tools = [];
  if (cc) applyCacheControl(messages, params.tools, cc);
  if (options?.toolChoice) params.tool_choice = options.toolChoice;
  if (compat.vllmPriority !== undefined) params.priority = compat.vllmPriority;
  const effort: string | undefined = options?.reasoningEffort;
  const map = model.thinkingLevelMap;
  const mapped = (level: string) => map?.[level] ?? level;
  const fmt = compat.thinkingFormat;
  if (!model.reasoning) {
    // no thinking fields
  } else if (fmt === "zai") {
    params.thinking = effort ? { type: "enabled", clear_thinking: false } : { type: "disabled" };
    if (effort && compat.supportsReasoningEffort) {
      const e = map?.[effort] === undefined ? effort : map[effort];
      if (typeof e === "string") params.reasoning_effort = e;
    }
  } else if (fmt === "qwen") {
    params.enable_thinking = !!effort;
    if (effort && compat.supportsReasoningEffort && typeof mapped(effort) === "string") params.reasoning_effort = mapped(effort);
  } else if (fmt === "qwen-chat-template") params.chat_template_kwargs = { enable_thinking: !!effort, preserve_thinking: true };
  else if (fmt === "deepseek") {
    if (effort) params.thinking = { type: "enabled" };
    else if (map?.off !== null) params.thinking = { type: "disabled" };
    if (effort && compat.supportsReasoningEffort) params.reasoning_effort = mapped(effort);
  } else if (fmt === "openrouter") {
    if (effort) params.reasoning = { effort: mapped(effort) };
    else if (map?.off !== null) params.reasoning = { effort: map?.off ?? "none" };
  } else if (fmt === "ant-ling") {
    if (effort && typeof map?.[effort] === "string") params.reasoning = { effort: map[effort] };
  } else if (fmt === "together") {
    params.reasoning = { enabled: !!effort };
    if (effort && compat.supportsReasoningEffort) params.reasoning_effort = mapped(effort);
  } else if (fmt === "string-thinking") {
    if (effort) params.thinking = mapped(effort);
    else if (map?.off !== null) params.thinking = map?.off ?? "none";
  } else if (effort && compat.supportsReasoningEffort) params.reasoning_effort = mapped(effort);
  else if (!effort && compat.supportsReasoningEffort && typeof map?.off === "string") params.reasoning_effort = map.off;
  if (model.compat?.openRouterRouting) params.provider = model.compat.openRouterRouting;
  if (model.compat?.vercelGatewayRouting) {
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

/** A `Context` as pi-ai 1.6's chat-completions module reads it: one leading system message with the prompt and tools. */
export function transcriptOf(context: Json, parts: RequestParts): { messages: Json[] } {
  return parts.collapseSystemMessages(parts.normalizeContext(context));
}

/** The request pi-ai + the SDK would make for this call (payload before onPayload). */
/** The request for `transcript` (a `Context` normalized and collapsed: see transcriptOf). */
export function buildOpenAIRequest(model: Model<Api>, transcript: { messages: Json[] }, streamOptions: Json, parts: RequestParts): OpenAIRequest {
  const m = model as Json;
  const compat = resolveCompat(m);
  const retention = streamOptions.cacheRetention || (process.env.PI_CACHE_RETENTION === "long" ? "long" : "short");
  const sessionId = retention === "none" ? undefined : streamOptions.sessionId;
  // pi-ai 1.6: the identity's User-Agent and attribution, below the model's and the call's headers.
  const modelHeaders: Record<string, unknown> = { ...parts.identityHeaders(model, streamOptions.identity), ...m.headers };
  if (sessionId && compat.sendSessionAffinityHeaders) {
    if (compat.sessionAffinityFormat === "openrouter") modelHeaders["x-session-id"] = sessionId;
    else {
      if (compat.sessionAffinityFormat === "openai") modelHeaders.session_id = sessionId;
      modelHeaders["x-client-request-id"] = sessionId;
      modelHeaders["x-session-affinity"] = sessionId;
    }
  }
  if (streamOptions.headers) Object.assign(modelHeaders, streamOptions.headers);
  const params = buildParams(m, transcript, streamOptions, compat, retention, parts);
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
