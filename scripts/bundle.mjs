#!/usr/bin/env node
/**
 * Bundles the CLI and the SDK entry into dist/bundle/ with esbuild (after tsc has type-checked
 * and emitted dist/ with its .d.ts files). One bundle, code-split, so:
 *  - start-up loads a handful of files instead of hundreds (typebox alone is ~370 ESM files);
 *  - the `pi` binary and the package entry that extensions import are the same module graph
 *    (dist/bundle/index.js), so an extension gets the very instances the host runs.
 * Heavy or optional packages stay external and load lazily on the paths that need them:
 * pi-ai provider modules, the MCP SDK, blessed, jiti, cosmiconfig. Last, it writes the built-in
 * model catalog (scripts/model-catalog.mjs).
 */
import { build } from "esbuild";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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
  external: [
    // pi-ai's wire API modules and the SDKs behind them load from the installed package, the
    // files the extension loader aliases too (one instance, nothing inlined twice).
    "@earendil-works/pi-ai/api/*",
    "@earendil-works/pi-ai/compat",
    "@earendil-works/pi-ai/providers/*",
    "@modelcontextprotocol/sdk",
    "@modelcontextprotocol/sdk/*",
    "blessed",
    // pi-tui stays one module instance shared with extensions (the loader aliases them to it).
    "@earendil-works/pi-tui",
    "@earendil-works/pi-tui/*",
    "jiti",
    "cosmiconfig",
    "zod",
    "undici", // HTTP proxy/timeout settings (plugins/network): loaded only when one is set
    "mvdan-sh", // the bash parser for permission rules: ~1.5 MB, loaded only when a bash rule exists
    "@silvia-odwyer/photon-node", // image resizing (WASM, reads its .wasm beside it): loaded on the first resize
    "quickjs-emscripten-core", // codemode's sandbox (QuickJS in WASM): loaded on the first script
    "@jitl/quickjs-wasmfile-release-sync",
  ],
});
requireBuiltins(Object.keys(result.metafile.outputs).map((f) => resolve(f)));
// PI_BUNDLE_META=<file>: esbuild's metafile (which module went into which file), for size work.
if (process.env.PI_BUNDLE_META) writeFileSync(process.env.PI_BUNDLE_META, JSON.stringify(result.metafile));
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`bundle: ${Object.keys(result.metafile.outputs).length} files, ${(bytes / 1024).toFixed(0)} KiB → dist/bundle/`);
// The built-in model catalog (dist/model-catalog/), from the installed pi-ai's public API.
const catalog = await (await import("./model-catalog.mjs")).writeModelCatalog();
console.log(`model catalog: ${catalog.models} models of ${catalog.providers} providers from ${catalog.source} → dist/model-catalog/`);
writeStamp(inputs);

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
