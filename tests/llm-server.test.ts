import { describe, it, expect, jest, beforeAll, afterAll } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import type { AssistantMessage, AssistantMessageEvent, Context, Model, Tool } from "@mariozechner/pi-ai";
import { streamSimpleOpenAICompletions } from "@mariozechner/pi-ai/openai-completions";
import { streamSimpleAnthropic } from "@mariozechner/pi-ai/anthropic";
import { Type } from "typebox";
import { startLlmServer, writeScript, validateScript, type LlmServer, type Script } from "./fixtures/llm-server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const serverFile = join(here, "fixtures", "llm-server.mjs");

type ApiName = "openai-completions" | "anthropic-messages";
const APIS: ApiName[] = ["openai-completions", "anthropic-messages"];
const PATH_OF: Record<ApiName, string> = { "openai-completions": "/v1/chat/completions", "anthropic-messages": "/v1/messages" };

function modelFor(api: ApiName, url: string): Model<ApiName> {
  return {
    id: "mock-model",
    name: "Mock",
    api,
    provider: "mock",
    baseUrl: api === "openai-completions" ? `${url}/v1` : url,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 4096,
  };
}

const tools: Tool[] = [{ name: "bash", description: "run a command", parameters: Type.Object({ command: Type.String() }) }];

function userContext(text: string): Context {
  return { systemPrompt: "You are a test.", messages: [{ role: "user", content: text, timestamp: Date.now() }], tools };
}

async function run(api: ApiName, url: string, context: Context): Promise<{ events: AssistantMessageEvent[]; message: AssistantMessage }> {
  const options = { apiKey: "test", maxRetries: 0 };
  const s =
    api === "openai-completions"
      ? streamSimpleOpenAICompletions(modelFor(api, url) as Model<"openai-completions">, context, options)
      : streamSimpleAnthropic(modelFor(api, url) as Model<"anthropic-messages">, context, options);
  const events: AssistantMessageEvent[] = [];
  for await (const ev of s) events.push(ev);
  return { events, message: await s.result() };
}

const textOf = (m: AssistantMessage) =>
  m.content
    .filter((b): b is Extract<AssistantMessage["content"][number], { type: "text" }> => b.type === "text")
    .map((b) => b.text)
    .join("");
const count = (events: AssistantMessageEvent[], type: AssistantMessageEvent["type"]) => events.filter((e) => e.type === type).length;

let srv: LlmServer;
let tmp: string;

// The OpenAI SDK logs unparseable SSE lines with console.error, bound once per process; filter those
// two lines (the malformed-SSE test provokes them on purpose) and pass everything else through.
const originalConsoleError = console.error;
const sdkNoise = /^(Could not parse message into JSON:|From chunk:)/;
let consoleSpy: ReturnType<typeof jest.spyOn> | undefined;

beforeAll(async () => {
  consoleSpy = jest.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    if (typeof args[0] === "string" && sdkNoise.test(args[0])) return;
    originalConsoleError(...args);
  });
  tmp = mkdtempSync(join(tmpdir(), "llm-server-test-"));
  srv = await startLlmServer();
});
afterAll(async () => {
  consoleSpy?.mockRestore();
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});

function use(script: Script) {
  srv.setScript(script);
  srv.reset();
}

