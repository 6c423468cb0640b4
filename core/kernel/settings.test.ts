import { describe, it, expect } from "@jest/globals";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SettingsManager, DEFAULT_SETTINGS } from "./settings.js";

function dirs() {
  const root = mkdtempSync(join(tmpdir(), "pi-settings-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(join(cwd, ".pi"), { recursive: true });
  return { root, agentDir, cwd, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

describe("settings", () => {
  it("typed defaults when there are no files", async () => {
    const d = dirs();
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    expect(s.get().retry).toEqual(DEFAULT_SETTINGS.retry);
    expect(s.get().compaction.reserveTokens).toBe(16384);
    expect(s.get().steeringMode).toBe("one-at-a-time");
    expect(s.diagnostics).toEqual([]);
    d.cleanup();
  });

  it("merges project over global, nested objects one level deep", async () => {
    const d = dirs();
    writeFileSync(join(d.agentDir, "settings.json"), JSON.stringify({ defaultModel: "g", retry: { maxRetries: 7, baseDelayMs: 10 }, theme: "light" }));
    writeFileSync(join(d.cwd, ".pi", "settings.json"), JSON.stringify({ defaultModel: "p", retry: { baseDelayMs: 5 }, extensions: ["x.ts"] }));
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    expect(s.get().defaultModel).toBe("p");
    expect(s.get().theme).toBe("light");
    expect(s.get().retry).toEqual({ enabled: true, maxRetries: 7, baseDelayMs: 5, maxDelayMs: 60000 });
    expect(s.get().extensions).toEqual(["x.ts"]);
    d.cleanup();
  });

  it("finds .pirc.json and pi.config.ts through cosmiconfig", async () => {
    const d = dirs();
    rmSync(join(d.cwd, ".pi"), { recursive: true });
    writeFileSync(join(d.cwd, ".pirc.json"), JSON.stringify({ quietStartup: true }));
    let s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    expect(s.get().quietStartup).toBe(true);
    rmSync(join(d.cwd, ".pirc.json"));
    writeFileSync(join(d.cwd, "pi.config.ts"), "export default { theme: 'from-ts' as string };\n");
    s = await SettingsManager.load({
      agentDir: d.agentDir,
      cwd: d.cwd,
      importTs: async (p) => ({ default: { theme: readFileSync(p, "utf8").includes("from-ts") ? "from-ts" : "?" } }),
    });
    expect(s.get().theme).toBe("from-ts");
    d.cleanup();
  });

  it("a malformed file is a diagnostic naming file and position, never rewritten", async () => {
    const d = dirs();
    const globalPath = join(d.agentDir, "settings.json");
    const bad = '{\n  "theme": "dark",\n  "retry": { "maxRetries": 3, }\n}\n';
    writeFileSync(globalPath, bad);
    const projectPath = join(d.cwd, ".pi", "settings.json");
    writeFileSync(projectPath, '{"theme": ');
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    expect(s.get().theme).toBe("dark");
    const g = s.diagnostics.find((x) => x.source === globalPath);
    expect(g?.message).toMatch(/malformed JSON at line 3, column \d+/);
    const p = s.diagnostics.find((x) => x.source === projectPath);
    expect(p?.message).toMatch(/cannot load project settings/);
    expect(s.update({ defaultModel: "x" })).toBe(false);
    expect(readFileSync(globalPath, "utf8")).toBe(bad);
    expect(s.diagnostics.at(-1)?.message).toMatch(/not saving settings/);
    d.cleanup();
  });

  it("update() keeps other keys and keys written by another process", async () => {
    const d = dirs();
    const globalPath = join(d.agentDir, "settings.json");
    writeFileSync(globalPath, JSON.stringify({ theme: "light" }));
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    writeFileSync(globalPath, JSON.stringify({ theme: "light", quietStartup: true }));
    expect(s.update({ defaultModel: "m1" })).toBe(true);
    expect(JSON.parse(readFileSync(globalPath, "utf8"))).toEqual({ theme: "light", quietStartup: true, defaultModel: "m1" });
    expect(s.get().defaultModel).toBe("m1");
    d.cleanup();
  });
});

describe("settings: what an untrusted project may not widen", () => {
  it("model, provider and tool choice apply only when trusted; the faux script never comes from a project", async () => {
    const d = dirs();
    writeFileSync(join(d.agentDir, "settings.json"), JSON.stringify({ defaultProvider: "mock", defaultModel: "m", defaultTools: ["read"] }));
    const project = { defaultProvider: "faux", defaultModel: "faux-1", enabledModels: ["faux/*"], defaultTools: ["read", "bash"], faux: { script: "./s.json" }, theme: "light" };
    writeFileSync(join(d.cwd, ".pi", "settings.json"), JSON.stringify(project));
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    let trusted = false;
    s.setProjectTrust(() => trusted);
    expect(s.get()).toMatchObject({ defaultProvider: "mock", defaultModel: "m", defaultTools: ["read"], theme: "light" });
    expect(s.get().enabledModels).toBeUndefined();
    expect(s.get().faux).toBeUndefined();
    expect(s.ignoredProjectKeys()).toEqual(["defaultProvider", "defaultModel", "enabledModels", "defaultTools"]);
    trusted = true;
    s.refreshTrust();
    expect(s.get()).toMatchObject({ defaultProvider: "faux", defaultModel: "faux-1", defaultTools: ["read", "bash"] });
    expect(s.get().faux).toBeUndefined();
    d.cleanup();
  });

  it("an untrusted project may lower a limit, never raise or remove it", async () => {
    const d = dirs();
    writeFileSync(join(d.agentDir, "settings.json"), JSON.stringify({ rpc: { maxLineLength: 1000 }, extensionHandlerTimeoutMs: 5000 }));
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    s.setProjectTrust(() => false);
    const project = (data: object) => {
      writeFileSync(join(d.cwd, ".pi", "settings.json"), JSON.stringify(data));
      return SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd }).then((x) => (x.setProjectTrust(() => false), x));
    };
    expect((await project({ rpc: { maxLineLength: 10_000_000 } })).get().rpc).toEqual({ maxLineLength: 1000 });
    expect((await project({ rpc: { maxLineLength: 100 } })).get().rpc).toEqual({ maxLineLength: 100 });
    expect((await project({ rpc: { maxLineLength: "1e12" } })).get().rpc).toEqual({ maxLineLength: 1000 });
    expect((await project({ acp: { maxLineLength: 1e12 } })).get().acp).toEqual({});
    expect((await project({ extensionHandlerTimeoutMs: 0 })).get().extensionHandlerTimeoutMs).toBe(5000);
    expect((await project({ extensionHandlerTimeoutMs: 10 })).get().extensionHandlerTimeoutMs).toBe(10);
    const raised = await project({ rpc: { maxLineLength: 10_000_000 } });
    expect(raised.ignoredProjectKeys()).toEqual(["rpc.maxLineLength"]);
    raised.setProjectTrust(() => true);
    expect(raised.get().rpc).toEqual({ maxLineLength: 10_000_000 });
    expect(s.get().rpc).toEqual({ maxLineLength: 1000 });
    d.cleanup();
  });

  it("saving a setting keeps the file's mode (0600 stays 0600)", async () => {
    const d = dirs();
    const file = join(d.agentDir, "settings.json");
    writeFileSync(file, JSON.stringify({ theme: "dark" }), { mode: 0o600 });
    const s = await SettingsManager.load({ agentDir: d.agentDir, cwd: d.cwd });
    expect(s.update({ theme: "light" })).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8")).theme).toBe("light");
    d.cleanup();
  });
});
