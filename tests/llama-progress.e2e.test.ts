/**
 * End to end: /llama's progress view for a download and a load, as pi 1.6 shows it. A loopback
 * stand-in for the llama.cpp router keeps `GET /models/sse` open and sends the next event only
 * when the test says so (its model list moves along with the events), so nothing depends on
 * timing: the bar and the bytes advance with each `download_progress`, `download_finished` ends
 * with "Downloaded …"; Esc → yes stops a download (the router is asked to unload it) and closes
 * the view; a load shows its stage and share from `model_status` events.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";
import { listen, selectedRow } from "./helpers/loopback.js";

let server: LlmServer;
let e: E2eEnv;
let router: Server;
let hub: Server;
const calls: string[] = [];
const models = new Map<string, { id: string; status: { value: string; progress?: unknown } }>([["tiny-model", { id: "tiny-model", status: { value: "unloaded" } }]]);
const streams = new Set<ServerResponse>();
let streamsOpened = 0;
const sh = tuiShell("pi-llama-progress", () => e);

/**
 * Resolves when `cond` holds; checked again whenever the stand-in router sees a request or a
 * connection ends. A condition still false after a minute fails the test (a bound, not a wait).
 */
const checks = new Set<() => void>();
const changed = () => [...checks].forEach((c) => c());
function until(cond: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const bound = setTimeout(() => {
      checks.delete(check);
      reject(new Error(`the stand-in router never saw: ${cond}\ncalls: ${calls.join("\n")}`));
    }, 60_000);
    const check = () => {
      if (!cond()) return;
      checks.delete(check);
      clearTimeout(bound);
      resolve();
    };
    checks.add(check);
    check();
  });
}

/** Send one event to every open `/models/sse` stream. */
function emit(model: string, event: string, data: unknown): void {
  for (const s of streams) s.write(`data: ${JSON.stringify({ model, event, data })}\n\n`);
}

const MiB = 1024 * 1024;
/** A download's state in both places the client reads it: the event stream and the model list. */
function downloaded(model: string, done: number, total: number): void {
  const progress = { "model.gguf": { done, total } };
  models.set(model, { id: model, status: { value: "downloading", progress } });
  emit(model, "download_progress", { progress });
}


const selected = selectedRow;

