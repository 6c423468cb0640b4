import { describe, it, expect, jest, afterAll, beforeAll } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, AssistantMessageEvent, Context, Model } from "@mariozechner/pi-ai";
import providersPlugin, { createProvidersPlugin, loadedProviderApis, PI_AI_APIS, type StreamLoader } from "./index.js";
import { Kernel, type AssistantStream, type StreamFn, defineApp, SettingsManager, PluginHost } from "../../core/kernel/index.js";
import { AssistantMessageEventStream, emptyAssistantMessage } from "../../core/stores/index.js";

const dir = mkdtempSync(join(tmpdir(), "pi-providers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function kernelWith(manifest: unknown) {
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory() });
  await new PluginHost(kernel).load([{ manifest, origin: "builtin", builtin: true }]);
  return kernel;
}

function model(api: string, provider = "test", baseUrl = "http://127.0.0.1:1"): Model<Api> {
  return { id: "m", name: "m", api, provider, baseUrl, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
}
const context: Context = { messages: [{ role: "user", content: "hi", timestamp: 0 }] };

async function run(stream: AssistantStream | Promise<AssistantStream>) {
  const s = await stream;
  const events: AssistantMessageEvent[] = [];
  for await (const e of s) events.push(e);
  return { events, types: events.map((e) => e.type), final: await s.result() };
}

function fakeStream(text: string): StreamFn {
  return (m) => {
    const s = new AssistantMessageEventStream();
    const msg = emptyAssistantMessage(m);
    queueMicrotask(() => {
      s.push({ type: "start", partial: msg });
      msg.content.push({ type: "text", text });
      s.push({ type: "done", reason: "stop", message: msg });
      s.end();
    });
    return s;
  };
}

describe("the providers plugin (real pi-ai modules)", () => {
  let server: Server;
  let base = "";
  const hits: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: "assistant", content: "Hel" }, null));
        res.write(chunk({ content: "lo" }, null));
        res.write(chunk({}, "stop"));
        res.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it("registers every pi-ai API without loading any provider module; streaming loads only the one used", async () => {
    const kernel = await kernelWith(providersPlugin);
    expect(kernel.providers.names().sort()).toEqual([...PI_AI_APIS].sort());
    expect(PI_AI_APIS).toHaveLength(10);
    expect(PI_AI_APIS).toContain("pi-messages");
    expect(loadedProviderApis()).toEqual([]);

    const provider = kernel.providers.get("openai-completions")!;
    const { types, final } = await run(provider.stream(model("openai-completions", "mock", base), context, { apiKey: "x", maxRetries: 0 }));
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("done");
    expect(final.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(hits).toEqual(["POST /v1/chat/completions"]);
    expect(loadedProviderApis()).toEqual(["openai-completions"]);
  });

  it("a synchronous throw inside pi-ai (no API key) becomes a final error event", async () => {
    const kernel = await kernelWith(createProvidersPlugin());
    const s = kernel.providers.get("openai-completions")!.stream(model("openai-completions", "provider-without-key"), context, {});
    const { types, final } = await run(s);
    expect(types).toEqual(["error"]);
    expect(final.stopReason).toBe("error");
    expect(final.errorMessage).toMatch(/No API key for provider: provider-without-key/);
  });
});

