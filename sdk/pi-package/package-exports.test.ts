/**
 * The host package's exports against the reference packages' lists (pi 1.6's and pi 0.73.1's
 * dist/index.d.ts): every value name they export that this project provides, and a behaviour
 * check per group (helpers, session and compaction functions, pi-tui components). The checks run
 * in a child process on the bundle an extension gets for the host package
 * (tests/fixtures/exports-probe.mjs). Last, the start-up trace: pi-tui is loaded only when
 * a component is built.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "../../tests/fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, type E2eEnv } from "../../tests/helpers/e2e.js";
import { referenceValueExports } from "../../tests/helpers/pi-exports.js";

/**
 * The reference lists: the value names of each package's dist/index.d.ts, recorded in
 * tests/fixtures/pi-exports/. With PI16_REF_DTS / PI073_REF_DTS pointing at an installed
 * reference's index.d.ts, the recorded list is also checked against it.
 */
const LISTS = { "1.6": ["pi-1.6.0.json", process.env.PI16_REF_DTS], "0.73.1": ["pi-0.73.1.json", process.env.PI073_REF_DTS] } as const;
const ENTRY = join(ROOT, "dist", "bundle", "index.js");


let llm: LlmServer;
let probe: any;
let probeStderr: string;
let dir: string;

function run(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", rej);
    child.on("close", (code) => res({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  llm = await startLlmServer({ script: { default: { text: "SUMMARY TEXT", usage: { input: 10, output: 7 } } } });
  dir = mkdtempSync(join(tmpdir(), "package-exports-"));
  const r = await run([join(ROOT, "tests", "fixtures", "exports-probe.mjs"), ENTRY], { ...process.env, PROBE_DIR: dir, PROBE_LLM: llm.url }, ROOT);
  if (r.code !== 0) throw new Error(`probe failed (${r.code}): ${r.stderr}`);
  probe = JSON.parse(r.stdout);
  probeStderr = r.stderr;
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the export lists of the reference packages", () => {
  for (const [label, [file, dts]] of Object.entries(LISTS)) {
    it(`every value pi ${label} exports is exported`, () => {
      const names: string[] = JSON.parse(readFileSync(join(ROOT, "tests", "fixtures", "pi-exports", file), "utf8")).values;
      if (dts) expect(names).toEqual(referenceValueExports(dts));
      expect(names.length).toBeGreaterThan(100);
      const ours = new Set(probe.names as string[]);
      const missing = names.filter((n) => !ours.has(n));
      expect(missing).toEqual([]);
    });
  }
});

describe("helpers", () => {
  it("key hints, theme, highlighting, diffs, line ranges, sources, skills, context files, mime, credentials", () => {
    const h = probe.helpers;
    expect(h.keyText).toEqual(["escape", "ctrl+l", ""]);
    expect(h.keyHint).toBe("escape cancel");
    expect(h.rawKeyHint).toBe("ctrl+x cut");
    expect(h.themesDiffer).toBe(true);
    expect(h.badTheme).toMatch(/unknown theme "no-such-theme"/);
    expect(h.lang).toEqual(["ts", null]);
    expect(h.highlight).toEqual([["const a = 1;", true], ["return a;", true]]);
    expect(h.readRange).toEqual([":5-14", "", ":3", ":1-4", ""]);
    expect(h.source).toEqual({ path: "<tool:x>", source: "ext", scope: "temporary", origin: "top-level" });
    expect(h.skillBlock).toEqual({ name: "deploy", location: "/s/SKILL.md", content: "Steps.", userMessage: "please ship" });
    expect(h.notSkill).toBeNull();
    expect(h.mime).toEqual(["image/png", null]);
    expect(h.credential).toEqual([{ type: "api_key", key: "k-1" }, null]);
    expect(h.skills).toEqual([["deploy", "Ships it", "probe"]]);
    expect(h.contextFiles).toEqual(["Be brief."]);
    expect(h.virtualEntry).toBe("pi.virtual-model-state");
    expect(h.packageName).toBe("pi-kernel");
    expect(h.readme).toBe(true);
    expect(h.patch).toBe("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    expect(h.diff).toEqual([["-1 foo bar", true], ["+1 foo baz", true], [" 2 same", false]]);
    expect(h.visual).toEqual([
      { visualLines: ["three", "four"], skippedCount: 2 },
      { visualLines: ["one", "two"], skippedCount: 2 },
      { visualLines: ["abcd", "efgh", "ij"], skippedCount: 0 },
    ]);
  });
});

describe("session and compaction functions", () => {
  it("context entries and projection follow the latest compaction; turn starts; entries as messages", () => {
    const s = probe.session;
    expect(s.contextIds).toEqual(["e", "c", "d", "f", "g"]);
    expect(s.contextIdsAtD).toEqual(["a", "b", "c", "d"]);
    expect(s.projection.ids).toEqual([["e", 1], ["c", 1], ["d", 1], ["f", 0], ["g", 1]]);
    expect(s.projection.roles).toEqual(["compactionSummary", "user", "assistant", "user"]);
    expect(s.projection.model).toEqual({ provider: "mock", modelId: "mock-model" });
    expect(s.customMessages).toBe(0);
    expect(s.compactionMessage).toEqual(["compactionSummary"]);
    expect(s.turnStart).toEqual([2, 0, -1]);
  });

  it("compact, generateSummaryWithUsage and generateBranchSummary ask the model and return its summary", () => {
    const c = probe.compaction;
    expect(c.withUsage).toEqual({ text: "SUMMARY TEXT", output: 7 });
    expect(c.compacted).toEqual({ summary: "SUMMARY TEXT\n\n<read-files>\n/r.txt\n</read-files>", firstKeptEntryId: "c", tokensBefore: 321, details: { readFiles: ["/r.txt"], modifiedFiles: [] } });
    expect(c.branch).toEqual({ summary: "SUMMARY TEXT", readFiles: [], modifiedFiles: [] });
    expect(c.noModel).toMatch(/a model .* is required/);
    const asks = llm.stats().requests.filter((r) => r.method === "POST");
    expect(asks.length).toBe(3);
    expect(JSON.stringify(asks[0]!.body.messages)).toContain("focus on questions");
    expect(JSON.stringify(asks[0]!.body.messages)).toContain("first question");
  });
});

describe("stores and main", () => {
  it("auth backends read-modify-write under a lock; the trust store saves, inherits and forgets; main runs the CLI", () => {
    const st = probe.stores;
    expect(st.file).toEqual([null, '{"a":1}', "x", '{"a":1}', "600"]);
    expect(st.mem).toEqual(["m1", "m1+1"]);
    expect(st.trust).toEqual({ before: null, inherited: { path: true, decision: true }, sub: false, fileAfter: 1, subKept: false });
    expect(st.needs).toEqual([false, true]);
    expect(st.mainExit).toBe(1);
    expect(probeStderr).toContain("no-such-mode");
  });
});

describe("components (pi-tui)", () => {
  it("CustomEditor is a pi-tui Editor: renders to lines, routes app keys to its handlers, types the rest, subclasses", () => {
    const c = probe.components;
    expect(c.editorIsEditor).toBe(true);
    expect(c.subclass).toEqual([true, true, true]);
    expect(c.lines).toEqual(["─".repeat(20), "hello" + " ".repeat(15), "─".repeat(20)]);
    expect(c.seen).toEqual(["escape", "model", "exit"]);
    expect(c.typed).toBe("hello!");
  });

  it("BorderedLoader is a pi-tui Container between two borders; the interrupt key aborts its signal", () => {
    const l = probe.components.loader;
    expect(l.isContainer).toBe(true);
    expect(l.lines[0]).toBe("─".repeat(30));
    expect(l.lines.at(-1)).toBe("─".repeat(30));
    expect(l.lines.some((x: string) => x.includes("Working hard"))).toBe(true);
    expect(l.lines.some((x: string) => x.includes("escape cancel"))).toBe(true);
    expect([l.before, l.after, l.aborted]).toEqual([false, true, 1]);
    expect(l.fixedLines.some((x: string) => x.includes("cancel"))).toBe(false);
    expect(probe.components.dynamicBorder).toEqual(["<───>"]);
  });
});

describe("pi-tui loads only when a component is built", () => {
  let e: E2eEnv;
  beforeAll(() => {
    e = makeE2eEnv(llm.url);
  });
  afterAll(() => e.cleanup());

  async function traced(args: string[], env: NodeJS.ProcessEnv = {}) {
    const file = join(e.root, `trace-${Math.random().toString(16).slice(2)}.txt`);
    const r = await run(["--import", join(ROOT, "tests", "fixtures", "trace-loads.mjs"), CLI, ...args], { ...e.env, ...env, PI_TRACE_LOADS: file }, e.cwd);
    const modules = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
    // pi-tui's package files, or the bundle's pi-tui entry (the bundle carries pi-tui)
    return { ...r, tui: modules.filter((m) => /node_modules\/@(earendil-works|mariozechner)\/pi-tui\/|\/vendor\/earendil-works\+pi-tui\.js$/.test(m)) };
  }
  const EXT = join(ROOT, "tests", "fixtures", "extensions", "components.ts");

  it("--version loads no pi-tui", async () => {
    const r = await traced(["--version"]);
    expect(r.code).toBe(0);
    expect(r.tui).toEqual([]);
  });

  it("an extension importing the package's helpers and components loads no pi-tui until it builds one", async () => {
    llm.setScript({ turns: [{ toolCalls: [{ name: "probe_components", arguments: {} }] }], default: { text: "done" } });
    llm.reset();
    const plain = await traced(["--no-session", "--mode", "json", "-e", EXT, "go"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("hint=escape stop built=none");
    expect(plain.tui).toEqual([]);

    llm.reset();
    const built = await traced(["--no-session", "--mode", "json", "-e", EXT, "go"], { BUILD_EDITOR: "1" });
    expect(built.code).toBe(0);
    // the editor is an Editor of the very pi-tui the extension imports, and renders three lines
    expect(built.stdout).toContain("hint=escape stop built=true:3");
    expect(built.tui.length).toBeGreaterThan(0);
  });
});
