import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthStorage, fromOAuthFlow, type OAuthFlow, type OAuthTokens } from "./auth-storage.js";
import { ModelRegistry } from "./model-registry.js";
import { clearConfigValueCache } from "./config-value.js";

let dir: string;
const savedEnv: Record<string, string | undefined> = {};
function setEnv(name: string, value: string | undefined) {
  if (!(name in savedEnv)) savedEnv[name] = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-auth-"));
  clearConfigValueCache();
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    delete savedEnv[k];
  }
});

describe("AuthStorage resolution", () => {
  it("orders runtime key > auth.json > environment > models.json apiKey", async () => {
    const authPath = join(dir, "auth.json");
    writeFileSync(authPath, JSON.stringify({ openai: { type: "api_key", key: "from-auth-json" } }));
    const modelsPath = join(dir, "models.json");
    writeFileSync(modelsPath, JSON.stringify({ providers: { openai: { apiKey: "from-models-json" } } }));
    setEnv("OPENAI_API_KEY", "from-env");
    const auth = AuthStorage.create(authPath);
    const registry = ModelRegistry.create(auth, modelsPath, { catalog: () => ({}) });
    auth.setRuntimeApiKey("openai", "from-runtime");

    expect(await registry.getApiKeyForProvider("openai")).toBe("from-runtime");
    auth.removeRuntimeApiKey("openai");
    expect(await registry.getApiKeyForProvider("openai")).toBe("from-auth-json");
    auth.remove("openai");
    expect(await registry.getApiKeyForProvider("openai")).toBe("from-env");
    setEnv("OPENAI_API_KEY", undefined);
    expect(await registry.getApiKeyForProvider("openai")).toBe("from-models-json");
    // the auth storage's own fallback reaches the models.json key too
    expect(await auth.getApiKey("openai")).toBe("from-models-json");
    expect(await auth.getApiKey("openai", { includeFallback: false })).toBeUndefined();
  });

  it("never persists the runtime key", async () => {
    const authPath = join(dir, "auth.json");
    const auth = AuthStorage.create(authPath);
    auth.setRuntimeApiKey("anthropic", "sk-runtime");
    expect(await auth.getApiKey("anthropic")).toBe("sk-runtime");
    expect(existsSync(authPath)).toBe(false);
    expect((await auth.getAuthStatus("anthropic")).source).toBe("runtime");
  });

  it("uses pi-ai's environment variable names per provider", async () => {
    setEnv("ANTHROPIC_OAUTH_TOKEN", undefined);
    setEnv("ANTHROPIC_API_KEY", "sk-ant-env");
    setEnv("GEMINI_API_KEY", "gem-env");
    const auth = AuthStorage.inMemory();
    expect(await auth.getApiKey("anthropic")).toBe("sk-ant-env");
    expect(await auth.getApiKey("google")).toBe("gem-env");
    expect(await auth.getAuthStatus("google")).toEqual({ configured: true, source: "environment", label: "GEMINI_API_KEY" });
    expect(await auth.getApiKey("no-such-provider")).toBeUndefined();
    expect(await auth.hasAuth("no-such-provider")).toBe(false);
  });

  it("resolves a key that names an environment variable, else uses it literally", async () => {
    setEnv("PI_TEST_KEY_VAR_1", "value-from-var");
    const auth = AuthStorage.inMemory({
      a: { type: "api_key", key: "PI_TEST_KEY_VAR_1" },
      b: { type: "api_key", key: "PI_TEST_KEY_VAR_UNSET_2" },
      c: { type: "api_key", key: "sk-literal" },
    });
    setEnv("PI_TEST_KEY_VAR_UNSET_2", undefined);
    expect(await auth.getApiKey("a")).toBe("value-from-var");
    expect(await auth.getApiKey("b")).toBe("PI_TEST_KEY_VAR_UNSET_2");
    expect(await auth.getApiKey("c")).toBe("sk-literal");
  });

  it("runs a !command once, trims its output and caches it", async () => {
    const counter = join(dir, "runs.txt");
    const auth = AuthStorage.inMemory({ p: { type: "api_key", key: `!echo run >> '${counter}'; printf '  cmd-key \\n'` } });
    expect(await auth.getApiKey("p")).toBe("cmd-key");
    expect(await auth.getApiKey("p")).toBe("cmd-key");
    expect(readFileSync(counter, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("treats a failing command as no key and reports it", async () => {
    const auth = AuthStorage.inMemory({ p: { type: "api_key", key: "!exit 3" } });
    expect(await auth.getApiKey("p", { includeFallback: false })).toBeUndefined();
    expect(auth.diagnostics.some((d) => /exited with code 3/.test(d.message))).toBe(true);
  });
});

describe("auth.json file handling", () => {
  it("creates the file (and its folder) with mode 0600 on the first write, keeping others' entries", () => {
    const authPath = join(dir, "agent", "nested", "auth.json");
    const auth = AuthStorage.create(authPath);
    expect(existsSync(authPath)).toBe(false);
    expect(auth.set("openai", { type: "api_key", key: "sk-1" })).toBe(true);
    expect(statSync(authPath).mode & 0o777).toBe(0o600);
    // another process adds an entry meanwhile; our next write keeps it
    const onDisk = JSON.parse(readFileSync(authPath, "utf8"));
    onDisk.groq = { type: "api_key", key: "gsk" };
    writeFileSync(authPath, JSON.stringify(onDisk));
    auth.set("anthropic", { type: "api_key", key: "sk-2" });
    const after = JSON.parse(readFileSync(authPath, "utf8"));
    expect(Object.keys(after).sort()).toEqual(["anthropic", "groq", "openai"]);
    expect(statSync(authPath).mode & 0o777).toBe(0o600);
    expect(auth.remove("openai")).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(authPath, "utf8"))).sort()).toEqual(["anthropic", "groq"]);
  });

  it("reports a malformed file with its position, ignores it and never rewrites it", async () => {
    const authPath = join(dir, "auth.json");
    const text = '{\n  "openai": { "type": "api_key", "key": "sk" },\n  oops\n}\n';
    writeFileSync(authPath, text);
    setEnv("OPENAI_API_KEY", undefined);
    const auth = AuthStorage.create(authPath);
    expect(auth.isBroken).toBe(true);
    const d = auth.diagnostics[0]!;
    expect(d.level).toBe("error");
    expect(d.source).toBe(authPath);
    expect(d.message).toMatch(/line 3, column 3/);
    expect(auth.get("openai")).toBeUndefined();
    expect(await auth.getApiKey("openai")).toBeUndefined();
    expect(auth.set("openai", { type: "api_key", key: "new" })).toBe(false);
    expect(readFileSync(authPath, "utf8")).toBe(text);
    expect(auth.diagnostics.some((x) => x.level === "warning" && /not saving/.test(x.message))).toBe(true);
  });

  it("ignores a malformed entry with a warning and keeps the others", () => {
    const authPath = join(dir, "auth.json");
    writeFileSync(authPath, JSON.stringify({ good: { type: "api_key", key: "k" }, bad: { type: "password", key: "x" } }));
    const auth = AuthStorage.create(authPath);
    expect(auth.list()).toEqual(["good"]);
    expect(auth.diagnostics).toHaveLength(1);
    expect(auth.diagnostics[0]!.message).toMatch(/"bad" ignored/);
  });

  it("in-memory storage never touches the disk and copies its input", () => {
    const data = { x: { type: "api_key" as const, key: "k" } };
    const auth = AuthStorage.inMemory(data);
    auth.set("y", { type: "api_key", key: "k2" });
    expect(auth.list().sort()).toEqual(["x", "y"]);
    expect(Object.keys(data)).toEqual(["x"]);
    expect(auth.path).toBeUndefined();
  });
});

describe("OAuth credentials", () => {
  it("uses the access token while valid and refreshes (and saves) it when expired", async () => {
    const authPath = join(dir, "auth.json");
    writeFileSync(authPath, JSON.stringify({ corp: { type: "oauth", access: "old-access", refresh: "r1", expires: Date.now() + 60_000 } }));
    const auth = AuthStorage.create(authPath);
    const refreshed: OAuthTokens[] = [];
    auth.registerOAuthProvider({
      id: "corp",
      name: "Corp",
      getApiKey: (c) => `key:${c.access}`,
      refreshToken: async (c) => {
        refreshed.push(c);
        return { access: "new-access", refresh: "r2", expires: Date.now() + 3_600_000 };
      },
    });
    expect(await auth.getApiKey("corp")).toBe("key:old-access");
    expect(refreshed).toHaveLength(0);

    auth.set("corp", { type: "oauth", access: "old-access", refresh: "r1", expires: Date.now() - 1 });
    const [a, b] = await Promise.all([auth.getApiKey("corp"), auth.getApiKey("corp")]);
    expect(a).toBe("key:new-access");
    expect(b).toBe("key:new-access");
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]!.refresh).toBe("r1");
    const saved = JSON.parse(readFileSync(authPath, "utf8")).corp;
    expect(saved).toMatchObject({ type: "oauth", access: "new-access", refresh: "r2" });
  });
});

