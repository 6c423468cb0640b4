/**
 * llama.cpp: pi 1.6's built-in `llama.cpp` extension as a plugin. The provider "llama.cpp" serves
 * the models a llama.cpp router has loaded (or put to sleep) through its OpenAI-compatible
 * `/v1`; `/login llama.cpp` stores the router's address (and an optional key) in auth.json as
 * `{"type": "api_key", "key": …, "env": {"LLAMA_BASE_URL": …}}`, or LLAMA_BASE_URL / LLAMA_API_KEY
 * configure it; `/llama` (terminal UI) lists the router's models: choosing one loads or unloads
 * it, "Download model…" searches Hugging Face for GGUF models (or takes an exact
 * `owner/repository[:quant]`), asks for a quantization and has the router fetch it; a download
 * and a load show a progress view (Esc stops them: the router unloads the model). Turned off by
 * `-builtin:llama.cpp` (or `!builtin:*`) in the global `extensions` setting and by
 * `--no-extensions`, as in 1.6.
 */
import { type Kernel, definePlugin, type ExtensionUI, resolveBuiltinExtensions } from "../../core/kernel/index.js";
import { DEFAULT_LLAMA_SERVER_URL, isServing, LlamaRouter, normalizeServerUrl, type RouterModel } from "./client.js";
import { EXACT_MODEL, HuggingFace, huggingFaceToken, shortBytes, shortCount } from "./huggingface.js";
import { runWithProgress } from "./progress.js";

export const LLAMA_PROVIDER = "llama.cpp";

interface StoredLlama {
  type: "api_key";
  key: string;
  env?: { LLAMA_BASE_URL?: string };
}

type CredentialStore = { get(p: string): unknown; set(p: string, c: unknown): boolean; path?: string };

function authStorage(kernel: Kernel): CredentialStore | undefined {
  return (kernel.service("model-registry") as { authStorage?: CredentialStore } | undefined)?.authStorage;
}

/** The router to talk to: the stored credential's address, else LLAMA_BASE_URL; undefined when neither. */
export function configuredRouter(kernel: Kernel): LlamaRouter | undefined {
  const stored = authStorage(kernel)?.get(LLAMA_PROVIDER) as StoredLlama | undefined;
  const url = stored?.env?.LLAMA_BASE_URL ?? process.env.LLAMA_BASE_URL;
  if (!url?.trim()) return undefined;
  try {
    return new LlamaRouter(url, stored?.key ?? process.env.LLAMA_API_KEY);
  } catch {
    return undefined;
  }
}

/** Publish the router's serving models as the provider's models (replacing the last list). */
function publish(kernel: Kernel, router: LlamaRouter, models: RouterModel[], state: { off?: () => void }): void {
  state.off?.();
  const ctx = (m: RouterModel) => (m.meta?.n_ctx && m.meta.n_ctx > 0 ? m.meta.n_ctx : m.meta?.n_ctx_train && m.meta.n_ctx_train > 0 ? m.meta.n_ctx_train : 128_000);
  const serving = models.filter(isServing).filter((m) => !(m.architecture?.output_modalities?.includes("decisions") && !m.architecture.output_modalities.includes("text")));
  state.off = kernel.models.register(
    LLAMA_PROVIDER,
    {
      name: LLAMA_PROVIDER,
      baseUrl: `${router.url}/v1`,
      api: "openai-completions",
      keyless: true,
      models: serving.map((m) => ({
        id: m.id,
        name: m.id,
        reasoning: false,
        input: m.architecture?.input_modalities?.includes("image") ? ["text", "image"] : ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: ctx(m),
        maxTokens: ctx(m),
        compat: { supportsStore: false, supportsReasoningEffort: false, supportsUsageInStreaming: true, maxTokensField: "max_tokens" },
      })),
    },
    LLAMA_PROVIDER,
    { override: true },
  );
}

export interface LlamaService {
  /** Re-read the router's models into the provider; returns them (throws when unreachable). */
  refresh(router?: LlamaRouter): Promise<RouterModel[]>;
  /** Check the router answers, store its address and key, and read its models. */
  configure(url: string, key: string): Promise<RouterModel[]>;
}

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    /** The llama.cpp plugin: read the router's models, store its address (/login llama.cpp). */
    "llama-cpp": LlamaService;
  }
}

