/**
 * The project's source as the TypeScript compiler reads it: every module reference of a file
 * (static imports and re-exports, type-only ones included, dynamic `import()`, `import("x").T`
 * type references, `require`-style `import x = require()`), where a relative one lands, and the
 * explicit `any` type nodes. Used by tests/architecture.test.ts.
 */
import ts from "typescript";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

export interface ModuleRef {
  spec: string;
  /** Only a type reaches the importer (`import type`, `export type`, `import("x").T`). */
  typeOnly: boolean;
  kind: "import" | "export" | "dynamic" | "import-type" | "import-equals";
}

export interface SourceFile {
  /** Path from the project root with "/" separators. */
  rel: string;
  text: string;
  refs: ModuleRef[];
  /** Explicit `any` type nodes. */
  anyCount: number;
}

const SOURCE_RE = /\.(ts|mts|js|mjs)$/;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === "node_modules" || name === "dist") continue;
    if (statSync(p).isDirectory()) walk(p, out);
    else if (SOURCE_RE.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** Parse one file's text: its module references and its explicit `any` count. */
export function parseSource(fileName: string, text: string): { refs: ModuleRef[]; anyCount: number } {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, /\.m?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const refs: ModuleRef[] = [];
  let anyCount = 0;
  const literal = (n: ts.Node | undefined) => (n && ts.isStringLiteralLike(n) ? n.text : undefined);
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) anyCount++;
    if (ts.isImportDeclaration(node)) {
      const spec = literal(node.moduleSpecifier);
      const clause = node.importClause;
      // `import type {A}`, or `import {type A, type B}` with every specifier type-only
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      if (spec) refs.push({ spec, typeOnly, kind: "import" });
    } else if (ts.isExportDeclaration(node)) {
      const spec = literal(node.moduleSpecifier);
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      const typeOnly = node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly));
      if (spec) refs.push({ spec, typeOnly, kind: "export" });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const spec = literal(node.arguments[0]);
      if (spec) refs.push({ spec, typeOnly: false, kind: "dynamic" });
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      const spec = ts.isLiteralTypeNode(arg) ? literal(arg.literal) : undefined;
      if (spec) refs.push({ spec, typeOnly: true, kind: "import-type" });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const spec = literal(node.moduleReference.expression);
      if (spec) refs.push({ spec, typeOnly: node.isTypeOnly, kind: "import-equals" });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { refs, anyCount };
}

/** Read and parse every source file of `areas` (folders under `root`). */
export function readSources(root: string, areas: string[]): SourceFile[] {
  return areas
    .flatMap((a) => walk(join(root, a)))
    .map((abs) => {
      const text = readFileSync(abs, "utf8");
      return { rel: relative(root, abs).split(sep).join("/"), text, ...parseSource(abs, text) };
    });
}

/** The package a bare specifier names ("tapable", "@scope/pkg"), or undefined for a relative one. */
export function packageOf(spec: string): string | undefined {
  if (spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("node:")) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Where a relative specifier lands: the source file it names (by root-relative path), if any. */
export function resolveRef(root: string, fromRel: string, spec: string, known: ReadonlySet<string>): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = relative(root, resolve(root, dirname(fromRel), spec)).split(sep).join("/");
  const stem = base.replace(/\.(js|mjs|ts|mts)$/, "");
  const candidates = [base, `${stem}.ts`, `${stem}.mts`, `${stem}.js`, `${stem}.mjs`, `${base}/index.ts`, `${base}/index.js`];
  for (const c of candidates) if (known.has(c)) return c;
  return existsSync(resolve(root, base)) ? base : undefined;
}

/** The import graph: file → files it references (any kind of reference, type-only included). */
export function importGraph(root: string, files: SourceFile[]): Map<string, Set<string>> {
  const known = new Set(files.map((f) => f.rel));
  const graph = new Map<string, Set<string>>();
  for (const f of files) {
    const out = new Set<string>();
    for (const r of f.refs) {
      const t = resolveRef(root, f.rel, r.spec, known);
      if (t && known.has(t) && t !== f.rel) out.add(t);
    }
    graph.set(f.rel, out);
  }
  return graph;
}

/** Strongly connected components with more than one file (Tarjan), each sorted, sorted by first file. */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) strong(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The edges that lie on a cycle (both ends in one strongly connected component), as "from -> to". */
export function edgesOnCycles(graph: Map<string, Set<string>>): string[] {
  const compOf = new Map<string, number>();
  cycles(graph).forEach((c, i) => c.forEach((f) => compOf.set(f, i)));
  const out: string[] = [];
  for (const [from, tos] of graph) for (const to of tos) if (compOf.has(from) && compOf.get(from) === compOf.get(to)) out.push(`${from} -> ${to}`);
  return out.sort();
}
