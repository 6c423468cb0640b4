/**
 * `pi new <kind> <dir>`: create a project from a template. The kinds live in the kernel
 * service "scaffolds" (a Map kind → Scaffold), so other plugins add theirs
 * (`registerScaffold(api, {name: "…", …})`); this plugin brings "extension", "cli" and "plugin".
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { definePlugin, type Kernel, type PluginApi, type SubcommandContext } from "../../core/kernel/index.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    /** The scaffolds `pi new` offers (shared by the plugins that add one). */
    scaffolds: ScaffoldMap;
  }
}

export interface ScaffoldContext extends SubcommandContext {
  /** Words after `pi new <kind> <dir>`. */
  args: string[];
}

export interface Scaffold {
  name: string;
  description: string;
  /** Create the project in `dir` (absolute); returns the exit code. */
  run(dir: string, ctx: ScaffoldContext): Promise<number | void> | number | void;
}

export type ScaffoldMap = Map<string, Scaffold>;

/** The shared map of scaffolds (created on first use). */
export function scaffolds(api: PluginApi): ScaffoldMap {
  let map = api.kernel.service("scaffolds");
  if (!(map instanceof Map)) {
    map = new Map();
    api.provide("scaffolds", map);
  }
  return map;
}

export function registerScaffold(api: PluginApi, scaffold: Scaffold): () => void {
  const map = scaffolds(api);
  if (map.has(scaffold.name)) {
    api.report("warning", `scaffold "${scaffold.name}" is already registered; keeping the first one`);
    return () => undefined;
  }
  map.set(scaffold.name, scaffold);
  return () => {
    if (map.get(scaffold.name) === scaffold) map.delete(scaffold.name);
  };
}

/** The root of this package (the folder holding package.json and templates/). */
export function packageRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(d, "package.json")) && existsSync(join(d, "templates"))) return d;
    const up = dirname(d);
    if (up === d) throw new Error("cannot find the package root (templates/ next to package.json)");
    d = up;
  }
}

/** A valid npm package name made from a folder name. */
export function packageNameFor(dir: string): string {
  const n = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|[-]+$/g, "");
  return n || "pi-extension";
}

/**
 * Copy a template folder, replacing `{{KEY}}` placeholders in every text file. A file named
 * `_gitignore` becomes `.gitignore` (npm drops dotfiles named .gitignore from packages).
 */
export function copyTemplate(from: string, to: string, vars: Record<string, string>): string[] {
  const written: string[] = [];
  const walk = (src: string, dst: string) => {
    mkdirSync(dst, { recursive: true });
    for (const name of readdirSync(src).sort()) {
      const s = join(src, name);
      const targetName = name === "_gitignore" ? ".gitignore" : name;
      const d = join(dst, targetName);
      if (statSync(s).isDirectory()) {
        if (name === "node_modules") continue;
        walk(s, d);
        continue;
      }
      let text = readFileSync(s, "utf8");
      text = text.replace(/\{\{([A-Z_]+)\}\}/g, (m, k: string) => (k in vars ? vars[k]! : m));
      writeFileSync(d, text);
      written.push(d);
    }
  };
  walk(from, to);
  return written;
}

function isEmptyDir(p: string): boolean {
  try {
    return readdirSync(p).length === 0;
  } catch {
    return false;
  }
}

/** What a template scaffold needs: its folder under templates/ and what to tell the user next. */
export interface TemplateSpec {
  name: string;
  description: string;
  /** Folder under templates/. */
  template: string;
  /** The created thing, for the message ("extension", "custom CLI", …). */
  what: string;
  /** Lines shown after "Next:" (rel = the folder relative to the cwd, name = the package name). */
  next(rel: string, name: string, app: string): string[];
}

/** Where this package came from, which decides how a scaffold depends on it. */
export interface HostOrigin {
  /** "checkout": a local folder (not under node_modules); "installed": from a registry or a packed tarball. */
  kind: "checkout" | "installed";
  /** The dependency spec for a scaffold's package.json: `file:<root>` for a checkout, `^<version>` otherwise. */
  spec: string;
}

/**
 * A checkout is depended on by its path (works offline); an installed package by a version
 * range, so the scaffold survives the host being moved, updated or reinstalled.
 */
export function hostOrigin(root: string, version: string): HostOrigin {
  const parent = dirname(root);
  const installed = basename(parent) === "node_modules" || basename(dirname(parent)) === "node_modules";
  return installed ? { kind: "installed", spec: `^${version}` } : { kind: "checkout", spec: `file:${root}` };
}

/**
 * A scaffold copying templates/<template>. Placeholders: NAME (package name from the folder),
 * HOST_NAME / HOST_VERSION (this package), HOST_SPEC (how the scaffold depends on this package:
 * see hostOrigin()), APP (the running CLI's name).
 */