export default definePlugin({
  name: "llama.cpp",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "llama.cpp router models: the llama.cpp provider, /llama, /login llama.cpp",
  setup(api) {
    const kernel = api.kernel;
    const argv = kernel.service("argv");
    const on = resolveBuiltinExtensions({ global: kernel.settings.getGlobal().extensions, noExtensions: argv?.flags["no-extensions"] === true }).enabled.has("llama.cpp");
    if (!on) return;
    const state: { off?: () => void } = {};
    const service: LlamaService = {
      async refresh(router = configuredRouter(kernel)) {
        if (!router) throw new Error(`llama.cpp is not configured: run /login ${LLAMA_PROVIDER} (or set LLAMA_BASE_URL)`);
        const models = await router.list();
        publish(kernel, router, models, state);
        return models;
      },
      async configure(url, key) {
        const router = new LlamaRouter(normalizeServerUrl(url || process.env.LLAMA_BASE_URL || DEFAULT_LLAMA_SERVER_URL), key || undefined);
        const models = await router.list();
        const auth = authStorage(kernel);
        if (!auth?.set(LLAMA_PROVIDER, { type: "api_key", key: key || "local", env: { LLAMA_BASE_URL: router.url } })) {
          throw new Error(`could not write ${auth?.path ?? "auth.json"}`);
        }
        publish(kernel, router, models, state);
        return models;
      },
    };
    api.provide("llama-cpp", service);
    // The router's current models, read once per process when it is configured (never offline).
    let read = false;
    api.on("session_start", () => {
      if (read || process.env.PI_OFFLINE === "1") return;
      read = true;
      const router = configuredRouter(kernel);
      if (router) void service.refresh(router).catch((e: Error) => api.report("warning", `llama.cpp: ${e.message}`));
    });
    api.registerCommand({
      name: "llama",
      description: "Manage llama.cpp router models",
      source: "extension",
      path: "builtin:llama.cpp",
      handler: async (_args: string, ctx: { mode?: string }) => {
        const ui = kernel.service("ui") as ExtensionUI | undefined;
        if (ctx?.mode !== "tui" || !ui) return ui?.notify?.("/llama is available in interactive mode", "warning");
        const router = configuredRouter(kernel);
        if (!router) return ui.notify(`Configure llama.cpp with /login ${LLAMA_PROVIDER}`, "warning");
        await manage(ui, router, service);
      },
    });
  },
});

const DOWNLOAD = "Download model…";

async function manage(ui: ExtensionUI, router: LlamaRouter, service: LlamaService): Promise<void> {
  for (;;) {
    let models: RouterModel[];
    try {
      models = await service.refresh(router);
    } catch (e) {
      const again = await ui.select(`llama.cpp unavailable: ${router.url}\n${(e as Error).message}`, ["Retry", "Close"]);
      if (again === "Retry") continue;
      return;
    }
    const label = (m: RouterModel) => `${m.id}  (${m.status.value}${m.status.failed ? ", failed" : ""})`;
    const picked: string | undefined = await ui.select(`llama.cpp models at ${router.url}\nEnter loads an unloaded model and unloads a loaded one`, [...models.map(label), DOWNLOAD]);
    if (!picked) return;
    try {
      if (picked === DOWNLOAD) {
        const id = await chooseDownload(ui);
        if (!id) continue;
        const done = await runWithProgress(ui, {
          title: "Downloading model",
          model: id,
          stopTitle: "Stop download?",
          run: (signal, update) => router.downloadAndWait(id, update, signal),
          cancel: () => router.unload(id),
        });
        if (!done.cancelled) {
          await service.refresh(router);
          ui.notify(`Downloaded ${id}`);
        }
        continue;
      }
      const m = models.find((x) => label(x) === picked)!;
      if (isServing(m)) {
        if (!(await ui.confirm("Unload model?", m.id))) continue;
        await router.unload(m.id);
        await router.waitFor(m.id, (x) => !x || x.status.value === "unloaded");
        ui.notify(`Unloaded ${m.id}`);
      } else if (m.status.value === "unloaded") {
        const others = models.filter((x) => x.id !== m.id && isServing(x));
        let replaced: RouterModel[] = [];
        if (others.length) {
          const choice = await ui.select(`${others.length} other model${others.length === 1 ? " is" : "s are"} loaded`, ["Unload them and load", "Keep them loaded", "Cancel"]);
          if (!choice || choice === "Cancel") continue;
          if (choice === "Unload them and load") replaced = others;
          for (const o of replaced) {
            await router.unload(o.id);
            await router.waitFor(o.id, (x) => !x || x.status.value === "unloaded");
          }
        }
        // A load stopped or failed after unloading the others brings them back.
        const restore = async () => {
          if (!replaced.length) return;
          ui.notify(`Loading again what was loaded: ${replaced.map((o) => o.id).join(", ")}`);
          for (const o of replaced) await router.loadAndWait(o.id, () => {});
        };
        let done;
        try {
          done = await runWithProgress(ui, {
            title: "Loading model",
            model: m.id,
            stopTitle: "Stop loading?",
            run: (signal, update) => router.loadAndWait(m.id, update, signal),
            cancel: () => router.unload(m.id),
          });
        } catch (e) {
          await restore().catch(() => {});
          throw e;
        }
        if (done.cancelled) await restore();
        else {
          const now = (await service.refresh(router)).find((x) => x.id === m.id);
          ui.notify(now && isServing(now) ? `Loaded ${m.id}; /model selects it` : `Load started for ${m.id}`);
        }
      } else ui.notify(`${m.id} is ${m.status.value}`, "warning");
    } catch (e) {
      ui.notify((e as Error).message, "error");
    }
  }
}

