/**
 * The architecture's import rules and size limit, enforced on the source tree
 * (docs/architecture.md §"Import rules"):
 * - core/ imports nothing from plugins/, modes/ or sdk/;
 * - tapable is imported only in core/hooks.ts;
 * - blessed is imported only under modes/tui/;
 * - no source file in core/, plugins/, modes/ or sdk/ is over 800 lines (tests excluded).
 * Each assertion lists the offenders, so a failure says what to fix.
 */
import { describe, it, expect } from "@jest/globals";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const AREAS = ["core", "plugins", "modes", "sdk"];
const MAX_LINES = 800;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === "node_modules" || name === "dist") continue;
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

const files = AREAS.flatMap((a) => walk(join(ROOT, a))).map((abs) => ({ abs, rel: relative(ROOT, abs).split(sep).join("/"), text: readFileSync(abs, "utf8") }));
const isTest = (rel: string) => /\.test\.(ts|mts|js|mjs)$/.test(rel);

/** Module specifiers of static imports, re-exports and dynamic imports (comments stripped). */
export function importsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
  const specs: string[] = [];
  const re = /\b(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)|\bdeclare\s+module\s+["']([^"']+)["']/g;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    const spec = m[1] ?? m[2];
    if (spec) specs.push(spec);
  }
  return specs;
}

/** Where a relative specifier lands, as a path from the project root. */
function target(fromRel: string, spec: string): string {
  return relative(ROOT, resolve(ROOT, dirname(fromRel), spec)).split(sep).join("/");
}

describe("import rules", () => {
  it("finds the source tree (the rules below check something)", () => {
    expect(files.filter((f) => f.rel.startsWith("core/")).length).toBeGreaterThan(20);
    expect(importsOf('import { a } from "./x.js";\nimport type { B } from "../y.js";\nconst c = await import("tapable");\n// import "commented";')).toEqual(["./x.js", "../y.js", "tapable"]);
  });

  it("core/ imports nothing from plugins/, modes/ or sdk/", () => {
    const offenders: string[] = [];
    for (const f of files.filter((f) => f.rel.startsWith("core/") && !isTest(f.rel))) {
      for (const spec of importsOf(f.text)) {
        if (!spec.startsWith(".")) continue;
        const t = target(f.rel, spec);
        if (/^(plugins|modes|sdk)\//.test(t)) offenders.push(`${f.rel} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("tapable is imported only in core/hooks.ts", () => {
    const offenders = files.filter((f) => f.rel !== "core/hooks.ts" && importsOf(f.text).some((s) => s === "tapable" || s.startsWith("tapable/"))).map((f) => f.rel);
    expect(offenders).toEqual([]);
  });

  it("blessed is imported only under modes/tui/", () => {
    const offenders = files.filter((f) => !f.rel.startsWith("modes/tui/") && importsOf(f.text).some((s) => s === "blessed" || s.startsWith("blessed/"))).map((f) => f.rel);
    expect(offenders).toEqual([]);
  });
});

describe("file size", () => {
  it(`no source file in ${AREAS.join("/, ")}/ is over ${MAX_LINES} lines`, () => {
    const offenders = files
      .filter((f) => !isTest(f.rel))
      .map((f) => ({ file: f.rel, lines: f.text.split("\n").length - (f.text.endsWith("\n") ? 1 : 0) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(offenders).toEqual([]);
  });
});
