/**
 * Loads .ts/.js plugin and extension modules with jiti: TypeScript without a build step.
 *
 * Imports of the host packages (our own package name, @mariozechner/pi-coding-agent,
 * @earendil-works/pi-coding-agent), of typebox, @sinclair/typebox and of the pi libraries
 * (pi-ai, pi-agent-core, pi-tui, pi-schema under both scopes, each the 1.6 package) resolve to
 * the very files the host runs, so they share the host's ESM module instances
 * (`instanceof` works, one TypeBox copy for extensions). From the bundle those are its vendor
 * entries (the libraries are bundled, not installed beside it; TypeBox stays installed); from
 * sources, the installed packages. jiti
 * itself is imported on first use only.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface LoaderOptions {
  /** Package names an extension may import to reach the host, mapped to the host's entry file. */
  hostAliases?: Record<string, string>;
  /** jiti's transpile cache folder (under the agent dir); false disables it. */
  cacheDir?: string | false;
}

export interface ModuleLoader {
  import<T = unknown>(path: string): Promise<T>;
  /** The alias map in use (for diagnostics and tests). */
  readonly aliases: Record<string, string>;
}

function packageDir(spec: string): string | undefined {
  try {
    let d = dirname(fileURLToPath(import.meta.resolve(spec)));
    const tail = join("node_modules", spec);
    while (!d.endsWith(tail)) {
      const up = dirname(d);
      if (up === d) return undefined;
      d = up;
    }
    return d;
  } catch {
    return undefined;
  }
}

/** Every non-wildcard `exports` key of `pkg` mapped to the file the host resolves it to. */
export function exportAliases(pkg: string, as: string = pkg): Record<string, string> {
  const dir = packageDir(pkg);
  if (!dir) return {};
  let exps: Record<string, unknown> = { ".": {} };
  try {
    const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    exps = json.exports && typeof json.exports === "object" ? json.exports : { ".": {} };
  } catch {
    /* fall through with the root only */
  }
  const out: Record<string, string> = {};
  for (const k of Object.keys(exps)) {
    if (!k.startsWith(".") || k.includes("*") || k.endsWith(".json")) continue;
    const spec = k === "." ? pkg : `${pkg}/${k.slice(2)}`;
    const alias = k === "." ? as : `${as}/${k.slice(2)}`;
    try {
      out[alias] = fileURLToPath(import.meta.resolve(spec));
    } catch {
      /* no import condition for this key */
    }
  }
  return out;
}

/**
 * core/kernel/pi-ai-view: beside this file (sources, tsc output), or in the package's dist/core/kernel when
 * this code runs from the bundle (dist/bundle/...).
 */
function piAiViewPath(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const name of ["pi-ai-view.js", "pi-ai-view.ts"]) if (existsSync(join(here, name))) return join(here, name);
  for (let d = here; dirname(d) !== d; d = dirname(d)) {
    if (existsSync(join(d, "package.json"))) {
      const p = join(d, "dist", "core", "kernel", "pi-ai-view.js");
      return existsSync(p) ? p : undefined;
    }
  }
  return undefined;
}

/**
 * pi-ai for extensions, under both scopes as pi 1.6 gives it: the real 1.6 package (its subpaths
 * as they are; the root is pi-ai-view: 1.6's compat API plus TypeBox's Type and StringEnum, as
 * 1.6 gives its extensions). `compat` stays the package's own: pi-ai-view re-exports it.
 * Loaded only when an extension imports it.
 */
function piAiAliases(as: string): Record<string, string> {
  const out = exportAliases("@earendil-works/pi-ai", as);
  const view = piAiViewPath();
  if (view && out[as]) out[as] = view;
  return out;
}

/**
 * Running from the bundle (dist/bundle/...): the library aliases it was built with, each mapped
 * to its vendor entry file (dist/bundle/vendor/aliases.json, written by scripts/bundle.mjs).
 */
function bundledAliases(): Record<string, string> | undefined {
  const m = /^(.*[\\/]dist[\\/]bundle)[\\/]/.exec(fileURLToPath(import.meta.url));
  const file = m ? join(m[1]!, "vendor", "aliases.json") : undefined;
  if (!file || !existsSync(file)) return undefined;
  const rel = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  return Object.fromEntries(Object.entries(rel).map(([name, path]) => [name, join(dirname(file), path)]));
}

/**
 * The library aliases resolved to the installed packages (the bundle build makes each file a
 * vendor entry). One generation of the pi libraries: the old scope (@mariozechner/*, pi 0.73
 * extensions) is served by the same 1.6 packages as the new one.
 */
export function installedLibraryAliases(): Record<string, string> {
  return {
    ...typeboxAliases(),
    ...piAiAliases("@mariozechner/pi-ai"),
    ...piAiAliases("@earendil-works/pi-ai"),
    ...exportAliases("@earendil-works/pi-agent-core", "@mariozechner/pi-agent-core"),
    ...exportAliases("@earendil-works/pi-agent-core"),
    ...exportAliases("@earendil-works/pi-tui", "@mariozechner/pi-tui"),
    ...exportAliases("@earendil-works/pi-tui"),
    ...exportAliases("@earendil-works/pi-schema"),
  };
}

/**
 * TypeBox, installed beside the bundle too: the bundle inlines the parts the host uses, and a
 * vendor entry of the whole package would put all of it on the start-up path.
 */
function typeboxAliases(): Record<string, string> {
  return { ...exportAliases("typebox"), ...exportAliases("typebox", "@sinclair/typebox") };
}

let sharedAliases: Record<string, string> | undefined;
function libraryAliases(): Record<string, string> {
  const bundled = bundledAliases();
  sharedAliases ??= bundled ? { ...typeboxAliases(), ...bundled } : installedLibraryAliases();
  return sharedAliases;
}

let vendorFiles: Record<string, string> | null | undefined;
/**
 * What to `require` for a library the host loads synchronously (pi-tui for the components it hands
 * to extensions): from the bundle, its vendor entry (the instance extensions get; the package is
 * not installed beside it); from sources, the package name.
 */
export function libraryRequireSpecifier(name: string): string {
  vendorFiles ??= bundledAliases() ?? null;
  return vendorFiles?.[name] ?? name;
}

export function createLoader(opts: LoaderOptions = {}): ModuleLoader {
  // Resolved on first use: computing them reads package.json files (~10 ms), wasted on runs without extensions.
  let aliasMap: Record<string, string> | undefined;
  const aliases = () => (aliasMap ??= { ...libraryAliases(), ...(opts.hostAliases ?? {}) });
  let jiti: { import<T>(id: string, o?: object): Promise<T> } | undefined;
  const get = async () => {
    if (jiti) return jiti;
    const { createJiti } = await import("jiti");
    jiti = createJiti(import.meta.url, {
      alias: aliases(),
      fsCache: opts.cacheDir === false ? false : (opts.cacheDir ?? true),
      moduleCache: false,
      interopDefault: false,
    }) as unknown as typeof jiti;
    return jiti!;
  };
  return {
    get aliases() {
      return aliases();
    },
    async import<T>(path: string): Promise<T> {
      if (!existsSync(path)) throw new Error(`module not found: ${path}`);
      const j = await get();
      return j.import<T>(path);
    },
  };
}

