/**
 * The llama.cpp router's HTTP API (`llama serve` without a model): `GET /models` lists the models
 * it knows with their status, `POST /models/load` and `/models/unload` start and stop one,
 * `POST /models` downloads one from Hugging Face, `GET /models/sse` streams what happens to them
 * (download and load progress, status changes). Chat goes to `<server>/v1` (OpenAI Chat
 * Completions).
 */
import { shortBytes } from "./huggingface.js";

export const DEFAULT_LLAMA_SERVER_URL = "http://127.0.0.1:9931";

export interface RouterModel {
  id: string;
  status: { value: string; failed?: boolean; exit_code?: number; progress?: unknown };
  meta?: { n_ctx?: number; n_ctx_train?: number };
  architecture?: { input_modalities?: string[]; output_modalities?: string[] };
}

/** "http://host:port[/v1][/]" → "http://host:port"; throws on anything but http(s). */
export function normalizeServerUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new Error(`"${value}" is not a URL (e.g. ${DEFAULT_LLAMA_SERVER_URL})`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("the server URL must use http or https");
  url.hash = "";
  url.search = "";
  url.pathname = url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "") || "/";
  return url.toString().replace(/\/$/, "");
}

/** Loaded and sleeping models answer chat requests (a sleeping one wakes up). */
export function isServing(m: RouterModel): boolean {
  return m.status.value === "loaded" || m.status.value === "sleeping";
}

/** One event of `GET /models/sse`. */
export interface RouterEvent {
  model: string;
  event: string;
  data?: unknown;
}

