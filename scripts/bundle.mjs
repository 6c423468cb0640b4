#!/usr/bin/env node
/**
 * Bundles the CLI and the SDK entry into dist/bundle/ with esbuild (after tsc has type-checked
 * and emitted dist/ with its .d.ts files). One bundle, code-split, so:
 *  - start-up loads a handful of files instead of hundreds (typebox alone is ~370 ESM files);
 *  - the `pi` binary and the package entry that extensions import are the same module graph
 *    (dist/bundle/index.js), so an extension gets the very instances the host runs.
 * The libraries extensions import (pi-ai, pi-agent-core, pi-tui, pi-schema) are bundled too,
 * each module the extension loader hands out an entry of its own under vendor/ (listed in
 * vendor/aliases.json, which the loader reads), so host and extensions share one instance and the
 * package installs none of them nor the provider SDKs behind pi-ai; those, the MCP and ACP SDKs
 * load lazily from their own chunks. External: packages that read files beside their code (WASM,
 * native helpers) or are optional (blessed, jiti, cosmiconfig, undici, mvdan-sh, photon,
 * QuickJS), and TypeBox for extensions (the host's own use of it is inlined). Last, it writes the
 * built-in model catalog (scripts/model-catalog.mjs).
 */
import { build } from "esbuild";
import { cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist", "bundle");
// The stamp of the inputs as they are now (written last: a failed build leaves no stamp).
const { sourceHash, writeStamp } = await import("./build-stamp.mjs");
const inputs = sourceHash();
rmSync(outdir, { recursive: true, force: true });

// binary: the start-up path a custom CLI's bin imports first (`pi-kernel/binary`, sdk/binary.ts).
const entryPoints = { cli: join(root, "sdk/cli.ts"), binary: join(root, "sdk/binary.ts") };
if (existsSync(join(root, "sdk/index.ts"))) entryPoints.index = join(root, "sdk/index.ts");
// plugin: the kernel's face as the package's `pi-kernel/plugin` entry (sdk/plugin.ts).
if (existsSync(join(root, "sdk/plugin.ts"))) entryPoints.plugin = join(root, "sdk/plugin.ts");
const vendorAliases = await vendorEntries(entryPoints);

/**
 * Built-ins whose functions the code calls only when it does something (runs a command, reads
 * a file, starts a worker): required on the first call instead of when the file loads, ~5 ms of
 * start-up for child_process, fs/promises, readline and worker_threads (Node 20 and 22,
 * measured). Only when every imported name is a function (classes are constructed through it).
 */
const LAZY_BUILTINS = new Set(["node:child_process", "node:crypto", "node:fs/promises", "node:readline", "node:worker_threads"]);
const nodeRequire = createRequire(import.meta.url);
const LAZY_HELPER =
  "function __piLazy(m, names) { const o = {}; for (const n of names) o[n] = function (...a) { const f = require(m)[n]; return new.target ? Reflect.construct(f, a) : f.apply(this, a); }; return o; }";

const BANNER = 'import { createRequire as __piCreateRequire } from "node:module"; const require = __piCreateRequire(import.meta.url);';

const result = await build({
  entryPoints,
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: false,
  legalComments: "none",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
  metafile: true,
  chunkNames: "chunks/[name]-[hash]",
  // CommonJS dependencies (tapable, yargs-parser, semver) call require().
  banner: { js: BANNER },
  plugins: [piAiVariableImports(), openaiVersionInlined(), piAiViewTypebox(), oneStringWidth()],
  external: [
    "blessed",
    "jiti",
    "cosmiconfig",
    "undici", // HTTP proxy/timeout settings (plugins/network): loaded only when one is set
    "mvdan-sh", // the bash parser for permission rules: ~1.5 MB, loaded only when a bash rule exists
    "@silvia-odwyer/photon-node", // image resizing (WASM, reads its .wasm beside it): loaded on the first resize
    "quickjs-emscripten-core", // codemode's sandbox (QuickJS in WASM): loaded on the first script
    "@jitl/quickjs-wasmfile-release-sync",
  ],
});
requireBuiltins(Object.keys(result.metafile.outputs).map((f) => resolve(f)));
writeFileSync(join(outdir, "vendor", "aliases.json"), JSON.stringify(vendorAliases, null, 1) + "\n");
copyPiTuiNativeHelpers();
// dist/bundle-contents.json (not packed): each bundle file → the package files inlined in it, for
// the tests that check which libraries a run loads (tests/startup.e2e.test.ts).
const contents = {};
for (const [file, o] of Object.entries(result.metafile.outputs)) {
  const mods = Object.keys(o.inputs).filter((i) => i.includes("node_modules/")).map((i) => i.slice(i.lastIndexOf("node_modules/") + "node_modules/".length));
  if (mods.length) contents[relative(outdir, resolve(file)).split(sep).join("/")] = mods;
}
writeFileSync(join(root, "dist", "bundle-contents.json"), JSON.stringify(contents));
// PI_BUNDLE_META=<file>: esbuild's metafile (which module went into which file), for size work.
if (process.env.PI_BUNDLE_META) writeFileSync(process.env.PI_BUNDLE_META, JSON.stringify(result.metafile));
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`bundle: ${Object.keys(result.metafile.outputs).length} files, ${(bytes / 1024).toFixed(0)} KiB → dist/bundle/`);
// The built-in model catalog (dist/model-catalog/), from the installed pi-ai's public API.
const catalog = await (await import("./model-catalog.mjs")).writeModelCatalog();
console.log(`model catalog: ${catalog.models} models of ${catalog.providers} providers from ${catalog.source} → dist/model-catalog/`);
writeStamp(inputs);