export function templateScaffold(kernel: Kernel, spec: TemplateSpec): Scaffold {
  return {
    name: spec.name,
    description: spec.description,
    run(dir, ctx) {
      const root = packageRoot();
      const template = join(root, "templates", spec.template);
      if (!existsSync(template)) {
        ctx.stderr(`${kernel.app.name} new ${spec.name}: the template folder ${template} is missing from this installation`);
        return 1;
      }
      const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; version: string };
      const name = packageNameFor(dir);
      const origin = hostOrigin(root, pkg.version);
      const files = copyTemplate(template, dir, {
        NAME: name,
        HOST_NAME: pkg.name,
        HOST_VERSION: pkg.version,
        HOST_SPEC: origin.spec,
        APP: kernel.app.name,
      });
      const rel = relative(ctx.cwd, dir) || ".";
      const next = spec.next(rel, name, kernel.app.name);
      // Installed from a tarball that no registry has, the range cannot be fetched: say what to do first.
      if (origin.kind === "installed") next.splice(1, 0, `# ${pkg.name} is not on your registry? first: npm install <the ${pkg.name}-${pkg.version}.tgz you installed>`);
      const dep = origin.kind === "checkout" ? `${pkg.name} is a file: dependency on this checkout (${root})` : `${pkg.name} is a dependency as ${origin.spec}`;
      ctx.stdout(`Created the ${spec.what} "${name}" in ${rel} (${files.length} files); ${dep}.\n\nNext:\n${next.map((l) => `  ${l}\n`).join("")}`);
      return 0;
    },
  };
}

export function extensionScaffold(kernel: Kernel): Scaffold {
  return templateScaffold(kernel, {
    name: "extension",
    description: "a TypeScript pi extension with a test that runs against the faux model",
    template: "extension",
    what: "extension",
    next: (rel, _name, app) => [`cd ${rel}`, "npm install && npm test", `${app} -e ./src/index.ts     # try it`],
  });
}

/** `new cli <dir>`: a team's own CLI (createCli) with an inline extension. */
export function cliScaffold(kernel: Kernel): Scaffold {
  return templateScaffold(kernel, {
    name: "cli",
    description: "a custom CLI built with createCli(): its own name and config folders, an inline extension, a test",
    template: "cli",
    what: "custom CLI",
    next: (rel, name) => [`cd ${rel}`, "npm install && npm test", `node bin/cli.js --version     # or npm link, then: ${name} --version`],
  });
}

/** `new plugin <dir>`: a native kernel plugin (definePlugin). */
export function pluginScaffold(kernel: Kernel): Scaffold {
  return templateScaffold(kernel, {
    name: "plugin",
    description: "a native kernel plugin (definePlugin) with a test that runs against the faux model",
    template: "plugin",
    what: "plugin",
    next: (rel, _name, app) => [`cd ${rel}`, "npm install && npm test", `${app} -e ./src/index.ts     # try it (or list it in the "plugins" setting)`],
  });
}

function usage(kernel: Kernel, map: ScaffoldMap): string {
  const lines = [`Usage: ${kernel.app.name} new <kind> <dir>`, "", "Kinds:"];
  for (const s of map.values()) lines.push(`  ${s.name.padEnd(12)} ${s.description}`);
  return lines.join("\n") + "\n";
}

export default definePlugin({
  name: "scaffolds",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "`new <kind> <dir>`: project scaffolds (extension; other plugins add kinds)",
  setup(api) {
    const kernel = api.kernel;
    const map = scaffolds(api);
    registerScaffold(api, extensionScaffold(kernel));
    registerScaffold(api, cliScaffold(kernel));
    registerScaffold(api, pluginScaffold(kernel));
    api.registerSubcommand({
      name: "new",
      description: "Create a project from a template (new extension|cli|plugin <dir>)",
      usage: "new <kind> <dir>",
      async run(args, ctx) {
        const [kind, dir, ...rest] = args;
        if (!kind || kind === "--help" || kind === "-h") {
          (kind ? ctx.stdout : ctx.stderr)(usage(kernel, map));
          return kind ? 0 : 1;
        }
        const scaffold = map.get(kind);
        if (!scaffold) {
          ctx.stderr(`${kernel.app.name} new: unknown kind "${kind}"\n\n${usage(kernel, map)}`);
          return 1;
        }
        if (!dir) {
          ctx.stderr(`${kernel.app.name} new ${kind}: name the folder to create, e.g. ${kernel.app.name} new ${kind} ./my-${kind}`);
          return 1;
        }
        const target = resolve(ctx.cwd, dir);
        if (existsSync(target) && !isEmptyDir(target)) {
          ctx.stderr(`${kernel.app.name} new ${kind}: ${target} already exists and is not empty; choose another folder`);
          return 1;
        }
        try {
          const code = await scaffold.run(target, { ...ctx, args: rest });
          return typeof code === "number" ? code : 0;
        } catch (error) {
          ctx.stderr(`${kernel.app.name} new ${kind}: ${error instanceof Error ? error.message : String(error)}`);
          return 1;
        }
      },
    });
  },
});
