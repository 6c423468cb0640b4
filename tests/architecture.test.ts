/**
 * The architecture's rules, enforced on the source tree with the TypeScript compiler's parser
 * (tests/helpers/source-graph.ts reads every module reference: static imports and re-exports,
 * type-only ones included, dynamic `import()`, `import("x").T` type references):
 * - core/ is three layers, each importing only the ones below it: core/kernel/ (the mechanism)
 *   imports nothing else of the project; core/stores/ (formats, persistence) only the kernel;
 *   core/engine/ (agent loop, session runtime) only the kernel and the stores; no file sits
 *   in core/ outside them, and core/ imports nothing from plugins/, modes/ or sdk/;
 * - plugins/ and modes/ import core/ only through its faces (FACES), as a third-party plugin does;
 * - tapable is imported only in core/kernel/hooks.ts; blessed only under modes/tui/;
 * - no import cycles beyond today's, whose back edges are the allow-list below (it may only
 *   shrink: a new cycle or back edge fails, and so does a listed edge that no longer exists);
 * - an `any` budget per folder (explicit `any` type nodes in non-test source) that may not grow;
 * - no source file in core/, plugins/, modes/ or sdk/ is over 800 lines (tests excluded).
 * Each assertion lists the offenders, so a failure says what to fix.
 */
import { describe, it, expect } from "@jest/globals";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cycles, edgesOnCycles, importGraph, packageOf, parseSource, readSources, resolveRef, type SourceFile } from "./helpers/source-graph.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const AREAS = ["core", "plugins", "modes", "sdk"];
const MAX_LINES = 800;

const isTest = (rel: string) => /\.test\.(ts|mts|js|mjs)$/.test(rel);
const files = readSources(ROOT, AREAS);
const sources = files.filter((f) => !isTest(f.rel));
const known = new Set(files.map((f) => f.rel));

/**
 * Today's import cycles, as the edges that close them: each names a lower-level file that
 * refers (mostly for a type) to a file above it. Removing an edge's reason removes it here;
 * nothing may be added.
 */
export const ALLOWED_BACK_EDGES: readonly string[] = [];
/** Import edges that lie on some cycle today (the allowed back edges and the edges they close cycles with). */
const EDGES_ON_CYCLES = 0;

/** Explicit `any` type nodes per folder in non-test source; a count may go down, never up. */
const ANY_BUDGET: Record<string, number> = {
  "core/kernel": 13,
  "core/stores": 6,
  "core/engine": 1,
  "plugins/extensions": 66,
  "plugins/codemode": 1,
  "plugins/faux": 1,
  "plugins/mcp": 3,
  "plugins/permission-gate": 1,
  "plugins/providers": 4,
  "plugins/tools": 2,
  "modes/print": 2,
  "modes/tui": 96,
  sdk: 5,
  "sdk/pi-package": 7,
};
/** The folder an `any` is counted in: a unit folder (core/kernel, plugins/mcp), or the area for its top-level files. */
const folderOf = (rel: string) => {
  const parts = rel.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") : parts[0]!;
};

/** The rule violations of a graph against the allow-list (empty when it keeps the rules). */
export function cycleViolations(graph: Map<string, Set<string>>, allowed: readonly string[], edgesOnCyclesBudget: number): string[] {
  const problems: string[] = [];
  const has = (e: string) => {
    const [from, to] = e.split(" -> ");
    return !!graph.get(from!)?.has(to!);
  };
  for (const e of allowed) if (!has(e)) problems.push(`allowed back edge no longer exists (remove it from ALLOWED_BACK_EDGES): ${e}`);
  const cut = new Map([...graph].map(([k, v]) => [k, new Set([...v].filter((t) => !allowed.includes(`${k} -> ${t}`)))]));
  for (const c of cycles(cut)) {
    const edges = edgesOnCycles(new Map(c.map((f) => [f, new Set([...cut.get(f)!].filter((t) => c.includes(t)))])));
    problems.push(`import cycle through ${c.length} files: ${edges.join(", ")}`);
  }
  const onCycles = edgesOnCycles(graph).length;
  if (onCycles > edgesOnCyclesBudget) problems.push(`${onCycles - edgesOnCyclesBudget} more import edge(s) lie on a cycle than before (${onCycles} > ${edgesOnCyclesBudget})`);
  if (onCycles < edgesOnCyclesBudget) problems.push(`fewer import edges lie on a cycle now: lower EDGES_ON_CYCLES to ${onCycles}`);
  return problems;
}

/** Which core layers each core layer may import (its own included). */
export const CORE_LAYERS: Record<string, readonly string[]> = {
  kernel: ["kernel"],
  stores: ["kernel", "stores"],
  engine: ["kernel", "stores", "engine"],
};
/**
 * The files of core/ that plugins and modes may import: each layer's face, and the kernel's
 * face for code loaded on demand (kept out of the start-up chunk that the main face lives in).
 */