/**
 * One entry (vendor/<name>.js) per file the extension loader aliases a library name to, from the
 * installed packages (core/kernel/loader.ts, compiled beside dist/ so that it resolves them as the
 * sources do; tsc's output may not exist when only the bundle is rebuilt); returns the alias map
 * the bundle's loader uses instead: name → entry file, relative to vendor/.
 */
async function vendorEntries(entries) {
  const tmp = join(root, "dist", `.library-aliases-${process.pid}.mjs`);
  await build({ entryPoints: [join(root, "core", "kernel", "loader.ts")], outfile: tmp, format: "esm", platform: "node", logLevel: "warning" });
  let all;
  try {
    all = (await import(pathToFileURL(tmp).href)).installedLibraryAliases();
  } finally {
    rmSync(tmp, { force: true });
  }
  // pi-ai's root is the view the loader hands to extensions (from its sources here).
  for (const name of ["@earendil-works/pi-ai", "@mariozechner/pi-ai"]) all[name] = join(root, "core", "kernel", "pi-ai-view.ts");
  // TypeBox stays an installed dependency that extensions import: as an entry, all of it would
  // be live and on the start-up path (+160 KB loaded by `-p`, measured), not just what the host uses.
  const installed = Object.fromEntries(Object.entries(all).filter(([name]) => !/^(@sinclair\/)?typebox(\/|$)/.test(name)));
  const byFile = new Map();
  // The entry's name: the alias of the current scope (not @mariozechner/…, @sinclair/…).
  const rank = (name) => (/^@(mariozechner|sinclair)\//.test(name) ? 1 : 0);
  for (const [name, file] of Object.entries(installed).sort(([a], [b]) => rank(a) - rank(b))) {
    if (!byFile.has(file)) byFile.set(file, name.replace(/^@/, "").replace(/\//g, "+"));
  }
  const out = {};
  for (const [name, file] of Object.entries(installed)) {
    const entry = byFile.get(file);
    entries[`vendor/${entry}`] = file;
    out[name] = `${entry}.js`;
  }
  return out;
}

/**
 * pi-tui's native helpers (clipboard text and images, macOS/Windows modifier keys; a few KB each):
 * bundled, pi-tui looks for them beside its chunk's folder (dist/bundle/native/<platform>/prebuilds/…),
 * one of the places it tries for standalone builds.
 */
function copyPiTuiNativeHelpers() {
  const from = join(dirname(nodeRequire.resolve("@earendil-works/pi-tui/package.json")), "native");
  if (!existsSync(from)) throw new Error(`pi-tui's native helpers are not at ${from}`);
  cpSync(from, join(outdir, "native"), { recursive: true, filter: (src) => statSync(src).isDirectory() || src.endsWith(".node") });
}

/**
 * pi-ai loads its OAuth flows and the Bedrock API through a computed specifier, resolved against
 * its own file, so that bundlers do not follow them; bundled, that file is gone. The literal
 * import instead: esbuild gives each its own lazy chunk.
 */
function piAiVariableImports() {
  return {
    name: "pi-ai-variable-imports",
    setup(b) {
      b.onLoad({ filter: /[\\/]pi-ai[\\/]dist[\\/](auth[\\/]oauth[\\/]load|api[\\/]bedrock-converse-stream\.lazy)\.js$/ }, (args) => {
        const text = readFileSync(args.path, "utf8");
        const out = text.replace(/\bimport(?:OAuthModule|NodeOnlyApi)\("(\.\/[\w./-]+)\.ts"\)/g, (_all, p) => `import("${p}.js")`);
        if (out === text || /import(OAuthModule|NodeOnlyApi)\("/.test(out)) throw new Error(`${args.path}: pi-ai's computed imports are not where the bundle expects them`);
        return { contents: out, loader: "js" };
      });
    },
  };
}

/**
 * pi-ai-view (what extensions get for pi-ai) gives them TypeBox's `Type`: the installed package's,
 * the copy their own `typebox` imports get, not the parts inlined for the host.
 */
function piAiViewTypebox() {
  return {
    name: "pi-ai-view-typebox",
    setup(b) {
      b.onResolve({ filter: /^typebox$/ }, (args) => (/[\\/]pi-ai-view\.(js|ts)$/.test(args.importer) ? { path: args.path, external: true } : undefined));
    },
  };
}

/**
 * yargs lays out `--help` with cliui and wrap-ansi, which measure every cell with their own
 * string-width 7: it segments each string with Intl.Segmenter and builds the emoji regex once per
 * character. yargs' own string-width (8) returns the length of printable ASCII at once and keeps
 * one compiled emoji pattern; the layout measures the same widths with it. Every `string-width`
 * import in the bundle gets that one copy, and its segmenter is made on the first string that
 * needs one: `new Intl.Segmenter()` loads ICU's break rules, 22 ms and ~4 MiB on Node 22, which
 * help made only of printable ASCII never uses. `pi --help` on Node 22 (npm run bench, medians,
 * with the help text kept to ASCII): peak RSS 80.7 → 67.2 MiB, wall 289 → 190 ms.
 */
function oneStringWidth() {
  const yargsRequire = createRequire(fileURLToPath(import.meta.resolve("yargs")));
  const path = yargsRequire.resolve("string-width");
  const { version } = JSON.parse(readFileSync(join(dirname(path), "package.json"), "utf8"));
  if (!/^([89]|\d\d)\./.test(version)) throw new Error(`yargs' string-width is ${version}; the bundle expects 8 or later`);
  return {
    name: "one-string-width",
    setup(b) {
      b.onResolve({ filter: /^string-width$/ }, () => ({ path }));
      b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, (args) => {
        if (args.path !== path) return undefined;
        const text = readFileSync(path, "utf8");
        const eager = "const segmenter = new Intl.Segmenter();";
        if (!text.includes(eager)) throw new Error(`string-width ${version}: no "${eager}" to make lazy`);
        const lazy = "let __segmenter; const segmenter = { segment: (s) => (__segmenter ??= new Intl.Segmenter()).segment(s) };";
        return { contents: text.replace(eager, lazy), loader: "js" };
      });
    },
  };
}

/** plugins/providers/fast/openai-sdk-version.ts as the version of the `openai` package pi-ai depends on, read now. */
function openaiVersionInlined() {
  const piAiCompletions = fileURLToPath(import.meta.resolve("@earendil-works/pi-ai/api/openai-completions"));
  const req = createRequire(piAiCompletions);
  const { VERSION } = req(req.resolve("openai/version"));
  if (typeof VERSION !== "string") throw new Error("openai/version (pi-ai's dependency) has no VERSION");
  return {
    name: "openai-sdk-version",
    setup(b) {
      b.onLoad({ filter: /[\\/]plugins[\\/]providers[\\/]fast[\\/]openai-sdk-version\.ts$/ }, () => ({
        contents: `export function openaiSdkVersion() { return ${JSON.stringify(VERSION)}; }`,
        loader: "js",
      }));
    },
  };
}

/**
 * Node's built-in modules are required, not imported: an ESM import of a built-in builds its
 * module facade by reading every export, which runs the lazy getters some of them have (node:fs
 * loads its streams, node:crypto webcrypto, node:util …, node:http undici). Measured on Node 22:
 * `import("node:crypto")` 5 ms, `require("node:crypto")` 0.1 ms. esbuild writes each import of a
 * built-in as one `import { a, b as c } from "node:x";` line at the top of a file; it becomes
 * `const { a, b: c } = require("node:x");` (the banner's require), which reads only the names
 * used. (Rewriting the output, not the imports: a plugin making built-ins CommonJS modules
 * splits the bundle into more files, which costs more at start-up than it saves.)
 */
function requireBuiltins(files) {
  const line = /\bimport ?\{([^}]*)\} ?from ?"(node:[a-z_/]+)";/g;
  const star = /\bimport ?\* ?as ([A-Za-z_$][\w$]*) ?from ?"(node:[a-z_/]+)";/g;
  for (const file of files) {
    if (!file.endsWith(".js")) continue;
    const text = readFileSync(file, "utf8");
    let needsLazy = false;
    let out = text
      .replace(line, (all, names, mod) => {
        if (names.includes("__piCreateRequire")) return all;
        const binds = names
          .split(",")
          .map((n) => n.trim())
          .filter(Boolean)
          .map((n) => {
            const m = /^([\w$]+) as ([\w$]+)$/.exec(n);
            if (m && m[1] === "default") throw new Error(`${file}: default import of ${mod}`);
            return m ? `${m[1]}: ${m[2]}` : n;
          });
        const imported = binds.map((b) => b.split(":")[0].trim());
        if (LAZY_BUILTINS.has(mod) && imported.every((n) => typeof nodeRequire(mod)[n] === "function")) {
          needsLazy = true;
          return `const { ${binds.join(", ")} } = __piLazy(${JSON.stringify(mod)}, ${JSON.stringify(imported)});`;
        }
        return `const { ${binds.join(", ")} } = require(${JSON.stringify(mod)});`;
      })
      .replace(star, (_all, name, mod) => `const ${name} = require(${JSON.stringify(mod)});`);
    if (needsLazy) out = out.replace(BANNER, `${BANNER}\n${LAZY_HELPER}`);
    if (out !== text) writeFileSync(file, out);
  }
}
