#!/usr/bin/env node
/**
 * Makes the published type declarations resolvable with the package's dependencies alone.
 *
 * The bundle carries pi's libraries (pi-ai, pi-tui, pi-agent-core, pi-schema, the old-scope
 * pi-ai) and tapable, so the package lists them as devDependencies only; the .d.ts files tsc
 * emits still import them by name, and an installed package has none of them (TypeScript then
 * reports "Cannot find module", or with skipLibCheck reads every such type as `any`).
 *
 * After tsc (run by `npm run build` before scripts/bundle.mjs):
 *   1. walks the declarations reachable from package.json "exports" (the `types` conditions),
 *      following relative specifiers, and collects each bare specifier that is neither a Node
 *      built-in nor one of the package's dependencies, with the names imported from it;
 *   2. bundles those names' declarations (and what they reference, tree-shaken) with
 *      rollup-plugin-dts into dist/types/vendor/<library>.d.ts, one file per specifier, the
 *      libraries inlined; fails if a bundle still imports a package that is not installed with
 *      pi-kernel;
 *   3. rewrites the specifiers in the reachable declarations to relative paths to those files;
 *   4. deletes the emitted declarations that no export reaches (nobody can import them: the
 *      "exports" map allows no deep import), so none of them ships an unresolvable import.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const VENDOR_DIR = join(dist, "types", "vendor");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const dependencies = Object.keys(pkg.dependencies ?? {});

/** The package name of a bare specifier ("@scope/name/sub" → "@scope/name"). */
const packageName = (spec) => spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/");
const isBuiltin = (spec) => spec.startsWith("node:") || builtinModules.includes(spec) || builtinModules.includes(packageName(spec));
const isRelative = (spec) => spec.startsWith("./") || spec.startsWith("../");
/** Resolvable in an installed package: a Node built-in (@types/node) or one of our dependencies. */
const installedWithUs = (spec) => isBuiltin(spec) || dependencies.includes(packageName(spec));

/** The declaration file a relative specifier of `from` names (".js" → ".d.ts", a folder → index.d.ts). */
function resolveRelative(from, spec) {
  const base = resolve(dirname(from), spec);
  const candidates = [base.replace(/\.(m|c)?js$/, ".d.$1ts"), `${base}.d.ts`, join(base, "index.d.ts")];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/**
 * Every module specifier of a declaration file, with its position and the names taken from it
 * ("*" for the whole module: a namespace import, `export *`, `typeof import("x")`).
 */
function specifiersOf(file, text = readFileSync(file, "utf8")) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const add = (literal, names) => found.push({ spec: literal.text, start: literal.getStart(sf) + 1, end: literal.getEnd() - 1, names });
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const names = [];
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        if (clause?.name) names.push("default");
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) names.push("*");
        else if (bindings) for (const el of bindings.elements) names.push((el.propertyName ?? el.name).text);
        if (!clause) names.push("*"); // a side-effect import
      } else if (!node.exportClause || ts.isNamespaceExport(node.exportClause)) names.push("*");
      else for (const el of node.exportClause.elements) names.push((el.propertyName ?? el.name).text);
      add(node.moduleSpecifier, names);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      // import("x").A.B takes A; typeof import("x") takes the whole module.
      add(node.argument.literal, [node.qualifier ? leftmost(node.qualifier).text : "*"]);
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      add(node.name, []);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      add(node.moduleReference.expression, ["*"]);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { text, found };
}
function leftmost(q) {
  while (ts.isQualifiedName(q)) q = q.left;
  return q;
}

/** The declaration files the package's "exports" reach, each with its specifiers. */
function reachableDeclarations() {
  const entries = Object.values(pkg.exports)
    .map((e) => (typeof e === "object" && e ? e.types : undefined))
    .filter(Boolean)
    .map((p) => join(root, p));
  const seen = new Map();
  const queue = [...new Set(entries)];
  for (const e of queue) if (!existsSync(e)) throw new Error(`package.json exports names ${relative(root, e)}, which the build did not emit`);
  while (queue.length) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    const info = specifiersOf(file);
    seen.set(file, info);
    for (const { spec } of info.found) {
      if (!isRelative(spec)) continue;
      const target = resolveRelative(file, spec);
      if (!target) throw new Error(`${relative(root, file)} imports ${spec}, which has no declaration file`);
      if (!seen.has(target)) queue.push(target);
    }
  }
  return seen;
}

/** Bare specifiers an installed package cannot resolve → the names taken from each. */
function foreignSpecifiers(declarations) {
  const out = new Map();
  for (const { found } of declarations.values()) {
    for (const { spec, names } of found) {
      if (isRelative(spec) || installedWithUs(spec)) continue;
      const set = out.get(spec) ?? new Set();
      for (const n of names) set.add(n);
      out.set(spec, set);
    }
  }
  return out;
}

/** The vendor file's name of a specifier: "@earendil-works/pi-ai/compat" → "earendil-works/pi-ai/compat". */
const vendorName = (spec) => spec.replace(/^@/, "");

/**
 * Bundles each foreign specifier's names into dist/types/vendor/<name>.d.ts. The packages named
 * are inlined, and then the packages the result still imports, until it imports only what is
 * installed with us (tree-shaking leaves out what the names do not reach: pi-ai's provider SDKs).
 */