describe.each(APIS)("pi-ai %s client against the scripted server", (api) => {
  it("streams a text answer with plausible usage", async () => {
    use({ turns: [{ text: "Hello there, general Kenobi." }] });
    const { events, message } = await run(api, srv.url, userContext("hi"));
    expect(message.stopReason).toBe("stop");
    expect(textOf(message)).toBe("Hello there, general Kenobi.");
    expect(events[0].type).toBe("start");
    expect(count(events, "text_delta")).toBe(4); // one chunk per word by default
    expect(events[events.length - 1].type).toBe("done");
    expect(message.usage.input).toBeGreaterThan(10);
    expect(message.usage.output).toBe(Math.ceil("Hello there, general Kenobi.".length / 4));
    const st = srv.stats();
    expect(st.counts[PATH_OF[api]]).toBe(1);
    expect(st.requests[0].body.model).toBe("mock-model");
    expect(st.requests[0].body.stream).toBe(true);
    expect(st.requests[0].turn).toEqual({ by: "toolResults", index: 0 });
    // auth headers are not recorded
    const headerNames = Object.keys(st.requests[0].headers);
    expect(headerNames).not.toContain("authorization");
    expect(headerNames).not.toContain("x-api-key");
  });

  it("reports scripted usage including cache counts", async () => {
    use([{ text: "ok", usage: { input: 1000, output: 50, cacheRead: 200, cacheWrite: 30 } }]);
    const { message } = await run(api, srv.url, userContext("hi"));
    expect(message.usage).toMatchObject({ input: 1000, output: 50, cacheRead: 200, cacheWrite: 30, totalTokens: 1280 });
  });

  it("runs a tool-call turn, then the final answer once the request carries a tool result", async () => {
    use({
      turns: [
        { text: "Let me look.", toolCalls: [{ name: "bash", arguments: { command: "ls -la /tmp" } }] },
        { text: "There are two files." },
      ],
    });
    const context = userContext("what is in /tmp?");
    const first = await run(api, srv.url, context);
    expect(first.message.stopReason).toBe("toolUse");
    expect(textOf(first.message)).toBe("Let me look.");
    const call = first.message.content.find((b) => b.type === "toolCall");
    expect(call).toMatchObject({ type: "toolCall", name: "bash", arguments: { command: "ls -la /tmp" } });
    expect(count(first.events, "toolcall_end")).toBe(1);
    if (call?.type !== "toolCall") throw new Error("no tool call");

    context.messages.push(first.message, {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: [{ type: "text", text: "a.txt b.txt" }],
      isError: false,
      timestamp: Date.now(),
    });
    const second = await run(api, srv.url, context);
    expect(second.message.stopReason).toBe("stop");
    expect(textOf(second.message)).toBe("There are two files.");

    const reqs = srv.stats().requests;
    expect(reqs.map((r) => r.turn?.index)).toEqual([0, 1]);
    const body = reqs[1].body;
    if (api === "openai-completions") {
      expect(body.messages.some((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === call.id)).toBe(true);
    } else {
      const blocks = body.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []));
      expect(blocks.some((b: { type: string; tool_use_id?: string }) => b.type === "tool_result" && b.tool_use_id === call.id)).toBe(true);
    }
  });

  it("delivers a 5,000-chunk answer complete", async () => {
    use({ turns: [{ text: "word ", repeat: 5000, chunkSize: 5 }] });
    const { events, message } = await run(api, srv.url, userContext("long please"));
    expect(message.stopReason).toBe("stop");
    expect(count(events, "text_delta")).toBe(5000);
    expect(textOf(message)).toBe("word ".repeat(5000));
  });

  it("answers a scripted 500 once, then succeeds", async () => {
    use([{ text: "recovered", error: { status: 500, times: 1 } }]);
    const failed = await run(api, srv.url, userContext("hi"));
    expect(failed.message.stopReason).toBe("error");
    expect(failed.message.errorMessage).toMatch(/^500\b/);
    expect(failed.message.content).toEqual([]);
    const ok = await run(api, srv.url, userContext("hi"));
    expect(ok.message.stopReason).toBe("stop");
    expect(textOf(ok.message)).toBe("recovered");
    expect(srv.stats().requests.map((r) => r.outcome)).toEqual(["error 500", "ok"]);
  });

  it("answers 429 with the API's own error shape", async () => {
    use([{ text: "later", error: { status: 429, times: 2, message: "slow down" } }]);
    const a = await run(api, srv.url, userContext("hi"));
    const b = await run(api, srv.url, userContext("hi"));
    const c = await run(api, srv.url, userContext("hi"));
    expect(a.message.stopReason).toBe("error");
    expect(a.message.errorMessage).toMatch(/^429\b/);
    expect(a.message.errorMessage).toContain("slow down");
    if (api === "anthropic-messages") expect(a.message.errorMessage).toContain("rate_limit_error");
    expect(b.message.errorMessage).toMatch(/^429\b/);
    expect(textOf(c.message)).toBe("later");
  });

  it("cuts the connection mid-stream: error with the partial text kept", async () => {
    use([{ text: "one two three four five six seven eight", cutAfterChunks: 3 }]);
    const cut = await run(api, srv.url, userContext("hi"));
    expect(cut.message.stopReason).toBe("error");
    expect(cut.message.errorMessage).toBeTruthy();
    expect(textOf(cut.message)).toBe("one two three ");
    expect(count(cut.events, "done")).toBe(0);
    const whole = await run(api, srv.url, userContext("hi")); // cutTimes defaults to 1
    expect(textOf(whole.message)).toBe("one two three four five six seven eight");
  });

  it("sends malformed SSE: the client ends with an error instead of hanging", async () => {
    use([{ text: "alpha beta gamma delta", malformed: 2, malformedTimes: "always" }]);
    for (let i = 0; i < 2; i++) {
      const { message } = await run(api, srv.url, userContext("hi"));
      expect(message.stopReason).toBe("error");
      expect(message.errorMessage).toMatch(/JSON/);
      expect(textOf(message)).toBe("alpha beta ");
    }
    use([{ text: "alpha", malformed: true }]);
    const first = await run(api, srv.url, userContext("hi"));
    expect(first.message.stopReason).toBe("error");
    expect(first.message.content).toEqual([]);
    expect(textOf((await run(api, srv.url, userContext("hi"))).message)).toBe("alpha"); // malformedTimes defaults to 1
  });
});

