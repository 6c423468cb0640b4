/**
 * find: list files and folders whose name (or, for a pattern with "/", path) matches a glob.
 * fd when it is on PATH (also as Debian's `fdfind`) and honours .gitignore where it searches,
 * otherwise the in-process walker; both include hidden entries, skip .git, honour .gitignore and
 * do not follow symbolic links.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { createInterface } from "node:readline";
import { Type, type Static } from "typebox";
import type { ToolDefinition } from "../../core/kernel/index.js";
import { fdPath, helpText } from "./external-tools.js";
import { PathGlob, hasUpperCase } from "./glob.js";
import { describeFsError, resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, formatSize, truncateHead, type TruncationResult } from "./truncate.js";
import { walkTree } from "./walk.js";
import type { SearchBackend } from "./grep.js";

const findSchema = Type.Object({
  pattern: Type.String({ description: "Glob to match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'" }),
  path: Type.Optional(Type.String({ description: "Folder to search in (default: the working directory)" })),
  limit: Type.Optional(Type.Number({ description: "Most results to return (default 1000)" })),
});

export type FindToolInput = Static<typeof findSchema>;

export interface FindToolDetails {
  truncation?: TruncationResult;
  resultLimitReached?: number;
}

export interface FindGlobOptions {
  /** Globs to leave out, e.g. "**\/node_modules/**". */
  ignore: string[];
  limit: number;
  signal?: AbortSignal;
}

/** File access for find; replace it to search elsewhere (ssh, a container). */
export interface FindOperations {
  exists(absolutePath: string): Promise<boolean> | boolean;
  /** Paths (absolute or relative to `cwd`) matching `pattern`. Default: fd, or the in-process walker. */
  glob?(pattern: string, cwd: string, options: FindGlobOptions): Promise<string[]> | string[];
}

export interface FindToolOptions {
  operations?: FindOperations;
  /** Which local engine to use: "auto" (default: fd when on PATH), "external" (fd, required) or "builtin". */
  backend?: SearchBackend;
}

export const DEFAULT_FIND_LIMIT = 1000;

function toPosix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}

/** fd's glob rules: no "/" → the name; with "/" → the path, at any depth. Smart case. */
function findGlob(pattern: string): PathGlob {
  return new PathGlob(pattern, { braces: true, ignoreCase: !hasUpperCase(pattern) });
}

/** The in-process find: relative paths, folders with a trailing "/". */
export async function findInProcess(pattern: string, root: string, options: FindGlobOptions): Promise<string[]> {
  const glob = findGlob(pattern);
  const ignore = options.ignore.map((g) => new PathGlob(g.replace(/\/\*\*$/, ""), { braces: true, anchored: true }));
  const out: string[] = [];
  await walkTree({
    root,
    signal: options.signal,
    visit(e) {
      if (ignore.some((g) => g.test(e.rel, e.name))) return "skip";
      if (glob.test(e.rel, e.name)) {
        out.push(e.kind === "dir" ? `${e.rel}/` : e.rel);
        if (out.length >= options.limit) return "stop";
      }
    },
  });
  return out;
}

/** fd, when installed. Paths relative to `root`, folders with a trailing "/". */
export function findWithFd(fd: string, pattern: string, root: string, options: FindGlobOptions): Promise<string[]> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new Error("Operation aborted"));
    const args = ["--glob", "--color=never", "--hidden", "--exclude", ".git", "--max-results", String(options.limit)];
    if (helpText(fd).includes("--no-require-git")) args.push("--no-require-git");
    for (const g of options.ignore) args.push("--exclude", g);
    let effective = pattern;
    if (pattern.includes("/")) {
      args.push("--full-path");
      if (!pattern.startsWith("/") && !pattern.startsWith("**/") && pattern !== "**") effective = `**/${pattern}`;
    }
    args.push("--", effective, ".");
    const child = spawn(fd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const rl = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    const lines: string[] = [];
    let stderr = "";
    let settled = false;
    const done = (fn: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener("abort", onAbort);
      rl.close();
      fn();
    };
    const onAbort = () => {
      child.kill();
      done(() => reject(new Error("Operation aborted")));
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stderr!.on("data", (d: Buffer) => {
      if (stderr.length < 16384) stderr += d.toString("utf8");
    });
    rl.on("line", (l) => {
      const line = l.replace(/\r$/, "");
      if (line) lines.push(line.startsWith("./") ? line.slice(2) : line);
    });
    child.on("error", (e) => done(() => reject(new Error(`Failed to run fd (${fd}): ${e.message}`))));
    child.on("close", (code) => {
      if (code !== 0 && lines.length === 0) return done(() => reject(new Error(stderr.trim() || `fd exited with code ${code}`)));
      done(() => resolve(lines.sort()));
    });
  });
}

