/**
 * Finding GGUF models on Hugging Face for /llama's "Download model…": a search by name (most
 * downloaded first) and a repository's quantizations with their sizes and whether access is
 * gated. The address is https://huggingface.co unless HF_ENDPOINT names another (the Hugging Face
 * tools' own variable: a mirror, or a local server in tests). A token, when there is one, comes
 * from HF_TOKEN, else the token file the Hugging Face tools write.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

export const HUGGING_FACE_URL = "https://huggingface.co";

export interface HubModel {
  id: string;
  downloads: number;
}

export interface Quantization {
  name: string;
  /** Bytes of all its files (undefined when a file's size is unknown). */
  size?: number;
}

export interface HubDetails {
  id: string;
  gated: false | "auto" | "manual";
  /** Q4_K_M first (the usual choice), then smallest first. */
  quantizations: Quantization[];
}

/** "owner/repository" or "owner/repository:QUANT": a model to download as typed, without a search. */
export const EXACT_MODEL = /^[^/\s]+\/[^:\s]+(?::[^\s:]+)?$/;

/** The token for Hugging Face: HF_TOKEN, else the first token file found. */
export async function huggingFaceToken(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.HF_TOKEN?.trim()) return env.HF_TOKEN.trim();
  const files = [
    env.HF_TOKEN_PATH,
    env.HF_HOME && join(env.HF_HOME, "token"),
    env.XDG_CACHE_HOME && join(env.XDG_CACHE_HOME, "huggingface", "token"),
    join(homedir(), ".cache", "huggingface", "token"),
  ];
  for (const f of files) {
    if (!f) continue;
    const token = (await readFile(f, "utf8").catch(() => "")).trim();
    if (token) return token;
  }
  return undefined;
}

/** "Q4_K_M", "IQ3_XXS", "UD-Q4_K_XL", "BF16", "F16", "MXFP4" at the end of a file's stem. */
const QUANT = /(?:^|[-_.])((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)+|BF16|F16|F32|MXFP\d(?:_[A-Z0-9]+)*))$/i;
const SHARD = /-\d{5}-of-\d{5}$/;

/** Group a repository's GGUF files by quantization (shards summed, projector files left out). */
export function quantizationsOf(files: Array<{ rfilename?: unknown; size?: unknown }>): Quantization[] {
  const sizes = new Map<string, number | undefined>();
  for (const f of files) {
    if (typeof f.rfilename !== "string" || !/\.gguf$/i.test(f.rfilename)) continue;
    const name = f.rfilename.split("/").pop()!;
    if (/^mmproj/i.test(name)) continue;
    const q = QUANT.exec(name.slice(0, -5).replace(SHARD, ""))?.[1]?.toUpperCase();
    if (!q) continue;
    const had = sizes.has(q) ? sizes.get(q) : 0;
    sizes.set(q, had === undefined || typeof f.size !== "number" ? undefined : had + f.size);
  }
  return [...sizes]
    .map(([name, size]) => ({ name, size }))
    .sort((a, b) => Number(b.name === "Q4_K_M") - Number(a.name === "Q4_K_M") || (a.size ?? Infinity) - (b.size ?? Infinity) || a.name.localeCompare(b.name));
}

export class HuggingFace {
  readonly url: string;
  constructor(
    private readonly token?: string,
    url = process.env.HF_ENDPOINT?.trim() || HUGGING_FACE_URL,
  ) {
    this.url = url.replace(/\/+$/, "");
  }

  private async get(path: string, signal?: AbortSignal): Promise<unknown> {
    const timeout = AbortSignal.timeout(15_000);
    let res: Response;
    try {
      res = await fetch(this.url + path, {
        headers: this.token ? { authorization: `Bearer ${this.token}` } : {},
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`could not reach Hugging Face at ${this.url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
    if (res.status === 429) {
      const wait = Number(res.headers.get("retry-after")) || Number(/(?:^|;)t=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1]);
      throw new Error(`Hugging Face rate limit reached${wait ? `; retry in ${wait}s` : ""}`);
    }
    if (!res.ok) throw new Error(typeof body?.error === "string" && body.error ? body.error : `Hugging Face answered HTTP ${res.status}`);
    return body;
  }

  /** GGUF repositories matching `query`, most downloaded first (at most 20). */
  async search(query: string, signal?: AbortSignal): Promise<HubModel[]> {
    const q = new URLSearchParams({ search: query, filter: "gguf", sort: "downloads", direction: "-1", limit: "20" });
    const list = await this.get(`/api/models?${q}`, signal);
    if (!Array.isArray(list)) throw new Error("Hugging Face sent no list of models");
    return list
      .filter((m): m is { id: string; downloads?: unknown } => typeof m?.id === "string")
      .map((m) => ({ id: m.id, downloads: typeof m.downloads === "number" ? m.downloads : 0 }));
  }

  /** A repository's quantizations and access terms. */
  async details(id: string, signal?: AbortSignal): Promise<HubDetails> {
    const m = (await this.get(`/api/models/${id.split("/").map(encodeURIComponent).join("/")}?blobs=true`, signal)) as
      | { id?: unknown; gated?: unknown; siblings?: unknown }
      | undefined;
    if (!m || typeof m !== "object") throw new Error(`Hugging Face sent no details for ${id}`);
    return {
      id: typeof m.id === "string" ? m.id : id,
      gated: m.gated === "auto" || m.gated === "manual" ? m.gated : false,
      quantizations: quantizationsOf(Array.isArray(m.siblings) ? m.siblings : []),
    };
  }
}

/** 1234567 → "1.2M", 45678 → "45.7k", 123456 → "123k". */
export function shortCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(n >= 1e5 ? 0 : 1)}k`;
  return String(n);
}

/** Bytes in binary units: "4.68 GiB", "820.0 MiB". */
export function shortBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n / 1024;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 10 ? 1 : 2)} ${units[i]}`;
}
