/**
 * The llama.cpp router's HTTP API (`llama serve` without a model): `GET /models` lists the models
 * it knows with their status, `POST /models/load` and `/models/unload` start and stop one,
 * `POST /models` downloads one from Hugging Face. Chat goes to `<server>/v1` (OpenAI
 * Chat Completions).
 */

export const DEFAULT_LLAMA_SERVER_URL = "http://127.0.0.1:9931";

export interface RouterModel {
  id: string;
  status: { value: string; failed?: boolean };
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

export class LlamaRouter {
  readonly url: string;
  constructor(
    url: string,
    private readonly key?: string,
  ) {
    this.url = normalizeServerUrl(url);
  }

  private async request(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) headers["content-type"] = "application/json";
    if (this.key && this.key !== "local") headers.authorization = `Bearer ${this.key}`;
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

  async load(id: string): Promise<void> {
    await this.request("/models/load", { method: "POST", body: { model: id } });
  }

  async unload(id: string): Promise<void> {
    await this.request("/models/unload", { method: "POST", body: { model: id } });
  }

  async download(id: string): Promise<void> {
    await this.request("/models", { method: "POST", body: { model: id } });
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