describe("anthropic thinking", () => {
  it("streams a thinking block with a signature before the text", async () => {
    use([{ thinking: "The user greets me. I should greet back.", text: "Hello!" }]);
    const { events, message } = await run("anthropic-messages", srv.url, userContext("hi"));
    expect(message.stopReason).toBe("stop");
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    const thinking = message.content[0];
    if (thinking.type !== "thinking") throw new Error("expected thinking");
    expect(thinking.thinking).toBe("The user greets me. I should greet back.");
    expect(thinking.thinkingSignature).toMatch(/^mock-signature-/);
    expect(count(events, "thinking_delta")).toBe(8);
    const types = events.map((e) => e.type);
    expect(types.indexOf("thinking_end")).toBeLessThan(types.indexOf("text_start"));
  });

  it("sends thinking to openai-completions as reasoning_content", async () => {
    use([{ thinking: "hmm", text: "yes" }]);
    const { message } = await run("openai-completions", srv.url, userContext("hi"));
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"]);
  });
});

describe("turn selection", () => {
  it("checks match rules first and counts tool results after the matched user message", async () => {
    use({
      turns: [
        { match: "deploy", turns: [{ toolCalls: [{ name: "bash", arguments: { command: "make deploy" } }] }, { text: "Deployed." }] },
        { match: "joke", text: "A joke." },
        { text: "positional 0" },
      ],
    });
    const ctx = userContext("please deploy it");
    const first = await run("openai-completions", srv.url, ctx);
    const call = first.message.content.find((b) => b.type === "toolCall");
    if (call?.type !== "toolCall") throw new Error("no tool call");
    expect(call.arguments).toEqual({ command: "make deploy" });
    ctx.messages.push(first.message, {
      role: "toolResult", toolCallId: call.id, toolName: "bash", content: [{ type: "text", text: "ok" }], isError: false, timestamp: Date.now(),
    });
    expect(textOf((await run("openai-completions", srv.url, ctx)).message)).toBe("Deployed.");
    expect(textOf((await run("anthropic-messages", srv.url, userContext("tell a joke"))).message)).toBe("A joke.");
    expect(textOf((await run("anthropic-messages", srv.url, userContext("something else"))).message)).toBe("positional 0");
    expect(srv.stats().requests.map((r) => r.turn)).toEqual([
      { by: "toolResults", index: 0, rule: "deploy" },
      { by: "toolResults", index: 1, rule: "deploy" },
      { by: "toolResults", index: 0, rule: "joke" },
      { by: "toolResults", index: 0 },
    ]);
  });

  it("uses the default turn past the end, and a clear 500 when there is none", async () => {
    use({ turns: [], default: { text: "fallback" } });
    expect(textOf((await run("openai-completions", srv.url, userContext("x"))).message)).toBe("fallback");
    use({ turns: [{ text: "only one" }], turnBy: "request" });
    expect(textOf((await run("openai-completions", srv.url, userContext("x"))).message)).toBe("only one");
    const { message } = await run("openai-completions", srv.url, userContext("x"));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/^500 llm-server: no scripted turn for request index 1/);
  });
});