describe("every API of the built-in catalog streams through pi-ai 1.6", () => {
  it("each catalog model's API has a provider", async () => {
    const { loadCatalogSync } = await import("../../core/stores/index.js");
    const apis = new Set(Object.values(loadCatalogSync()).flatMap((byId) => Object.values(byId).map((m) => m.api)));
    expect(apis.size).toBeGreaterThan(0);
    for (const api of apis) expect({ api, served: PI_AI_APIS.includes(api) }).toEqual({ api, served: true });
  });

  it("a radius model (API pi-messages) streams against a loopback server speaking that protocol", async () => {
    const { loadCatalogProviderSync } = await import("../../core/stores/index.js");
    const radius = Object.values(loadCatalogProviderSync("radius") ?? {})[0];
    expect(radius?.api).toBe("pi-messages");
    const seen: { url?: string; auth?: string; body?: { model?: string; context?: { messages?: unknown[] } } } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        Object.assign(seen, { url: req.url, auth: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
        res.writeHead(200, { "content-type": "text/event-stream" });
        const usage = { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 5, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
        for (const ev of [
          { type: "start" },
          { type: "text_start", contentIndex: 0 },
          { type: "text_delta", contentIndex: 0, delta: "via " },
          { type: "text_delta", contentIndex: 0, delta: "radius" },
          { type: "text_end", contentIndex: 0, content: "via radius" },
          { type: "done", reason: "stop", usage, responseId: "r-1" },
        ])
          res.write(`data: ${JSON.stringify(ev)}\n\n`);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const kernel = await kernelWith(createProvidersPlugin());
      const m = { ...radius!, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
      const { types, final } = await run(kernel.providers.get("pi-messages")!.stream(m, context, { apiKey: "rk-test" }));
      expect(types).toEqual(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]);
      expect(final).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "via radius" }], provider: "radius", responseId: "r-1", usage: { input: 3, output: 2 } });
      expect(seen).toMatchObject({ url: "/v1/messages", auth: "Bearer rk-test", body: { model: radius!.id } });
      expect(seen.body?.context?.messages).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("without a key, a radius model is refused with a reason naming the provider", async () => {
    const { loadCatalogProviderSync } = await import("../../core/stores/index.js");
    const radius = Object.values(loadCatalogProviderSync("radius") ?? {})[0]!;
    const kernel = await kernelWith(createProvidersPlugin());
    const { types, final } = await run(kernel.providers.get("pi-messages")!.stream({ ...radius, baseUrl: "http://127.0.0.1:1/v1" }, context, {}));
    expect(types).toEqual(["error"]);
    expect(final.errorMessage).toBe('No API key provided for provider "radius"');
  });
});

describe("lazy loading (fake loaders)", () => {
  it("loads an API's module on its first stream only, once, and never at setup", async () => {
    const load = jest.fn<StreamLoader>(async () => fakeStream("from fake"));
    const other = jest.fn<StreamLoader>(async () => fakeStream("other"));
    const kernel = await kernelWith(createProvidersPlugin({ "fake-api": load, "other-api": other }));
    expect(load).not.toHaveBeenCalled();
    const p = kernel.providers.get("fake-api")!;
    const [a, b] = await Promise.all([run(p.stream(model("fake-api"), context)), run(p.stream(model("fake-api"), context))]);
    expect(a.final.content).toEqual([{ type: "text", text: "from fake" }]);
    expect(b.types).toEqual(["start", "done"]);
    await run(p.stream(model("fake-api"), context));
    expect(load).toHaveBeenCalledTimes(1);
    expect(other).not.toHaveBeenCalled();
  });

  it("a failed import ends the stream with an error event, and the next request tries again", async () => {
    let fail = true;
    const load = jest.fn<StreamLoader>(async () => {
      if (fail) throw new Error("Cannot find module 'some-sdk'");
      return fakeStream("recovered");
    });
    const kernel = await kernelWith(createProvidersPlugin({ flaky: load }));
    const p = kernel.providers.get("flaky")!;
    const first = await run(p.stream(model("flaky"), context));
    expect(first.types).toEqual(["error"]);
    expect(first.final.errorMessage).toBe(`cannot load the "flaky" provider module: Cannot find module 'some-sdk'`);
    fail = false;
    const second = await run(p.stream(model("flaky"), context));
    expect(second.final.content).toEqual([{ type: "text", text: "recovered" }]);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it("an aborted request that fails is reported as aborted", async () => {
    const kernel = await kernelWith(
      createProvidersPlugin({
        slow: async () => () => {
          throw new Error("Request was aborted");
        },
      }),
    );
    const ac = new AbortController();
    ac.abort();
    const { final } = await run(kernel.providers.get("slow")!.stream(model("slow"), context, { signal: ac.signal }));
    expect(final.stopReason).toBe("aborted");
  });
});

describe("no eager pi-ai imports", () => {
  it("the plugin and the model layer import pi-ai only as types or lazily", async () => {
    const { readFileSync, readdirSync } = await import("node:fs");
    const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..", "..");
    const files = [join(root, "plugins/providers/index.ts"), join(root, "plugins/providers/pi-ai-api.ts"), ...readdirSync(join(root, "core/stores/models")).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts")).map((f) => join(root, "core/stores/models", f))];
    for (const f of files) {
      const src = readFileSync(f, "utf8");
      const eager = src.match(/^import\s+(?!type\b)[^;]*from\s+"@(mariozechner|earendil-works)\/pi-ai[^"]*"/gm) ?? [];
      expect({ file: f, eager }).toEqual({ file: f, eager: [] });
    }
  });
});