export const FACES: readonly string[] = ["core/kernel/index.ts", "core/kernel/lazy.ts", "core/stores/index.ts", "core/engine/index.ts"];
/** Imports into core/ from plugins/ or modes/ that bypass the faces: none. */
const FACE_EXCEPTIONS: readonly string[] = [];

/** Imports of plugin and mode files that reach into core/ past its faces. */
export function faceViolations(root: string, files: readonly SourceFile[], knownFiles: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const f of files.filter((f) => /^(plugins|modes)\//.test(f.rel))) {
    for (const r of f.refs) {
      const t = resolveRef(root, f.rel, r.spec, knownFiles);
      if (t?.startsWith("core/") && !FACES.includes(t) && !FACE_EXCEPTIONS.includes(`${f.rel} -> ${t}`)) problems.push(`${f.rel} imports ${r.spec} (use ${FACES.join(", ")})`);
    }
  }
  return problems;
}

const layerOf = (rel: string) => /^core\/([^/]+)\//.exec(rel)?.[1];

/** Imports of a core file that reach a layer above it, and core files outside the layers. */
export function layerViolations(root: string, files: readonly SourceFile[], knownFiles: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const f of files.filter((f) => f.rel.startsWith("core/"))) {
    const layer = layerOf(f.rel);
    if (!layer || !CORE_LAYERS[layer]) {
      problems.push(`${f.rel} is in no core layer (core/kernel/, core/stores/ or core/engine/)`);
      continue;
    }
    for (const r of f.refs) {
      const t = resolveRef(root, f.rel, r.spec, knownFiles);
      const to = t && layerOf(t);
      if (to && t.startsWith("core/") && !CORE_LAYERS[layer].includes(to)) problems.push(`core/${layer} may not import core/${to}: ${f.rel} imports ${r.spec}${r.typeOnly ? " (type only)" : ""}`);
    }
  }
  return problems;
}

describe("the parser", () => {
  it("finds the source tree (the rules below check something)", () => {
    expect(files.filter((f) => f.rel.startsWith("core/")).length).toBeGreaterThan(20);
  });

  it("reads every kind of module reference and ignores comments and strings", () => {
    const { refs, anyCount } = parseSource(
      "x.ts",
      [
        'import { a } from "./a.js";',
        'import type { B } from "../b.js";',
        'import { type C } from "./c.js";',
        'export * from "./d.js";',
        'export type { E } from "./e.js";',
        'const f = await import("tapable");',
        'type G = import("./g.js").G;',
        '// import "commented";',
        'const s = "import x from \'./not-an-import.js\'";',
        "let h: any; function k(x: any): Array<any> { return x as any; }",
      ].join("\n"),
    );
    expect(refs.map((r) => [r.spec, r.typeOnly])).toEqual([
      ["./a.js", false],
      ["../b.js", true],
      ["./c.js", true],
      ["./d.js", false],
      ["./e.js", true],
      ["tapable", false],
      ["./g.js", true],
    ]);
    expect(anyCount).toBe(4);
  });
});