/** Where a long step stands: a message, a share done (0..1) when known, a detail (bytes). */
export interface Progress {
  message: string;
  ratio?: number;
  detail?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** A load's `progress` (`{current|stage, stages[], value}`): the stage and the share of all stages done. */
export function loadProgress(data: unknown): Progress | undefined {
  if (!isObject(data) || !isObject(data.progress)) return undefined;
  const p = data.progress;
  const stage = typeof p.current === "string" ? p.current : typeof p.stage === "string" ? p.stage : undefined;
  const stages = Array.isArray(p.stages) ? p.stages.filter((x): x is string => typeof x === "string") : [];
  const within = typeof p.value === "number" ? Math.max(0, Math.min(1, p.value)) : undefined;
  const at = stage ? stages.indexOf(stage) : -1;
  const ratio = at >= 0 ? (at + (within ?? 0)) / stages.length : within;
  return { message: stage ? `Loading ${stage.replaceAll("_", " ")}` : "Loading model", ratio };
}

/** A download's per-file `{done, total}` (at the top or under `progress`), summed. */
export function downloadProgress(data: unknown): Progress | undefined {
  if (!isObject(data)) return undefined;
  const files = isObject(data.progress) ? data.progress : data;
  let done = 0;
  let total = 0;
  for (const f of Object.values(files)) {
    if (!isObject(f) || typeof f.done !== "number" || typeof f.total !== "number") continue;
    done += f.done;
    total += f.total;
  }
  if (total <= 0) return undefined;
  return { message: "Downloading model", ratio: done / total, detail: `${shortBytes(done)} / ${shortBytes(total)}` };
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const stop = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** A controller aborted when `outer` aborts (or at once when it already has). */
function child(outer?: AbortSignal): AbortController {
  const c = new AbortController();
  if (outer?.aborted) c.abort(outer.reason);
  else outer?.addEventListener("abort", () => c.abort(outer.reason), { once: true });
  return c;
}

export class LlamaRouter {
  readonly url: string;
  constructor(
    url: string,
    private readonly key?: string,
  ) {
    this.url = normalizeServerUrl(url);
  }

  private headers(): Record<string, string> {
    return this.key && this.key !== "local" ? { authorization: `Bearer ${this.key}` } : {};
  }

  private async request(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<unknown> {
    const headers = this.headers();
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const timeout = AbortSignal.timeout(15_000);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await fetch(this.url + path, { method: init.method ?? "GET", headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), signal });
    } catch (e) {
      if (init.signal?.aborted) throw e;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`could not reach the llama.cpp server at ${this.url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    const payload = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    if (!res.ok) throw new Error(payload?.error?.message || `llama.cpp answered HTTP ${res.status}`);
    return payload;
  }

  async list(signal?: AbortSignal): Promise<RouterModel[]> {
    const p = (await this.request("/models", { signal })) as { data?: unknown } | undefined;
    if (!p || !Array.isArray(p.data)) throw new Error("llama.cpp returned no model list");
    const ok = p.data.every((m) => m && typeof m.id === "string" && typeof m.status?.value === "string");
    if (!ok) throw new Error(`the server at ${this.url} is not a llama.cpp router (start \`llama serve\` without a model)`);
    return p.data as RouterModel[];
  }

  async load(id: string, signal?: AbortSignal): Promise<void> {
    await this.request("/models/load", { method: "POST", body: { model: id }, signal });
  }

  async unload(id: string): Promise<void> {
    await this.request("/models/unload", { method: "POST", body: { model: id } });
  }

  async download(id: string, signal?: AbortSignal): Promise<void> {
    await this.request("/models", { method: "POST", body: { model: id }, signal });
  }

  /**
   * Follow `GET /models/sse` until it ends or `signal` aborts, handing each well-formed event to
   * `onEvent` (a malformed one is skipped: the model list stays the authority).
   */
  async watch(onEvent: (e: RouterEvent) => void, signal: AbortSignal): Promise<void> {
    const res = await fetch(`${this.url}/models/sse`, { headers: { ...this.headers(), accept: "text/event-stream" }, signal });
    if (!res.ok || !res.body) throw new Error(`llama.cpp's event stream answered HTTP ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true }).replaceAll("\r\n", "\n");
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n");
        if (!data) continue;
        try {
          const e = JSON.parse(data) as Partial<RouterEvent>;
          if (typeof e?.model === "string" && typeof e.event === "string") onEvent(e as RouterEvent);
        } catch {
          // not JSON: skipped
        }
      }
    }
  }

  /**
   * Download `id` and wait until the router has it: progress from the event stream
   * (`download_progress`) and from the list's `downloading` status; done on `download_finished`
   * or when the list shows the model no longer downloading. Returns the list then.
   */
  async downloadAndWait(id: string, onProgress: (p: Progress) => void, signal?: AbortSignal): Promise<RouterModel[]> {
    const watcher = child(signal);
    let finished = false;
    let failure: string | undefined;
    let seen = false;
    void this.watch((e) => {
      if (e.model !== id) return;
      if (e.event === "download_finished") finished = true;
      else if (e.event === "download_failed") failure = (isObject(e.data) && isObject(e.data.error) && typeof e.data.error.message === "string" && e.data.error.message) || `downloading ${id} failed`;
      else if (e.event === "download_progress") {
        seen = true;
        const p = downloadProgress(e.data);
        if (p) onProgress(p);
      }
    }, watcher.signal).catch(() => {});
    try {
      await this.download(id, signal);
      onProgress({ message: "Downloading model" });
      for (let polls = 1; ; polls++) {
        if (failure) throw new Error(failure);
        const models = await this.list(signal);
        const m = models.find((x) => x.id === id);
        if (m?.status.value === "downloading") {
          seen = true;
          const p = downloadProgress(m.status.progress);
          if (p) onProgress(p);
        } else if (finished || (m && (seen || polls >= 2))) return models;
        await pause(500, signal);
      }
    } finally {
      watcher.abort();
    }
  }

  /**
   * Load `id` and wait until it serves: stage progress from the event stream (`model_status` /
   * `status_change`); the list decides, and a failed status (or an `unloaded` event) is an error.
   */
  async loadAndWait(id: string, onProgress: (p: Progress) => void, signal?: AbortSignal): Promise<RouterModel> {
    const watcher = child(signal);
    let loaded = false;
    let failure: string | undefined;
    void this.watch((e) => {
      if (e.model !== id || (e.event !== "model_status" && e.event !== "status_change")) return;
      const status = isObject(e.data) ? e.data.status : undefined;
      if (status === "loaded") loaded = true;
      if (status === "unloaded") failure = `llama.cpp could not load ${id}`;
      const p = loadProgress(e.data);
      if (p) onProgress(p);
    }, watcher.signal).catch(() => {});
    try {
      await this.load(id, signal);
      onProgress({ message: "Loading model" });
      for (;;) {
        const m = (await this.list(signal)).find((x) => x.id === id);
        if (m && isServing(m)) return m;
        if (loaded && !m) return { id, status: { value: "loaded" } };
        if (m?.status.failed || failure) {
          throw new Error(m?.status.exit_code === undefined ? (failure ?? `llama.cpp could not load ${id}`) : `${id} exited with code ${m.status.exit_code}`);
        }
        await pause(250, signal);
      }
    } finally {
      watcher.abort();
    }
  }

  /** Poll the list until `done` holds for model `id` (or the time is up). */
  async waitFor(id: string, done: (m: RouterModel | undefined) => boolean, timeoutMs = 600_000): Promise<RouterModel | undefined> {
    const t0 = Date.now();
    for (;;) {
      const m = (await this.list()).find((x) => x.id === id);
      if (done(m)) return m;
      if (m?.status.failed) throw new Error(`llama.cpp could not load ${id}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`${id} is still ${m?.status.value ?? "missing"} after ${Math.round(timeoutMs / 1000)} s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
