/**
 * Package sources, as written in settings `packages` and given to `pi install`:
 *
 *   npm:name  npm:name@1.2.3  npm:@scope/name@^2      an npm package (a version or range pins it)
 *   npm:./pkg-1.0.0.tgz  npm:/abs/dir  npm:file:…     an npm tarball or folder (pinned)
 *   git:github.com/user/repo[@ref]                    git (shorthand needs the git: prefix)
 *   git:git@github.com:user/repo[@ref]
 *   https://…, http://…, ssh://…, git://…[@ref]       git (protocol URLs need no prefix)
 *   git:file:///abs/path/repo[@ref]                   a git repository on disk
 *   anything else                                     a local file or folder (not copied)
 *
 * Identity (used to match settings entries and to let a project entry win over a global one):
 * npm → the package name, git → host/path without the ref, local → the absolute path.
 */
import { createHash } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { homedir } from "node:os";
import { expandHome as expandHomeIn } from "../../core/kernel/index.js";

export type PackageScope = "user" | "project" | "temporary";

export interface NpmSource {
  type: "npm";
  source: string;
  /** What npm install gets: the spec after "npm:" (a file spec made absolute). */
  spec: string;
  /** Package name; undefined for a file spec until the file is read. */
  name?: string;
  version?: string;
  /** Absolute path of a tarball or folder spec. */
  file?: string;
  pinned: boolean;
}
export interface GitSource {
  type: "git";
  source: string;
  /** What git clone gets. */
  repo: string;
  host: string;
  path: string;
  ref?: string;
  pinned: boolean;
}
export interface LocalSource {
  type: "local";
  source: string;
  /** Absolute path. */
  path: string;
}
export type ParsedSource = NpmSource | GitSource | LocalSource;

export class SourceError extends Error {}

const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*$/;

export function expandHome(p: string, home = process.env.HOME || homedir()): string {
  return expandHomeIn(p, home);
}

function isFileSpec(spec: string): boolean {
  return /^(\.{1,2}([/\\]|$)|[/\\]|~|file:)/.test(spec) || /\.(tgz|tar\.gz|tar)$/i.test(spec) || /^[a-zA-Z]:[/\\]/.test(spec);
}

/** Split "name@version" (scoped names keep their leading @). */
export function splitNpmSpec(spec: string): { name: string; version?: string } {
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  if (at === -1) return { name: spec };
  return { name: spec.slice(0, at), version: spec.slice(at + 1) || undefined };
}

function splitRef(pathPart: string): { path: string; ref?: string } {
  const at = pathPart.lastIndexOf("@");
  if (at <= 0) return { path: pathPart };
  const ref = pathPart.slice(at + 1);
  const path = pathPart.slice(0, at);
  if (!ref || !path) return { path: pathPart };
  return { path, ref };
}

const cleanPath = (p: string) => p.replace(/^\/+/, "").replace(/\/+$/, "").replace(/\.git$/, "");

function parseGit(url: string, source: string): GitSource | undefined {
  // file:///abs/repo[@ref]
  if (url.startsWith("file://")) {
    const { path, ref } = splitRef(url.slice("file://".length));
    if (!path.startsWith("/")) return undefined;
    return { type: "git", source, repo: `file://${path}`, host: "local", path: cleanPath(path), ref, pinned: !!ref };
  }
  // git@host:user/repo[@ref]
  const scp = /^([^@/:]+)@([^:/]+):(.+)$/.exec(url);
  if (scp && !url.includes("://")) {
    const { path, ref } = splitRef(scp[3]!);
    const p = cleanPath(path);
    if (p.split("/").length < 2) return undefined;
    return { type: "git", source, repo: `${scp[1]}@${scp[2]}:${path}`, host: scp[2]!, path: p, ref, pinned: !!ref };
  }
  // protocol URLs
  const proto = /^(https?|ssh|git):\/\/(.+)$/i.exec(url);
  if (proto) {
    const rest = proto[2]!;
    const slash = rest.indexOf("/");
    if (slash === -1) return undefined;
    const authority = rest.slice(0, slash);
    const { path, ref } = splitRef(rest.slice(slash + 1));
    const host = authority.replace(/^[^@]*@/, "").replace(/:\d+$/, "");
    const p = cleanPath(path);
    if (!host || p.split("/").length < 2) return undefined;
    return { type: "git", source, repo: `${proto[1]}://${authority}/${path}`, host, path: p, ref, pinned: !!ref };
  }
  // host/user/repo[@ref]
  const slash = url.indexOf("/");
  if (slash <= 0) return undefined;
  const host = url.slice(0, slash);
  if (!host.includes(".") && host !== "localhost") return undefined;
  const { path, ref } = splitRef(url.slice(slash + 1));
  const p = cleanPath(path);
  if (p.split("/").length < 2) return undefined;
  return { type: "git", source, repo: `https://${host}/${path}`, host, path: p, ref, pinned: !!ref };
}

/**
 * Parse a source. `base` resolves relative local paths and file specs (the settings file's
 * folder for settings entries, the cwd for the command line). Throws SourceError when the
 * source is malformed.
 */
export function parseSource(source: string, base: string): ParsedSource {
  const s = source.trim();
  if (!s) throw new SourceError("empty package source");
  if (s.startsWith("npm:")) {
    const spec = s.slice(4).trim();
    if (!spec) throw new SourceError(`"${source}": npm: needs a package name`);
    if (isFileSpec(spec)) {
      const raw = spec.startsWith("file:") ? spec.slice(5) : spec;
      const file = resolve(base, expandHome(raw));
      return { type: "npm", source: s, spec: file, file, pinned: true };
    }
    const { name, version } = splitNpmSpec(spec);
    if (!NPM_NAME.test(name)) throw new SourceError(`"${source}": "${name}" is not a valid npm package name`);
    // A version or range pins the package; a dist-tag (latest, next, beta) does not.
    const pinned = version !== undefined && !(/^[a-z][\w.-]*$/i.test(version) && !/^[xX]$/.test(version));
    return { type: "npm", source: s, spec, name, version, pinned };
  }
  if (s.startsWith("git:")) {
    const g = parseGit(s.slice(4).trim(), s);
    if (!g) throw new SourceError(`"${source}": not a git repository address (e.g. git:github.com/user/repo@v1)`);
    return g;
  }
  if (/^(https?|ssh|git):\/\//i.test(s)) {
    const g = parseGit(s, s);
    if (!g) throw new SourceError(`"${source}": not a git repository address`);
    return g;
  }
  const p = expandHome(s);
  return { type: "local", source: s, path: isAbsolute(p) ? p : resolve(base, p) };
}

/** The identity of a parsed source (see the module comment). File specs need `name` filled in. */
export function identityOf(p: ParsedSource): string {
  if (p.type === "npm") return `npm:${p.name ?? p.file ?? p.spec}`;
  if (p.type === "git") return `git:${p.host}/${p.path}`;
  return `local:${p.path}`;
}

export function shortHash(s: string): string {
  return createHash("sha256").update(s).digest("hex").slice(0, 10);
}