describe("/llama: progress of a download and a load", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "unused" } } });
    router = createServer((req, res) => {
      if (req.url === "/models/sse") {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.write(": open\n\n");
        streams.add(res);
        streamsOpened++;
        res.on("close", () => {
          streams.delete(res);
          changed();
        });
        changed();
        return;
      }
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        calls.push(`${req.method} ${req.url} ${body}`);
        const model = body ? (JSON.parse(body) as { model: string }).model : "";
        if (req.method === "POST" && req.url === "/models") models.set(model, { id: model, status: { value: "downloading" } });
        if (req.method === "POST" && req.url === "/models/load") models.set(model, { id: model, status: { value: "loading" } });
        if (req.method === "POST" && req.url === "/models/unload") models.set(model, { id: model, status: { value: "unloaded" } });
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(req.method === "GET" && req.url === "/models" ? { data: [...models.values()] } : { success: true }));
        changed();
      });
    });
    hub = createServer((req, res) => {
      const id = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname.replace(/^\/api\/models\//, ""));
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ id, gated: false, siblings: [{ rfilename: "model-Q4_K_M.gguf", size: 4 * MiB }] }));
    });
    e = makeE2eEnv(server.url);
    e.env.LLAMA_BASE_URL = await listen(router);
    e.env.HF_ENDPOINT = await listen(hub);
    delete e.env.HF_TOKEN;
    e.env.HF_HOME = join(e.root, "hf");
    sh.launch("--no-session");
    await sh.waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    sh.kill();
    for (const s of streams) s.end();
    router?.closeAllConnections();
    router?.close();
    hub?.closeAllConnections();
    hub?.close();
    await server?.close();
    e?.cleanup();
  });

  /** /llama → Download model… → `id` typed exactly; resolves once the view follows the event stream. */
  const startDownload = async (id: string) => {
    const opened = streamsOpened;
    sh.typeText("/llama");
    sh.send("Enter");
    await sh.waitFor(/llama\.cpp models at/);
    sh.send("Up");
    await sh.waitFor((s) => selected(s) === "Download model…");
    sh.send("Enter");
    await sh.waitFor(/Download model: search Hugging Face/);
    sh.typeText(id);
    sh.send("Enter");
    await sh.waitFor(/Downloading model/);
    await until(() => streamsOpened > opened && streams.size > 0 && calls.includes(`POST /models {"model":"${id}"}`));
  };

  it("a download shows the bar and the bytes as events arrive, and ends with Downloaded …", async () => {
    const id = "acme/tiny-GGUF:Q4_K_M";
    await startDownload(id);
    let s = await sh.waitFor(/── Downloading model ─[\s\S]*acme\/tiny-GGUF:Q4_K_M/);
    expect(s).toMatch(/esc stop/);
    downloaded(id, 1 * MiB, 4 * MiB);
    s = await sh.waitFor(/1\.00 MiB \/ 4\.00 MiB/);
    expect(s).toMatch(new RegExp(`${"█".repeat(10)}${"─".repeat(30)} 25%`));
    downloaded(id, 3 * MiB, 4 * MiB);
    s = await sh.waitFor(/3\.00 MiB \/ 4\.00 MiB/);
    expect(s).toMatch(new RegExp(`${"█".repeat(30)}${"─".repeat(10)} 75%`));
    models.set(id, { id, status: { value: "unloaded" } });
    emit(id, "download_finished", {});
    await sh.waitFor(/Downloaded acme\/tiny-GGUF:Q4_K_M/);
    s = await sh.waitFor(/acme\/tiny-GGUF:Q4_K_M {2}\(unloaded\)/);
    expect(s).not.toMatch(/Downloading model/);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("Esc asks Stop download?; yes has the router unload the model and closes the view", async () => {
    const id = "acme/big-GGUF:Q4_K_M";
    await startDownload(id);
    downloaded(id, 2 * MiB, 8 * MiB);
    await sh.waitFor(/2\.00 MiB \/ 8\.00 MiB/);
    sh.send("Escape");
    let s = await sh.waitFor(/Stop download\?/);
    expect(s).toMatch(/acme\/big-GGUF:Q4_K_M/);
    sh.send("n"); // no: the view stays and keeps following
    await sh.waitFor((x) => !/Stop download\?/.test(x) && /Downloading model/.test(x));
    downloaded(id, 4 * MiB, 8 * MiB);
    await sh.waitFor(/4\.00 MiB \/ 8\.00 MiB/);
    sh.send("Escape");
    await sh.waitFor(/Stop download\?/);
    sh.send("y");
    await until(() => calls.includes(`POST /models/unload {"model":"${id}"}`));
    s = await sh.waitFor(/llama\.cpp models at/);
    expect(s).not.toMatch(/Downloading model|Downloaded acme\/big/);
    await until(() => streams.size === 0); // the view stopped following the stream
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("a load shows its stage and share from model_status events, then Loaded …", async () => {
    const opened = streamsOpened;
    sh.typeText("/llama");
    sh.send("Enter");
    await sh.waitFor(/llama\.cpp models at/);
    await sh.waitFor((s) => selected(s).startsWith("tiny-model"));
    sh.send("Enter");
    await sh.waitFor(/Loading model/);
    await until(() => streamsOpened > opened && streams.size > 0 && calls.includes('POST /models/load {"model":"tiny-model"}'));
    emit("tiny-model", "model_status", { status: "loading", progress: { current: "tensors", stages: ["metadata", "tensors", "warmup"], value: 0.5 } });
    let s = await sh.waitFor(/Loading tensors/);
    expect(s).toMatch(new RegExp(`${"█".repeat(20)}${"─".repeat(20)} 50%`));
    emit("tiny-model", "model_status", { status: "loading", progress: { stage: "warmup", stages: ["metadata", "tensors", "warmup"], value: 0 } });
    s = await sh.waitFor(/Loading warmup/);
    expect(s).toMatch(/ 67%/);
    models.set("tiny-model", { id: "tiny-model", status: { value: "loaded" } });
    emit("tiny-model", "model_status", { status: "loaded" });
    await sh.waitFor(/Loaded tiny-model; \/model selects it/);
    s = await sh.waitFor(/tiny-model {2}\(loaded\)/);
    expect(s).not.toMatch(/Loading model/);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("stopping a load that unloaded the other models loads them again", async () => {
    const count = (call: string) => calls.filter((c) => c === call).length;
    const reload = 'POST /models/load {"model":"tiny-model"}';
    const before = count(reload);
    sh.typeText("/llama");
    sh.send("Enter");
    await sh.waitFor(/tiny-model {2}\(loaded\)/);
    sh.send("Down");
    await sh.waitFor((s) => selected(s).startsWith("acme/tiny-GGUF:Q4_K_M"));
    sh.send("Enter");
    await sh.waitFor(/1 other model is loaded/);
    sh.send("Enter"); // Unload them and load
    await sh.waitFor(/Loading model/);
    expect(calls).toContain('POST /models/unload {"model":"tiny-model"}');
    await until(() => streams.size > 0 && calls.includes('POST /models/load {"model":"acme/tiny-GGUF:Q4_K_M"}'));
    sh.send("Escape");
    await sh.waitFor(/Stop loading\?/);
    sh.send("y");
    await until(() => calls.includes('POST /models/unload {"model":"acme/tiny-GGUF:Q4_K_M"}') && count(reload) > before);
    await sh.waitFor(/Loading again what was loaded: tiny-model/);
    models.set("tiny-model", { id: "tiny-model", status: { value: "loaded" } });
    let s = await sh.waitFor(/tiny-model {2}\(loaded\)/);
    expect(s).toMatch(/acme\/tiny-GGUF:Q4_K_M {2}\(unloaded\)/);
    expect(s).not.toMatch(/Loading model/);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("a failed download is one error line and the view closes", async () => {
    const id = "acme/gone-GGUF:Q4_K_M";
    await startDownload(id);
    emit(id, "download_failed", { error: { message: "the repository has no file model-Q4_K_M.gguf" } });
    const s = await sh.waitFor(/the repository has no file model-Q4_K_M\.gguf/);
    expect(s).not.toMatch(/\n\s+at /);
    await sh.waitFor((x) => /llama\.cpp models at/.test(x) && !/Downloading model/.test(x));
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("choosing a loaded model asks Unload model? first; no keeps it loaded, yes unloads it", async () => {
    const unload = 'POST /models/unload {"model":"tiny-model"}';
    const count = () => calls.filter((c) => c === unload).length;
    const before = count();
    models.set("tiny-model", { id: "tiny-model", status: { value: "loaded" } });
    sh.typeText("/llama");
    sh.send("Enter");
    await sh.waitFor(/tiny-model {2}\(loaded\)/);
    await sh.waitFor((s) => selected(s).startsWith("tiny-model"));
    sh.send("Enter");
    await sh.waitFor(/Unload model\?/);
    sh.send("n");
    await sh.waitFor((x) => /llama\.cpp models at/.test(x) && !/Unload model\?/.test(x));
    expect(count()).toBe(before);
    await sh.waitFor((s) => selected(s).startsWith("tiny-model"));
    sh.send("Enter");
    await sh.waitFor(/Unload model\?/);
    sh.send("y");
    await sh.waitFor(/Unloaded tiny-model/);
    expect(count()).toBe(before + 1);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });
});
