/**
 * pi 1.6's extension-facing API shapes, checked mechanically against its published declarations
 * (the devDependency @earendil-works/pi-coding-agent@1.6.0): the members of ModelRegistry,
 * ExtensionContext, ReadonlySessionManager, ExtensionUIContext and ExtensionAPI are read from
 * its .d.ts files with the TypeScript compiler API (a method returning Promise<…> is async, any
 * other method sync), then a probe extension run by the real CLI (print mode) reports which of
 * them exist on our objects and, for the read-only ones it can call, whether a synchronous
 * member answers with a value and an asynchronous one with a Promise.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { ROOT, runCli } from "./helpers/e2e.js";

// (read as files: the test runner maps the package name to this project's sdk)
const PI16 = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist");

interface Member {
  name: string;
  kind: "sync" | "async" | "value";
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
        let kind: Member["kind"] = "value";
        if (ts.isMethodDeclaration(m) || ts.isMethodSignature(m)) kind = returnsPromise(m.type) ? "async" : "sync";
        else if (ts.isPropertySignature(m) || ts.isPropertyDeclaration(m)) {
          if (m.type && ts.isFunctionTypeNode(m.type)) kind = returnsPromise(m.type.type) ? "async" : "sync";
        }
        if (ts.isConstructorDeclaration(m)) continue;
        // Overloads: async if any form is.
        const prev = out.get(id);
        out.set(id, { name: id, kind: prev?.kind === "async" ? "async" : kind });
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
  spec = {
    ModelRegistry: membersOf("core/model-registry.d.ts", "ModelRegistry"),
    ExtensionContext: membersOf("core/extensions/types.d.ts", "ExtensionContext"),
    ReadonlySessionManager: membersOf("core/session-manager.d.ts", "SessionManager").filter((m) => picked.has(m.name)),
    ExtensionUIContext: membersOf("core/extensions/types.d.ts", "ExtensionUIContext"),
    ExtensionAPI: membersOf("core/extensions/types.d.ts", "ExtensionAPI"),
  };
  root = mkdtempSync(join(tmpdir(), "pi16-shapes-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
  writeFileSync(join(root, "spec.json"), JSON.stringify(spec));
  writeFileSync(join(root, "faux.json"), JSON.stringify(["ok"]));
  const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_FAUX_SCRIPT: join(root, "faux.json"), SHAPE_SPEC: join(root, "spec.json"), SHAPE_OUT: join(root, "out.json") };
  for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];
  const r = await runCli(["--no-session", "-e", resolve("tests/fixtures/pi16-shapes/shape-probe.ts"), "-p", "hi"], { cwd, env });
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
