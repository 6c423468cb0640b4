/**
 * Heap check of the streaming fast path (issue 20): a 5,000-chunk answer through the fast path
 * (or `pi-ai` as the argument: pi-ai's own path; `direct`: the direct path over node:http from a
 * local server), then, with the final message still held, the heap after a full GC against the
 * heap before, and a heap snapshot in the temp folder.
 *   npm run build && node --expose-gc tests/bench/heap-check.mjs [fast|pi-ai|direct]
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
const { withFastPath, loadPiAiParts } = await import("../../dist/plugins/providers/fast/fast-path.js");
const pi = (await import("@mariozechner/pi-ai/openai-completions")).streamSimpleOpenAICompletions;
const parts = await loadPiAiParts();
const chunk = () => `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: { content: "word " }, finish_reason: null }] })}\n\n`;
const body = new TextEncoder().encode(Array.from({ length: 5000 }, () => chunk()).join("") + "data: [DONE]\n\n");
const fake = async () => new Response(new ReadableStream({ pull(c) { c.enqueue(body); c.close(); } }), { status: 200, headers: { "content-type": "text/event-stream" } });
const model = { id: "m", name: "m", api: "openai-completions", provider: "t", baseUrl: "http://127.0.0.1:9/v1", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 100 };
const label = ["pi-ai", "direct"].includes(process.argv[2]) ? process.argv[2] : "fast";
async function once(fn) {
  const saved = globalThis.fetch; if (label !== "direct") globalThis.fetch = fake;
  let s; try { s = fn(model, { messages: [{ role: "user", content: "x", timestamp: 0 }] }, { apiKey: "k" }); } finally { globalThis.fetch = saved; }
  let n = 0; for await (const e of s) n++;
  return { n, msg: await s.result() };
}
let fn = label === "pi-ai" ? pi : withFastPath("openai-completions", pi, parts);
let server;
if (label === "direct") {
  const { createServer } = await import("node:http");
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/event-stream" }).end(body));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  model.baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
  const { createOpenAICompletionsStream, noteNativeFetch } = await import("../../dist/plugins/providers/fast/direct.js");
  noteNativeFetch(globalThis.fetch);
  const viaPi = fn;
  fn = createOpenAICompletionsStream(async () => viaPi);
}
await once(fn); // warm: modules, JIT
gc(); gc();
const h0 = process.memoryUsage().heapUsed;
const kept = await once(fn);
gc(); gc();
const h1 = process.memoryUsage().heapUsed;
const snap = v8.writeHeapSnapshot(join(tmpdir(), `pi-heap-check-${label}.heapsnapshot`));
console.log(JSON.stringify({ path: label, events: kept.n, textBytes: kept.msg.content[0].text.length, retainedKiB: Math.round((h1 - h0) / 1024), snap }));
server?.close();
