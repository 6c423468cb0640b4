/**
 * /login [provider] and /logout: the credentials in auth.json (written with mode 0600), as
 * `pi auth login` / `pi auth logout` keep them. /login signs in with an account through the OAuth
 * flows pi-ai (and extensions) offer, or stores an API key for any provider the model catalog or
 * models.json knows. /logout removes what /login stored; environment variables and models.json
 * stay as they are.
 */
import { join } from "node:path";
import type { AuthStorage, OAuthProvider } from "../../core/stores/index.js";
import type { AnyModel } from "../../core/kernel/index.js";
import { openInBrowser } from "../../core/kernel/lazy.js";
import type { CommandHost } from "./host.js";
import type { SelectItem } from "./layers.js";

type Method = "oauth" | "api_key";
interface LoginOption {
  id: string;
  name: string;
  method: Method;
  oauth?: OAuthProvider;
}

function storage(app: CommandHost): { auth: AuthStorage; file: string } | undefined {
  const registry = app.kernel.service("model-registry") as { authStorage?: AuthStorage } | undefined;
  if (!registry?.authStorage) {
    app.addNotice("No model registry is installed: nothing to log in to", "error");
    return undefined;
  }
  return { auth: registry.authStorage, file: registry.authStorage.path ?? join(app.kernel.agentDir, "auth.json") };
}

async function loginOptions(app: CommandHost, auth: AuthStorage): Promise<LoginOption[]> {
  const out: LoginOption[] = [];
  for (const p of await auth.listOAuthProviders()) out.push({ id: p.id, name: p.name ?? p.id, method: "oauth", oauth: p });
  const registry = app.kernel.service("model-registry") as { getAll(): AnyModel[] } | undefined;
  const providers = [...new Set((registry?.getAll() ?? []).map((m) => m.provider))].filter((p) => p !== "faux");
  // llama.cpp's models come from its router once it is configured: offered whenever the plugin is on.
  if (app.kernel.hasService("llama-cpp") && !providers.includes("llama.cpp")) providers.push("llama.cpp");
  for (const id of providers.sort()) out.push({ id, name: id, method: "api_key" });
  return out;
}

async function statusText(auth: AuthStorage, id: string): Promise<string | undefined> {
  const st = await auth.getAuthStatus(id, false);
  if (!st.configured) return undefined;
  const stored = auth.get(id);
  if (st.source === "stored") return stored?.type === "oauth" ? "✓ signed in" : "✓ API key stored";
  return `✓ ${st.label ?? st.source}`;
}

export async function login(app: CommandHost, arg: string): Promise<void> {
  const st = storage(app);
  if (!st) return;
  const { auth } = st;
  const all = await loginOptions(app, auth);
  let candidates = all;
  if (arg) {
    const q = arg.toLowerCase();
    candidates = all.filter((o) => o.id.toLowerCase() === q || o.name.toLowerCase() === q);
    if (!candidates.length) candidates = all.filter((o) => o.id.toLowerCase().includes(q) || o.name.toLowerCase().includes(q));
    if (!candidates.length) return app.addNotice(`Unknown provider "${arg}" (known: ${[...new Set(all.map((o) => o.id))].join(", ")})`, "error");
  }
  const ids = new Set(candidates.map((o) => o.id));
  let method: Method | undefined;
  const methods = new Set(candidates.map((o) => o.method));
  if (methods.size > 1) {
    const title = ids.size === 1 ? `Sign in to ${candidates[0]!.name} with` : "Sign in with";
    method = await app.select(title, [
      { label: "An account (browser sign-in)", value: "oauth" as const },
      { label: "An API key", value: "api_key" as const },
    ]);
    if (!method) return;
    candidates = candidates.filter((o) => o.method === method);
  }
  let picked: LoginOption | undefined = candidates.length === 1 ? candidates[0] : undefined;
  if (!picked) {
    const items: SelectItem<LoginOption>[] = [];
    for (const o of candidates) items.push({ label: o.name === o.id ? o.id : `${o.name} (${o.id})`, description: await statusText(auth, o.id), value: o, searchText: `${o.id} ${o.name}` });
    picked = await app.select(candidates[0]?.method === "oauth" ? "Sign in to" : "Store an API key for", items, { search: true, maxVisible: 12 });
    if (!picked) return;
  }
  const hadModel = !!app.session.model;
  try {
    if (picked.method === "oauth") await oauthLogin(app, auth, picked);
    else if (picked.id === "llama.cpp" && app.kernel.hasService("llama-cpp")) {
      const done = await llamaLogin(app);
      if (done) app.addNotice(`${done} Credentials saved to ${st.file}`, "success");
      return;
    } else {
      const key = await app.input(`API key for ${picked.name}`, { placeholder: "paste the key", message: `Stored in ${st.file} (only you can read it).` });
      if (key === undefined) return app.addNotice("Login cancelled", "info");
      if (!key.trim()) return app.addNotice(`No API key given for ${picked.name}; nothing saved`, "warning");
      if (!auth.set(picked.id, { type: "api_key", key: key.trim() })) return app.addNotice(`Could not write ${st.file}`, "error");
    }
  } catch (e) {
    const msg = (e as Error).message;
    if (/cancel/i.test(msg)) return app.addNotice("Login cancelled", "info");
    return app.addNotice(`Could not sign in to ${picked.name}: ${msg}`, "error");
  } finally {
    app.setStatusLine(undefined);
    app.cancelBusy = undefined;
  }
  const done = picked.method === "oauth" ? `Logged in to ${picked.name}` : `Saved the API key for ${picked.name}`;
  let chosen = "";
  if (!hadModel) {
    const registry = app.kernel.service("model-registry") as { getAvailable(): Promise<AnyModel[]> } | undefined;
    const first = (await registry?.getAvailable())?.find((m) => m.provider === picked!.id);
    if (first) {
      await app.session.setModel(first, "set", true, false);
      chosen = ` Selected ${first.provider}/${first.id}.`;
    }
  }
  app.addNotice(`${done}.${chosen} Credentials saved to ${st.file}`, "success");
}