async function bundleVendorTypes(foreign) {
  const { rollup } = await import("rollup");
  const { dts } = await import("rollup-plugin-dts");
  // The entries live under dist/ so that the libraries resolve from this package's node_modules.
  const entryDir = join(dist, `.vendor-types-${process.pid}`);
  mkdirSync(entryDir, { recursive: true });
  const input = {};
  try {
    for (const [spec, names] of foreign) {
      const file = join(entryDir, `entry-${Object.keys(input).length}.d.ts`);
      const named = [...names].filter((n) => n !== "*" && n !== "default");
      const lines = [];
      if (names.has("*")) lines.push(`export * from "${spec}";`);
      else if (named.length) lines.push(`export { ${named.join(", ")} } from "${spec}";`);
      if (names.has("default")) lines.push(`export { default } from "${spec}";`);
      writeFileSync(file, lines.join("\n") + "\n");
      input[vendorName(spec)] = file;
    }
    const inlined = new Set([...foreign.keys()].map(packageName));
    for (;;) {
      const bundle = await rollup({
        input,
        external: (id) => !isRelative(id) && !id.startsWith("/") && !inlined.has(packageName(id)),
        plugins: [dts({ respectExternal: true })],
        onwarn(warning) {
          throw new Error(`bundling the vendored declarations: ${warning.message}`);
        },
      });
      const { output } = await bundle.generate({ format: "es", entryFileNames: "[name].d.ts", chunkFileNames: "shared-[hash].d.ts", banner: origins });
      await bundle.close();
      const missing = new Set();
      for (const chunk of output) {
        if (chunk.type !== "chunk") continue;
        for (const { spec } of specifiersOf(chunk.fileName, chunk.code).found) if (!isRelative(spec) && !installedWithUs(spec)) missing.add(packageName(spec));
      }
      if (missing.size) {
        const again = [...missing].filter((p) => !inlined.has(p));
        if (!again.length) throw new Error(`the vendored declarations still import ${[...missing].join(", ")}, not installed with ${pkg.name}`);
        for (const p of again) inlined.add(p);
        continue;
      }
      rmSync(VENDOR_DIR, { recursive: true, force: true });
      mkdirSync(VENDOR_DIR, { recursive: true });
      let bytes = 0;
      for (const chunk of output) {
        if (chunk.type !== "chunk") continue;
        mkdirSync(dirname(join(VENDOR_DIR, chunk.fileName)), { recursive: true });
        writeFileSync(join(VENDOR_DIR, chunk.fileName), chunk.code);
        bytes += Buffer.byteLength(chunk.code);
      }
      return { files: output.length, bytes, inlined: [...inlined] };
    }
  } finally {
    rmSync(entryDir, { recursive: true, force: true });
  }
}

/** The head comment of a vendored file: the packages its declarations come from, with version and license. */
function origins(chunk) {
  const packages = new Map();
  for (const id of chunk.moduleIds) {
    const m = /^(.*[\\/]node_modules[\\/])((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(id);
    if (!m || packages.has(m[2])) continue;
    const meta = JSON.parse(readFileSync(join(m[1], m[2], "package.json"), "utf8"));
    packages.set(m[2], `${meta.name}@${meta.version} (${meta.license ?? "license unknown"})`);
  }
  return `// Type declarations from ${[...packages.values()].join(", ")}, bundled by scripts/package-types.mjs:\n// the package carries these libraries in its bundle, not as dependencies.\n`;
}

/** Rewrites the foreign specifiers of each reachable declaration to the vendor files. */
function rewriteSpecifiers(declarations, foreign) {
  let rewritten = 0;
  for (const [file, { text, found }] of declarations) {
    const edits = found.filter((f) => foreign.has(f.spec)).sort((a, b) => b.start - a.start);
    if (!edits.length) continue;
    let out = text;
    for (const { spec, start, end } of edits) {
      let rel = relative(dirname(file), join(VENDOR_DIR, `${vendorName(spec)}.js`)).split(sep).join("/");
      if (!rel.startsWith(".")) rel = `./${rel}`;
      out = out.slice(0, start) + rel + out.slice(end);
    }
    writeFileSync(file, out);
    rewritten++;
  }
  return rewritten;
}

/** Deletes the declarations under dist/ (outside the vendor folder) that no export reaches. */
function pruneUnreachable(declarations) {
  let removed = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (p !== VENDOR_DIR && p !== join(dist, "bundle")) walk(p);
      } else if (e.name.endsWith(".d.ts") && !declarations.has(p)) {
        rmSync(p);
        removed++;
      }
    }
  };
  walk(dist);
  return removed;
}

async function main() {
  const t0 = performance.now();
  const declarations = reachableDeclarations();
  const foreign = foreignSpecifiers(declarations);
  if (!foreign.size) {
    // Already done (the declarations import the vendor files), or nothing to vendor.
    console.log(`types: ${declarations.size} declaration files reached from exports, all resolvable with the dependencies`);
    return;
  }
  const vendored = await bundleVendorTypes(foreign);
  const rewritten = rewriteSpecifiers(declarations, foreign);
  const removed = pruneUnreachable(declarations);
  const left = foreignSpecifiers(reachableDeclarations());
  if (left.size) throw new Error(`the published declarations still import ${[...left.keys()].join(", ")}, not installed with ${pkg.name}`);
  console.log(
    `types: ${declarations.size} declaration files reached from exports, ${rewritten} rewritten to ${vendored.files} vendored (${(vendored.bytes / 1024).toFixed(0)} KiB of ${vendored.inlined.join(", ")}), ${removed} unreachable removed, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

await main();
