/**
 * pi 1.6's extension-facing API shapes, checked mechanically against its published declarations
 * (the devDependency @earendil-works/pi-coding-agent@1.6.0): the members of ModelRegistry,
 * ExtensionContext, ReadonlySessionManager, ExtensionUIContext and ExtensionAPI are read from
 * its .d.ts files with the TypeScript compiler API (a method returning Promise<…> is async, any
 * other method sync), then a probe extension run by the real CLI (print mode) reports which of
 * them exist on our objects and, for the read-only ones it can call, whether a synchronous
 * member answers with a value and an asynchronous one with a Promise. The SDK's SettingsManager
 * and SessionManager exports are checked the same way in process, statics and instances apart.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { ROOT, runCli } from "./helpers/e2e.js";
import { SessionManager, SettingsManager } from "../sdk/index.js";

// (read as files: the test runner maps the package name to this project's sdk)
const PI16 = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist");

interface Member {
  name: string;
  kind: "sync" | "async" | "value";
  isStatic?: boolean;
  params?: number;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
}
const returnsPromise = (t: ts.TypeNode | undefined) => !!t && /^Promise</.test(t.getText());

/** Members of a class or interface of a declaration file (private members left out). */
function membersOf(file: string, name: string): Member[] {
  const sf = parse(join(PI16, file));
  const out = new Map<string, Member>();
  const visit = (node: ts.Node) => {
    if ((ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) && node.name?.text === name) {
      for (const m of node.members) {
        if (!m.name || !ts.isIdentifier(m.name)) continue;
        if (ts.canHaveModifiers(m) && ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword)) continue;
        const id = m.name.text;
        const isStatic = !!(ts.canHaveModifiers(m) && ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword));
        const params = ts.isMethodDeclaration(m) || ts.isMethodSignature(m) ? m.parameters.length : 0;
        let kind: Member["kind"] = "value";
        if (ts.isMethodDeclaration(m) || ts.isMethodSignature(m)) kind = returnsPromise(m.type) ? "async" : "sync";
        else if (ts.isPropertySignature(m) || ts.isPropertyDeclaration(m)) {
          if (m.type && ts.isFunctionTypeNode(m.type)) kind = returnsPromise(m.type.type) ? "async" : "sync";
        }
        if (ts.isConstructorDeclaration(m)) continue;
        // Overloads: async if any form is.
        const key = isStatic ? `static ${id}` : id;
        const prev = out.get(key);
        out.set(key, { name: id, kind: prev?.kind === "async" ? "async" : kind, ...(isStatic ? { isStatic } : {}), params: Math.min(params, prev?.params ?? params) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (!out.size) throw new Error(`${name} not found in ${file}`);
  return [...out.values()];
}

/** The names a `Pick<SessionManager, …>` alias keeps. */
function pickedNames(file: string, alias: string): string[] {
  const text = readFileSync(join(PI16, file), "utf8");
  const m = new RegExp(`type ${alias} = Pick<\\w+, ([^>]+)>`).exec(text);
  if (!m) throw new Error(`${alias} not found in ${file}`);
  return [...m[1]!.matchAll(/"(\w+)"/g)].map((x) => x[1]!);
}

let root: string;
let report: Record<string, { missing: string[]; wrongForm: string[]; checked: string[] }>;
let spec: Record<string, Member[]>;

beforeAll(async () => {
  const picked = new Set(pickedNames("core/session-manager.d.ts", "ReadonlySessionManager"));
  const instance = (list: Member[]) => list.filter((m) => !m.isStatic).map(({ name, kind }) => ({ name, kind }));
  spec = {
    ModelRegistry: instance(membersOf("core/model-registry.d.ts", "ModelRegistry")),
    ExtensionContext: membersOf("core/extensions/types.d.ts", "ExtensionContext"),
    ReadonlySessionManager: instance(membersOf("core/session-manager.d.ts", "SessionManager")).filter((m) => picked.has(m.name)),
    ExtensionUIContext: membersOf("core/extensions/types.d.ts", "ExtensionUIContext"),
    ExtensionAPI: membersOf("core/extensions/types.d.ts", "ExtensionAPI"),
  };
  root = mkdtempSync(join(tmpdir(), "api-shapes-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
  writeFileSync(join(root, "spec.json"), JSON.stringify(spec));
  writeFileSync(join(root, "faux.json"), JSON.stringify(["ok"]));
  const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_FAUX_SCRIPT: join(root, "faux.json"), SHAPE_SPEC: join(root, "spec.json"), SHAPE_OUT: join(root, "out.json") };
  for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];
  const r = await runCli(["--no-session", "-e", resolve("tests/fixtures/api-shapes/shape-probe.ts"), "-p", "hi"], { cwd, env });
  if (r.code !== 0) throw new Error(`pi exited ${r.code}: ${r.stderr}`);
  report = JSON.parse(readFileSync(join(root, "out.json"), "utf8"));
}, 120_000);

afterAll(() => (process.env.KEEP_SHAPES ? undefined : rmSync(root, { recursive: true, force: true })));

describe("pi 1.6's extension-facing shapes", () => {
  it("reads the member lists from pi 1.6's declarations", () => {
    expect(spec.ModelRegistry.find((m) => m.name === "getAvailable")).toEqual({ name: "getAvailable", kind: "sync" });
    expect(spec.ModelRegistry.find((m) => m.name === "getApiKeyAndHeaders")).toEqual({ name: "getApiKeyAndHeaders", kind: "async" });
    expect(spec.ReadonlySessionManager.length).toBe(15);
  });

  it("ctx.modelRegistry has every member of 1.6's ModelRegistry in the same sync/async form", () => {
    expect(report.ModelRegistry!.missing).toEqual([]);
    expect(report.ModelRegistry!.wrongForm).toEqual([]);
    expect(report.ModelRegistry!.checked).toEqual(expect.arrayContaining(["getAvailable", "hasConfiguredAuth", "getProviderAuthStatus", "getApiKeyAndHeaders", "refresh"]));
  });

  it("ctx.sessionManager has every member of 1.6's ReadonlySessionManager, all answering with values", () => {
    expect(report.ReadonlySessionManager).toEqual({ missing: [], wrongForm: [], checked: expect.arrayContaining(["getBranch", "getEntries", "getTree"]) });
  });

  it("ctx, ctx.ui and pi answer their read-only synchronous members with values", () => {
    for (const t of ["ExtensionContext", "ExtensionUIContext", "ExtensionAPI"]) expect({ t, wrongForm: report[t]!.wrongForm }).toEqual({ t, wrongForm: [] });
  });

  it("ctx, ctx.ui and pi have every member 1.6 declares", () => {
    for (const t of ["ExtensionContext", "ExtensionUIContext", "ExtensionAPI"]) expect({ t, missing: report[t]!.missing }).toEqual({ t, missing: [] });
  });
});

/** Which members of a class's declaration `C` (statics) and `instance` lack or have in the other form. */
function compareClass(members: Member[], C: object, instance: object, callable: (m: Member) => boolean) {
  const missing: string[] = [];
  const wrongForm: string[] = [];
  const checked: string[] = [];
  for (const m of members) {
    const target = (m.isStatic ? C : instance) as Record<string, unknown>;
    const label = m.isStatic ? `static ${m.name}` : m.name;
    if (!(m.name in target)) {
      missing.push(label);
      continue;
    }
    const v = target[m.name];
    if (m.kind === "value") continue;
    if (typeof v !== "function") {
      wrongForm.push(`${label}: not a function`);
      continue;
    }
    if (m.isStatic || !callable(m)) continue;
    const result = (v as () => unknown).call(instance);
    const thenable = !!result && typeof (result as { then?: unknown }).then === "function";
    if (m.kind === "sync" && thenable) wrongForm.push(`${label}: returns a Promise, 1.6 returns a value`);
    if (m.kind === "async" && !thenable) wrongForm.push(`${label}: returns a value, 1.6 returns a Promise`);
    checked.push(label);
  }
  return { missing, wrongForm, checked };
}

describe("pi 1.6's SDK classes", () => {
  // Read-only questions that take no argument are called and their sync/async form checked.
  const readOnly = (m: Member) => m.params === 0 && /^(get|is|has|build|uses)/.test(m.name);

  it("the SDK's SettingsManager has every member of 1.6's, statics included, in the same sync/async form", () => {
    const members = membersOf("core/settings-manager.d.ts", "SettingsManager");
    expect(members.length).toBeGreaterThan(100);
    const r = compareClass(members, SettingsManager, SettingsManager.inMemory({ theme: "light" }), readOnly);
    expect(r.missing).toEqual([]);
    expect(r.wrongForm).toEqual([]);
    expect(r.checked).toEqual(expect.arrayContaining(["getTheme", "getBranchSummarySettings", "getRetrySettings", "getPackages", "isProjectTrusted"]));
  });

  it("the SDK's SettingsManager accessors read and write the settings", () => {
    const sm = SettingsManager.inMemory({ theme: "light", compaction: { enabled: false } } as never);
    expect(sm.getTheme()).toBe("light");
    expect(sm.getCompactionSettings()).toEqual({ enabled: false, reserveTokens: 16384, keepRecentTokens: 20000 });
    sm.setDefaultModelAndProvider("faux", "faux-1");
    expect([sm.getDefaultProvider(), sm.getDefaultModel()]).toEqual(["faux", "faux-1"]);
    sm.setModelThinkingLevel("faux", "faux-1", "high");
    expect(sm.getModelThinkingLevel("faux", "faux-1")).toBe("high");
    sm.removeModelThinkingLevel("faux", "faux-1");
    expect(sm.getAllModelThinkingLevels()).toEqual({});
    const dir = mkdtempSync(join(tmpdir(), "shapes-settings-"));
    try {
      mkdirSync(join(dir, "agent"));
      writeFileSync(join(dir, "agent", "settings.json"), JSON.stringify({ theme: "light", steeringMode: "all" }));
      const fromFiles = SettingsManager.create(dir, join(dir, "agent"));
      expect([fromFiles.getTheme(), fromFiles.getSteeringMode()]).toEqual(["light", "all"]);
      fromFiles.setTheme("dark");
      expect(JSON.parse(readFileSync(join(dir, "agent", "settings.json"), "utf8")).theme).toBe("dark");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the SDK's SessionManager has every member of 1.6's (not only the read-only ones), statics included", () => {
    const members = membersOf("core/session-manager.d.ts", "SessionManager");
    const sm = SessionManager.inMemory(process.cwd());
    sm.appendMessage({ role: "user", content: "hi", timestamp: Date.now() } as never);
    const r = compareClass(members, SessionManager, sm, readOnly);
    expect(r.missing).toEqual([]);
    expect(r.wrongForm).toEqual([]);
    expect(r.checked).toEqual(expect.arrayContaining(["getEntryCount", "buildContextEntries", "buildSessionProjection", "getTree"]));
    expect(sm.getEntryCount()).toBe(1);
    expect(sm.buildContextEntries().map((e) => e.type)).toEqual(["message"]);
  });

  it("SessionManager.findById finds a stored session's file by its id", () => {
    const dir = mkdtempSync(join(tmpdir(), "shapes-sessions-"));
    try {
      const sm = SessionManager.create(process.cwd(), dir);
      sm.appendMessage({ role: "user", content: "hi", timestamp: Date.now() } as never);
      sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() } as never);
      expect(SessionManager.findById(process.cwd(), sm.getSessionId(), dir)).toBe(sm.getSessionFile());
      expect(SessionManager.findById(process.cwd(), "no-such-id", dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
