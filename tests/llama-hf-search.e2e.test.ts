/**
 * End to end: /llama's "Download model…" searching Hugging Face as pi 1.6's does — GGUF
 * repositories by name, most downloaded first, then the quantization (Q4_K_M first and marked
 * recommended, sizes from the files), a gated repository's access terms, and the router asked to
 * download `owner/repository:QUANT`. Nothing leaves the machine: HF_ENDPOINT points at a loopback
 * stand-in for Hugging Face and LLAMA_BASE_URL at a stand-in llama.cpp router; the last case
 * closes the Hugging Face stand-in and expects a clear error.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";
import { listen, selectedRow } from "./helpers/loopback.js";

let server: LlmServer;
let e: E2eEnv;
let router: Server;
let hub: Server;
const routerCalls: string[] = [];
const routerModels = [{ id: "tiny-model", status: { value: "unloaded" } }];
const hubCalls: string[] = [];
const sh = tuiShell("pi-llama-hf", () => e);

const SEARCH = [
  { id: "ggml-org/gemma-3-1b-it-GGUF", downloads: 1_234_567 },
  { id: "unsloth/gemma-3-4b-it-GGUF", downloads: 45_678 },
];
const DETAILS: Record<string, object> = {
  "ggml-org/gemma-3-1b-it-GGUF": {
    id: "ggml-org/gemma-3-1b-it-GGUF",
    gated: false,
    siblings: [
      { rfilename: "README.md", size: 10 },
      { rfilename: "gemma-3-1b-it-Q8_0.gguf", size: 1_100_000_000 },
      { rfilename: "gemma-3-1b-it-Q4_K_M.gguf", size: 806_000_000 },
      { rfilename: "mmproj-gemma-3-1b-it-f16.gguf", size: 400_000_000 },
    ],
  },
  "acme/locked-GGUF": { id: "acme/locked-GGUF", gated: "manual", siblings: [{ rfilename: "locked-Q4_K_M.gguf", size: 1 }] },
};


const selected = selectedRow;

describe("/llama: Download model… searches Hugging Face", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "unused" } } });
    router = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        routerCalls.push(`${req.method} ${req.url} ${body}`);
        // A download completes at once: the model is listed from then on (no event stream here).
        if (req.method === "POST" && req.url === "/models") routerModels.push({ id: (JSON.parse(body) as { model: string }).model, status: { value: "unloaded" } });
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(req.method === "GET" && req.url === "/models" ? { data: routerModels } : { success: true }));
      });
    });
    hub = createServer((req, res) => {
      hubCalls.push(req.url ?? "");
      const url = new URL(req.url ?? "/", "http://x");
      res.setHeader("content-type", "application/json");
      if (url.pathname === "/api/models") return res.end(JSON.stringify(SEARCH.filter((m) => m.id.includes(url.searchParams.get("search") ?? ""))));
      const details = DETAILS[decodeURIComponent(url.pathname.replace(/^\/api\/models\//, ""))];
      if (details) return res.end(JSON.stringify(details));
      res.statusCode = 404;
      res.end(JSON.stringify({ error: "Repository not found" }));
    });
    e = makeE2eEnv(server.url);
    e.env.LLAMA_BASE_URL = await listen(router);
    e.env.HF_ENDPOINT = await listen(hub);
    delete e.env.HF_TOKEN;
    e.env.HF_HOME = join(e.root, "hf"); // no token file
    sh.launch("--no-session");
    await sh.waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    sh.kill();
    router?.closeAllConnections();
    router?.close();
    hub?.closeAllConnections();
    hub?.close();
    await server?.close();
    e?.cleanup();
  });

  const openDownload = async () => {
    sh.typeText("/llama");
    sh.send("Enter");
    await sh.waitFor(/llama\.cpp models at/);
    sh.send("Up"); // the list wraps: Download model… is its last row
    await sh.waitFor((s) => selected(s) === "Download model…");
    sh.send("Enter");
    await sh.waitFor(/Download model: search Hugging Face, or owner\/repository\[:quant\]/);
  };

  it("a name searches GGUF repositories, most downloaded first; the quantization list puts Q4_K_M first; the router downloads the choice", async () => {
    await openDownload();
    sh.typeText("gemma");
    sh.send("Enter");
    let s = await sh.waitFor(/GGUF models on Hugging Face for "gemma"/);
    expect(s).toMatch(/ggml-org\/gemma-3-1b-it-GGUF\s+1\.2M downloads/);
    expect(s).toMatch(/unsloth\/gemma-3-4b-it-GGUF\s+45\.7k downloads/);
    const search = new URL(hubCalls.find((u) => u.startsWith("/api/models?"))!, "http://x").searchParams;
    expect(Object.fromEntries(search)).toEqual({ search: "gemma", filter: "gguf", sort: "downloads", direction: "-1", limit: "20" });
    sh.send("Enter");
    s = await sh.waitFor(/Quantization of ggml-org\/gemma-3-1b-it-GGUF/);
    expect(selected(s)).toBe("Q4_K_M · 768.7 MiB · recommended");
    expect(s).toMatch(/Q8_0 · 1\.02 GiB/);
    expect(s).not.toMatch(/F16/); // the projector file is no quantization
    sh.send("Down");
    await sh.waitFor((x) => selected(x).startsWith("Q8_0"));
    sh.send("Enter");
    await sh.waitFor(/Downloaded ggml-org\/gemma-3-1b-it-GGUF:Q8_0/);
    expect(routerCalls).toContain(`POST /models {"model":"ggml-org/gemma-3-1b-it-GGUF:Q8_0"}`);
    await sh.waitFor(/llama\.cpp models at/);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("an exact owner/repository:QUANT skips the search; a gated repository shows its access terms first", async () => {
    await openDownload();
    const searches = hubCalls.filter((u) => u.startsWith("/api/models?")).length;
    sh.typeText("acme/locked-GGUF:Q4_K_M");
    sh.send("Enter");
    const s = await sh.waitFor(/acme\/locked-GGUF is gated on Hugging Face/);
    expect(s).toMatch(/Access needs the owner's approval: http:\/\/127\.0\.0\.1:\d+\/acme\/locked-GGUF/);
    expect(hubCalls.filter((u) => u.startsWith("/api/models?")).length).toBe(searches);
    sh.send("Down"); // Back
    await sh.waitFor((x) => selected(x) === "Back");
    sh.send("Enter");
    await sh.waitFor(/Download model: search Hugging Face/);
    sh.typeText("acme/locked-GGUF:Q4_K_M");
    sh.send("Enter");
    await sh.waitFor(/is gated on Hugging Face/);
    sh.send("Enter"); // Continue
    await sh.waitFor(/Downloaded acme\/locked-GGUF:Q4_K_M/);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });

  it("a search that finds nothing says so; an unreachable Hugging Face is one clear error, and the dialog stays", async () => {
    await openDownload();
    sh.typeText("nothing-like-this");
    sh.send("Enter");
    await sh.waitFor(/No GGUF models on Hugging Face match "nothing-like-this"/);
    await sh.waitFor(/Download model: search Hugging Face/);
    hub.closeAllConnections();
    await new Promise<void>((r) => hub.close(() => r()));
    sh.typeText("gemma");
    sh.send("Enter");
    const s = await sh.waitFor(/Hugging Face search failed/);
    expect(s).toMatch(/Hugging Face search failed: could not reach Hugging Face at http:\/\/127\.0\.0\.1:\d+/);
    expect(s).not.toMatch(/\n\s+at /);
    await sh.waitFor(/Download model: search Hugging Face/);
    sh.send("Escape");
    await sh.waitFor(/llama\.cpp models at/);
    sh.send("Escape");
    await sh.waitFor((x) => !/llama\.cpp models at/.test(x));
  });
});