describe("server robustness", () => {
  it("rejects bad JSON with 400, unknown paths with 404, and takes a new script over HTTP", async () => {
    use([{ text: "x" }]);
    const bad = await fetch(`${srv.url}/v1/chat/completions`, { method: "POST", body: "{nope", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/not valid JSON/);

    const missing = await fetch(`${srv.url}/v1/v1/messages`, { method: "POST", body: "{}" });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/must not end in \/v1/);

    const set = await fetch(`${srv.url}/__script`, { method: "POST", body: JSON.stringify([{ text: "from http" }]) });
    expect(set.status).toBe(200);
    expect(textOf((await run("anthropic-messages", srv.url, userContext("x"))).message)).toBe("from http");

    const invalid = await fetch(`${srv.url}/__script`, { method: "POST", body: JSON.stringify({ turns: [{ txet: "typo" }] }) });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { message: string } }).error.message).toMatch(/turns\[0\] has unknown field "txet"/);

    const stats = (await (await fetch(`${srv.url}/__stats`)).json()) as { counts: Record<string, number>; requests: { path: string }[] };
    expect(stats.counts).toEqual({ "/v1/chat/completions": 1, "/v1/v1/messages": 1, "/__script": 2, "/v1/messages": 1 });
    expect(stats.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/v1/messages", "/__script", "/v1/messages", "/__script"]);
  });

  it("keeps only the last 200 requests", async () => {
    use([{ text: "x" }]);
    for (let i = 0; i < 205; i++) await (await fetch(`${srv.url}/nowhere?i=${i}`)).text();
    const st = srv.stats();
    expect(st.total).toBe(205);
    expect(st.requests).toHaveLength(200);
    expect(st.requests[0].query).toBe("i=5");
  });

  it("validates scripts with errors naming the field", () => {
    expect(() => validateScript({ turns: [{ toolCalls: [{ arguments: {} }] }] })).toThrow(/turns\[0\]\.toolCalls\[0\]\.name must be a non-empty string/);
    expect(() => validateScript({ turnBy: "sometimes" })).toThrow(/turnBy must be one of/);
    expect(() => validateScript({ turns: [{ error: { status: 200 } }] })).toThrow(/turns\[0\]\.error\.status/);
    expect(() => validateScript("text")).toThrow(/must be an object or an array/);
  });

  it("a gate holds the stream after N chunks until released (function or POST /__release)", async () => {
    for (const api of APIS) {
      use([{ text: "a b c d e f", gate: "g1", gateAfterChunks: 2 }]);
      const events: AssistantMessageEvent[] = [];
      const streamed = (async () => {
        const options = { apiKey: "test", maxRetries: 0 };
        const st =
          api === "openai-completions"
            ? streamSimpleOpenAICompletions(modelFor(api, srv.url) as Model<"openai-completions">, userContext("hi"), options)
            : streamSimpleAnthropic(modelFor(api, srv.url) as Model<"anthropic-messages">, userContext("hi"), options);
        for await (const ev of st) events.push(ev);
        return st.result();
      })();
      while (!srv.held("g1")) await new Promise((r) => setTimeout(r, 5));
      // Held: exactly two text chunks are out, and the message has not ended.
      while (count(events, "text_delta") < 2) await new Promise((r) => setTimeout(r, 5));
      expect(count(events, "text_delta")).toBe(2);
      expect(count(events, "done")).toBe(0);
      if (api === "openai-completions") srv.release("g1");
      else expect((await fetch(`${srv.url}/__release`, { method: "POST", body: JSON.stringify({ gate: "g1" }) })).status).toBe(200);
      const message = await streamed;
      expect(textOf(message)).toBe("a b c d e f");
      expect(srv.held("g1")).toBe(false);
    }
    expect((await fetch(`${srv.url}/__release`, { method: "POST", body: "{}" })).status).toBe(400);
    expect(() => validateScript({ turns: [{ gate: "" }] })).toThrow(/turns\[0\]\.gate must be a non-empty string/);
  });

  it("close() ends a hanging stream and open keep-alive connections", async () => {
    const own = await startLlmServer({ script: [{ text: "never", hang: true }] });
    await (await fetch(`${own.url}/__stats`)).text(); // leaves an idle keep-alive socket
    const pending = run("openai-completions", own.url, userContext("hi"));
    while (own.stats().requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(own.stats().requests[0].outcome).toBe("hang");
    await own.close();
    const { message } = await pending;
    expect(message.stopReason).toBe("error");
    expect(textOf(message)).toBe("");
  });
});

describe("CLI", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
  });

  it("prints the url line, serves the script, and exits cleanly on SIGTERM", async () => {
    const file = writeScript(tmp, { turns: [{ text: "from the cli" }] });
    const proc = spawn(process.execPath, [serverFile, "--script", file], { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    const exited = new Promise<number | null>((resolveExit) => proc.once("exit", (code) => resolveExit(code)));
    const lines = createInterface({ input: proc.stdout! });
    const firstLine = await new Promise<string>((resolveLine, rejectLine) => {
      lines.once("line", resolveLine);
      proc.once("exit", (code) => rejectLine(new Error(`llm-server exited with ${code}`)));
    });
    const { url } = JSON.parse(firstLine) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { message } = await run("openai-completions", url, userContext("hi"));
    expect(textOf(message)).toBe("from the cli");
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    lines.close();
  });

  it("fails with exit code 2 and a message for a missing script file", async () => {
    const proc = spawn(process.execPath, [serverFile, "--script", join(tmp, "absent.json")], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => proc.once("exit", (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain("cannot read script");
    expect(stderr).toContain("absent.json");
  });
});