/** A folder inside a git work tree: it or a parent holds `.git` (a folder, or a file for a worktree). */
export function insideGitRepository(dir: string): boolean {
  for (let d = dir; ; ) {
    if (existsSync(join(d, ".git"))) return true;
    const up = dirname(d);
    if (up === d) return false;
    d = up;
  }
}

/**
 * Whether fd gives the same results as the in-process walker below `root`. fd before 8.7
 * (Debian 12's fd-find 8.6) has no `--no-require-git` and reads .gitignore files only inside a
 * git repository; elsewhere it would list ignored files, so the in-process walker answers.
 */
export function fdHonoursGitignore(fd: string, root: string): boolean {
  return helpText(fd).includes("--no-require-git") || insideGitRepository(root);
}

/**
 * The local find: fd when it is on PATH and honours .gitignore below `root` (see
 * fdHonoursGitignore), else the in-process walker; the results are the same either way.
 * "external" requires fd and says why it cannot be used.
 */
export async function localFind(pattern: string, root: string, options: FindGlobOptions, backend: SearchBackend = "auto"): Promise<string[]> {
  if (backend !== "builtin") {
    const fd = fdPath();
    if (fd && fdHonoursGitignore(fd, root)) return findWithFd(fd, pattern, root, options);
    if (backend === "external") {
      throw new Error(fd ? `${fd} has no --no-require-git (fd older than 8.7), so it would ignore .gitignore outside a git repository` : "fd is not on PATH");
    }
  }
  return findInProcess(pattern, root, options);
}

function toInt(name: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${name} must be a number, got ${JSON.stringify(v)}`);
  return Math.floor(v);
}

export function createFindToolDefinition(cwd: string, options: FindToolOptions = {}): ToolDefinition<FindToolInput, FindToolDetails | undefined> {
  const custom = options.operations;
  const backend = options.backend ?? "auto";
  return {
    name: "find",
    label: "find",
    description:
      `Find files and folders by glob pattern; paths are printed relative to the searched folder, folders with a trailing "/". ` +
      `Honours .gitignore and includes hidden files. At most ${DEFAULT_FIND_LIMIT} results (see limit) and ${DEFAULT_MAX_BYTES / 1024}KB.`,
    promptSnippet: "Find files by glob pattern (honours .gitignore)",
    promptGuidelines: ["Use find to locate files by name instead of listing folders one by one."],
    parameters: findSchema,
    async execute(_id, params, signal) {
      const pattern = params?.pattern;
      if (typeof pattern !== "string" || pattern === "") throw new Error("find needs a pattern (a non-empty glob such as '*.ts')");
      const limit = Math.max(1, toInt("limit", params.limit) ?? DEFAULT_FIND_LIMIT);
      const given = typeof params.path === "string" && params.path !== "" ? params.path : ".";
      const root = resolveToCwd(given, cwd);
      if (signal?.aborted) throw new Error("Operation aborted");

      let results: string[];
      if (custom?.glob) {
        if (!(await custom.exists(root))) throw new Error(`Path not found: ${root}`);
        const found = await custom.glob(pattern, root, { ignore: ["**/node_modules/**", "**/.git/**"], limit, signal });
        results = found.map((p) => toPosix(p.startsWith(root + sep) ? p.slice(root.length + 1) : p.startsWith("/") ? relative(root, p) : p));
      } else {
        let st;
        try {
          st = statSync(root);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException)?.code;
          throw new Error(code === "ENOENT" ? `Path not found: ${root}` : describeFsError(e, root));
        }
        if (!st.isDirectory()) throw new Error(`Not a directory: ${root}`);
        if (custom && !(await custom.exists(root))) throw new Error(`Path not found: ${root}`);
        results = await localFind(pattern, root, { ignore: [], limit, signal }, backend);
      }
      if (signal?.aborted) throw new Error("Operation aborted");
      if (results.length === 0) return { content: [{ type: "text", text: "No files found matching pattern" }], details: undefined };

      const shown = results.slice(0, limit);
      const truncation = truncateHead(shown.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      let text = truncation.content;
      const details: FindToolDetails = {};
      const notices: string[] = [];
      if (results.length >= limit) {
        notices.push(`${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`);
        details.resultLimitReached = limit;
      }
      if (truncation.truncated) {
        notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
        details.truncation = truncation;
      }
      if (notices.length) text += `\n\n[${notices.join(". ")}]`;
      return { content: [{ type: "text", text }], details: Object.keys(details).length ? details : undefined };
    },
  };
}

export function createFindTool(cwd: string, options?: FindToolOptions) {
  return createFindToolDefinition(cwd, options);
}

/** The local implementation as FindOperations (for wrapping in an extension). */
export function createLocalFindOperations(backend: SearchBackend = "auto"): Required<FindOperations> {
  return {
    exists: (p) => existsSync(p),
    glob: (pattern, root, opts) => localFind(pattern, root, opts, backend),
  };
}