describe("pi-ai 1.6's OAuth flows", () => {
  it("the built-in ones are listed and found by id, their API key the access token", async () => {
    const auth = AuthStorage.inMemory();
    const ids = (await auth.listOAuthProviders()).map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(["anthropic", "github-copilot", "openai-codex", "radius"]));
    const anthropic = await auth.getOAuthProvider("anthropic");
    expect(anthropic?.name).toBe("Anthropic (Claude Pro/Max)");
    expect(anthropic?.getApiKey({ access: "tok-a", refresh: "r", expires: 1 })).toBe("tok-a");
    expect(await auth.getOAuthProvider("no-such-provider")).toBeUndefined();
  });

  it("a flow's prompts and notices reach the old-style callbacks; credentials lose and regain their type tag", async () => {
    const asked: string[] = [];
    const seen: unknown[] = [];
    let refreshedWith: unknown;
    const flow: OAuthFlow = {
      name: "Fake",
      async login(io) {
        io.notify({ type: "auth_url", url: "https://auth.example/x", instructions: "open it" });
        io.notify({ type: "device_code", userCode: "AB-12", verificationUri: "https://auth.example/device" });
        io.notify({ type: "progress", message: "waiting" });
        const plan = await io.prompt({ type: "select", message: "Plan?", options: [{ id: "pro", label: "Pro" }, { id: "max", label: "Max" }] });
        const code = await io.prompt({ type: "manual_code", message: "Paste the code" });
        const name = await io.prompt({ type: "text", message: "Name?", placeholder: "you" });
        return { type: "oauth", access: `${plan}:${code}:${name}`, refresh: "r1", expires: 5 };
      },
      async refresh(credential) {
        refreshedWith = credential;
        return { type: "oauth", access: "a2", refresh: "r2", expires: 9 };
      },
    };
    const p = fromOAuthFlow("fake", flow);
    const tokens = await p.login!({
      onAuth: (info: unknown) => seen.push(info),
      onProgress: (m: string) => seen.push(m),
      onSelect: async (q: { options: { id: string }[] }) => (asked.push("select"), q.options[1]!.id),
      onManualCodeInput: async () => (asked.push("code"), "C0DE"),
      onPrompt: async (q: { message: string; placeholder?: string }) => (asked.push(`${q.message}|${q.placeholder}`), "ann"),
    });
    expect(tokens).toEqual({ access: "max:C0DE:ann", refresh: "r1", expires: 5 });
    expect(asked).toEqual(["select", "code", "Name?|you"]);
    expect(seen).toEqual([{ url: "https://auth.example/x", instructions: "open it" }, { url: "https://auth.example/device", instructions: "Enter code: AB-12" }, "waiting"]);
    expect(await p.refreshToken({ access: "a1", refresh: "r1", expires: 5 })).toEqual({ access: "a2", refresh: "r2", expires: 9 });
    expect(refreshedWith).toEqual({ type: "oauth", access: "a1", refresh: "r1", expires: 5 });
  });

  it("a cancelled choice ends the login with an error", async () => {
    const flow: OAuthFlow = {
      name: "Fake",
      login: async (io) => ({ type: "oauth", access: await io.prompt({ type: "select", message: "Plan?", options: [{ id: "pro", label: "Pro" }] }), refresh: "r", expires: 1 }),
      refresh: async (c) => c,
    };
    await expect(fromOAuthFlow("fake", flow).login!({ onSelect: async () => undefined })).rejects.toThrow("login cancelled");
  });
});