describe("import rules", () => {
  it("core/ imports nothing from plugins/, modes/ or sdk/", () => {
    const offenders: string[] = [];
    for (const f of sources.filter((f) => f.rel.startsWith("core/"))) {
      for (const r of f.refs) {
        const t = resolveRef(ROOT, f.rel, r.spec, known);
        if (t && /^(plugins|modes|sdk)\//.test(t)) offenders.push(`${f.rel} imports ${r.spec}${r.typeOnly ? " (type only)" : ""}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("core/ is three layers, each importing only the layers below it", () => {
    const offenders = layerViolations(ROOT, sources, known);
    expect(offenders).toEqual([]);
  });

  it("fails on a planted upward import: the kernel naming the engine, the stores naming the engine, a loose core file", () => {
    const plant = (rel: string, spec: string) => sources.map((f) => (f.rel === rel ? { ...f, refs: [...f.refs, { spec, typeOnly: true, kind: "import" as const }] } : f));
    expect(layerViolations(ROOT, plant("core/kernel/hook-events.ts", "../engine/agent-session.js"), known)).toEqual([
      "core/kernel may not import core/engine: core/kernel/hook-events.ts imports ../engine/agent-session.js (type only)",
    ]);
    expect(layerViolations(ROOT, plant("core/stores/session/store.ts", "../../engine/runtime.js"), known)).toEqual([
      "core/stores may not import core/engine: core/stores/session/store.ts imports ../../engine/runtime.js (type only)",
    ]);
    const loose = [...sources, { rel: "core/helpers.ts", text: "", refs: [], anyCount: 0 }];
    expect(layerViolations(ROOT, loose, known)).toEqual(["core/helpers.ts is in no core layer (core/kernel/, core/stores/ or core/engine/)"]);
  });

  it("plugins/ and modes/ import core/ only through its faces", () => {
    expect(faceViolations(ROOT, sources, known)).toEqual([]);
  });

  it("fails on a plugin importing a core file past the faces", () => {
    const planted = sources.map((f) => (f.rel === "plugins/tools/bash.ts" ? { ...f, refs: [...f.refs, { spec: "../../core/engine/agent-session.js", typeOnly: true, kind: "import" as const }] } : f));
    expect(faceViolations(ROOT, planted, known)).toEqual([`plugins/tools/bash.ts imports ../../core/engine/agent-session.js (use ${FACES.join(", ")})`]);
  });

  it("tapable is imported only in core/kernel/hooks.ts", () => {
    const offenders = files.filter((f) => f.rel !== "core/kernel/hooks.ts" && f.refs.some((r) => packageOf(r.spec) === "tapable")).map((f) => f.rel);
    expect(offenders).toEqual([]);
  });

  it("blessed is imported only under modes/tui/", () => {
    const offenders = files.filter((f) => !f.rel.startsWith("modes/tui/") && f.refs.some((r) => packageOf(r.spec) === "blessed")).map((f) => f.rel);
    expect(offenders).toEqual([]);
  });
});

describe("import cycles", () => {
  const graph = importGraph(ROOT, sources);

  it("has no cycle beyond the allowed back edges, and every allowed edge still exists", () => {
    expect(cycleViolations(graph, ALLOWED_BACK_EDGES, EDGES_ON_CYCLES)).toEqual([]);
  });

  it("fails on a planted back edge, on a new edge inside a known cycle and on a stale allow-list entry", () => {
    const copy = () => new Map([...graph].map(([k, v]) => [k, new Set(v)]));
    // the registry naming the kernel: a new cycle
    const planted = copy();
    planted.get("core/kernel/registry.ts")!.add("core/kernel/kernel.ts");
    expect(cycleViolations(planted, ALLOWED_BACK_EDGES, EDGES_ON_CYCLES).join("\n")).toMatch(/import cycle through \d+ files: .*core\/kernel\/registry\.ts -> core\/kernel\/kernel\.ts/);
    // the rules on a graph of their own, whose one cycle is closed by an allowed back edge:
    // kernel.ts -> registry.ts -> tool-registry.ts -> kernel.ts (allowed)
    const back = "core/kernel/tool-registry.ts -> core/kernel/kernel.ts";
    const small = () =>
      new Map([
        ["core/kernel/kernel.ts", new Set(["core/kernel/registry.ts"])],
        ["core/kernel/registry.ts", new Set(["core/kernel/tool-registry.ts"])],
        ["core/kernel/tool-registry.ts", new Set(["core/kernel/kernel.ts"])],
      ]);
    expect(cycleViolations(small(), [back], 3)).toEqual([]);
    // a second edge closing the known cycle
    const inside = small();
    inside.get("core/kernel/kernel.ts")!.add("core/kernel/tool-registry.ts");
    expect(cycleViolations(inside, [back], 3)).toEqual([expect.stringMatching(/^1 more import edge\(s\) lie on a cycle/)]);
    // an allowed edge that is gone
    const gone = small();
    gone.get("core/kernel/tool-registry.ts")!.delete("core/kernel/kernel.ts");
    expect(cycleViolations(gone, [back], 0)).toContain(`allowed back edge no longer exists (remove it from ALLOWED_BACK_EDGES): ${back}`);
  });
});

describe("any budget", () => {
  it("no folder has more explicit `any` than its budget", () => {
    const counts: Record<string, number> = {};
    for (const f of sources) if (f.anyCount) counts[folderOf(f.rel)] = (counts[folderOf(f.rel)] ?? 0) + f.anyCount;
    const over = Object.entries(counts)
      .filter(([folder, n]) => n > (ANY_BUDGET[folder] ?? 0))
      .map(([folder, n]) => `${folder}: ${n} explicit any (budget ${ANY_BUDGET[folder] ?? 0})`);
    expect(over).toEqual([]);
  });

  it("every budget is the folder's count, so it can only go down", () => {
    const counts: Record<string, number> = {};
    for (const f of sources) if (f.anyCount) counts[folderOf(f.rel)] = (counts[folderOf(f.rel)] ?? 0) + f.anyCount;
    const slack = Object.entries(ANY_BUDGET)
      .filter(([folder, n]) => (counts[folder] ?? 0) < n)
      .map(([folder]) => `${folder}: lower its any budget to ${counts[folder] ?? 0}`);
    expect(slack).toEqual([]);
  });
});

describe("file size", () => {
  it(`no source file in ${AREAS.join("/, ")}/ is over ${MAX_LINES} lines`, () => {
    const offenders = sources
      .map((f) => ({ file: f.rel, lines: f.text.split("\n").length - (f.text.endsWith("\n") ? 1 : 0) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(offenders).toEqual([]);
  });
});