/**
 * "Download model…": a name searched on Hugging Face (GGUF repositories, most downloaded first) or
 * an exact `owner/repository[:quant]`; then, for a gated repository, its access terms; then the
 * quantization when none was named. The model id for the router, or undefined (Esc, or an error
 * already shown).
 */
async function chooseDownload(ui: ExtensionUI): Promise<string | undefined> {
  const hub = new HuggingFace(await huggingFaceToken());
  for (;;) {
    const query = (await ui.input("Download model: search Hugging Face, or owner/repository[:quant]", "e.g. gemma 3 1b"))?.trim();
    if (!query) return undefined;
    let repo = query;
    let quant: string | undefined;
    if (EXACT_MODEL.test(query)) {
      const colon = query.indexOf(":");
      if (colon > 0) [repo, quant] = [query.slice(0, colon), query.slice(colon + 1)];
    } else {
      if (query.length < 2) {
        ui.notify("Type at least 2 characters to search", "warning");
        continue;
      }
      let found;
      try {
        found = await hub.search(query);
      } catch (e) {
        ui.notify(`Hugging Face search failed: ${(e as Error).message}`, "error");
        continue;
      }
      if (!found.length) {
        ui.notify(`No GGUF models on Hugging Face match "${query}"`, "warning");
        continue;
      }
      const rows = found.map((m) => `${m.id}  ${shortCount(m.downloads)} downloads`);
      const row = await ui.select(`GGUF models on Hugging Face for "${query}"`, rows);
      if (!row) continue;
      repo = found[rows.indexOf(row)]!.id;
    }
    let details;
    try {
      details = await hub.details(repo);
    } catch (e) {
      ui.notify(`Hugging Face: ${(e as Error).message}`, "error");
      continue;
    }
    if (details.gated) {
      const terms = details.gated === "manual" ? "Access needs the owner's approval" : "Access needs the terms accepted";
      const go = await ui.select(`${details.id} is gated on Hugging Face\n${terms}: ${hub.url}/${details.id}\nThe llama.cpp server needs an HF_TOKEN that has access.`, ["Continue", "Back"]);
      if (go !== "Continue") continue;
    }
    if (!quant && details.quantizations.length) {
      const rows = details.quantizations.map((q) => [q.name, q.size === undefined ? "" : shortBytes(q.size), q.name === "Q4_K_M" ? "recommended" : ""].filter(Boolean).join(" · "));
      const row = await ui.select(`Quantization of ${details.id}`, rows);
      if (!row) continue;
      quant = details.quantizations[rows.indexOf(row)]!.name;
    }
    return quant ? `${details.id}:${quant}` : details.id;
  }
}