/** /login llama.cpp: the router's address and an optional key, checked against the router. */
async function llamaLogin(app: CommandHost): Promise<string | undefined> {
  const llama = app.kernel.service("llama-cpp")!;
  const fallback = process.env.LLAMA_BASE_URL || "http://127.0.0.1:9931";
  const url = await app.input("llama.cpp server URL", { placeholder: fallback });
  if (url === undefined) return void app.addNotice("Login cancelled", "info");
  const key = await app.input("API key (optional)", { placeholder: "empty when the server has none" });
  if (key === undefined) return void app.addNotice("Login cancelled", "info");
  app.setStatusLine("Checking the llama.cpp server…");
  const models = await llama.configure(url.trim() || fallback, key.trim());
  const serving = models.filter((m) => m.status.value === "loaded" || m.status.value === "sleeping");
  return serving.length
    ? "Saved the llama.cpp server. /model selects a loaded model, /llama manages them."
    : "Saved the llama.cpp server. No model is loaded: /llama loads one, then /model selects it.";
}

async function oauthLogin(app: CommandHost, auth: AuthStorage, o: LoginOption): Promise<void> {
  const ac = new AbortController();
  app.cancelBusy = () => ac.abort();
  app.setStatusLine(`Signing in to ${o.name}… (Esc cancels)`);
  const aborted = new Promise<never>((_, reject) => ac.signal.addEventListener("abort", () => reject(new Error("Login cancelled")), { once: true }));
  const flow = auth.login(o.id, {
    onAuth: (info: { url: string; instructions?: string }) => {
      app.addNotice(`Open this address to sign in to ${o.name}:\n${info.url}${info.instructions ? `\n${info.instructions}` : ""}`, "info");
      void openBrowser(info.url);
    },
    onPrompt: async (p: { message: string; placeholder?: string }) => {
      const v = await app.input(p.message, { placeholder: p.placeholder });
      if (v === undefined) throw new Error("Login cancelled");
      return v.trim();
    },
    onProgress: (m: string) => app.setStatusLine(m),
    onManualCodeInput: async () => {
      const v = await app.input("Paste the redirect address or the code", {});
      if (v === undefined) throw new Error("Login cancelled");
      return v.trim();
    },
    onSelect: async (p: { message: string; options: Array<{ id: string; label: string }> }) =>
      app.select(p.message, p.options.map((x) => ({ label: x.label, value: x.id }))),
    signal: ac.signal,
  });
  flow.catch(() => undefined);
  await Promise.race([flow, aborted]);
}

async function openBrowser(url: string): Promise<void> {
  if (process.env.PI_NO_BROWSER || (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY && process.platform === "linux")) return;
  await openInBrowser(url);
}

export async function logout(app: CommandHost): Promise<void> {
  const st = storage(app);
  if (!st) return;
  const { auth } = st;
  const stored = auth.list();
  if (!stored.length) {
    return app.addNotice("No stored credentials to remove (/logout removes what /login saved; environment variables and models.json are unchanged)", "info");
  }
  const picked = await app.select(
    "Remove the stored credentials of",
    stored.sort().map((id) => ({ label: id, description: auth.get(id)?.type === "oauth" ? "account sign-in" : "API key", value: id })),
  );
  if (!picked) return;
  const type = auth.get(picked)?.type;
  if (!auth.logout(picked)) return app.addNotice(`Could not update ${st.file}`, "error");
  app.addNotice(
    type === "oauth" ? `Logged out of ${picked}` : `Removed the stored API key for ${picked}. Environment variables and models.json are unchanged.`,
    "success",
  );
}
