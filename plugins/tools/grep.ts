/**
 * grep: search file contents. ripgrep when it is on PATH, otherwise the in-process searcher
 * (grep-search.ts); both include hidden files, skip .git, honour .gitignore and skip binary files.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, relative, sep } from "node:path";
import { Type, type Static } from "typebox";
import type { ToolDefinition } from "../../core/kernel/index.js";
import { ripgrepPath } from "./external-tools.js";
import {
  RipgrepPatternError,
  searchInProcess,
  searchWithRipgrep,
  type GrepMatch,
  type GrepSearchRequest,
  type GrepSearchResult,
} from "./grep-search.js";
import { describeFsError, resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, formatSize, sanitizeOutput, truncateHead, truncateLine, type TruncationResult } from "./truncate.js";

const grepSchema = Type.Object({
  pattern: Type.String({ description: "Regular expression to look for (or plain text with literal=true)" }),
  path: Type.Optional(Type.String({ description: "Folder or file to search (default: the working directory)" })),
  glob: Type.Optional(Type.String({ description: "Only search files matching this glob, e.g. '*.ts' or 'src/**/*.test.ts'" })),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Match regardless of case (default false)" })),
  literal: Type.Optional(Type.Boolean({ description: "Take the pattern as plain text, not a regular expression (default false)" })),
  context: Type.Optional(Type.Number({ description: "Lines to show before and after each match (default 0)" })),
  limit: Type.Optional(Type.Number({ description: "Most matches to return (default 100)" })),
});

export type GrepToolInput = Static<typeof grepSchema>;

export interface GrepToolDetails {
  truncation?: TruncationResult;
  matchLimitReached?: number;
  linesTruncated?: boolean;
}

/** "auto": ripgrep / fd when on PATH, else in-process; "external": require them; "builtin": never use them. */
export type SearchBackend = "auto" | "external" | "builtin";

/** File access for grep; replace it to search elsewhere (ssh, a container). */
export interface GrepOperations {
  /** Whether the path is a folder; throws when it does not exist. */
  isDirectory(absolutePath: string): Promise<boolean> | boolean;
  /** A file's text, for context lines. */
  readFile(absolutePath: string): Promise<string> | string;
  /** Runs the search. Default: ripgrep when on PATH, else the in-process searcher. */
  search?(request: GrepSearchRequest): Promise<GrepSearchResult>;
}

export interface GrepToolOptions {
  operations?: GrepOperations;
  /** Which local engine to use: "auto" (default: ripgrep when on PATH), "external" (ripgrep, required) or "builtin". */
  backend?: SearchBackend;
}

export const DEFAULT_GREP_LIMIT = 100;

/** The local search: ripgrep or the in-process searcher, per `backend`. */
export async function localGrepSearch(request: GrepSearchRequest, backend: SearchBackend = "auto"): Promise<GrepSearchResult> {
  if (backend !== "builtin") {
    const rg = ripgrepPath();
    if (rg) {
      try {
        return await searchWithRipgrep(rg, request);
      } catch (e) {
        // ripgrep's regex dialect lacks look-around and back-references; JavaScript has them.
        if (!(e instanceof RipgrepPatternError) || backend === "external") throw e;
      }
    } else if (backend === "external") {
      throw new Error("ripgrep (rg) is not on PATH");
    }
  }
  return searchInProcess(request);
}

export function createLocalGrepOperations(backend: SearchBackend = "auto"): Required<GrepOperations> {
  return {
    isDirectory: (p) => {
      const st = statSync(p);
      if (!st.isDirectory() && !st.isFile()) throw Object.assign(new Error(`${p} is not a regular file`), { code: "ENOTREGULAR" });
      return st.isDirectory();
    },
    readFile: (p) => readFileSync(p, "utf8"),
    search: (req) => localGrepSearch(req, backend),
  };
}

function toInt(name: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${name} must be a number, got ${JSON.stringify(v)}`);
  return Math.floor(v);
}

export function createGrepToolDefinition(cwd: string, options: GrepToolOptions = {}): ToolDefinition<GrepToolInput, GrepToolDetails | undefined> {
  const local = createLocalGrepOperations(options.backend);
  const ops: GrepOperations = options.operations ?? local;
  const search = ops.search ?? local.search;
  return {
    name: "grep",
    label: "grep",
    description:
      `Search file contents with a regular expression (or plain text); prints path:line: text for each matching line. ` +
      `Honours .gitignore and includes hidden files. Returns at most ${DEFAULT_GREP_LIMIT} matches (see limit) and ${DEFAULT_MAX_BYTES / 1024}KB; ` +
      `lines longer than ${GREP_MAX_LINE_LENGTH} characters are cut.`,
    promptSnippet: "Search file contents by regular expression (honours .gitignore)",
    promptGuidelines: ["Use grep to find where something is defined or used before reading whole files."],
    parameters: grepSchema,
    async execute(_id, params, signal) {
      const pattern = params?.pattern;
      if (typeof pattern !== "string") throw new Error("grep needs a pattern (a string)");
      const context = Math.max(0, toInt("context", params.context) ?? 0);
      const limit = Math.max(1, toInt("limit", params.limit) ?? DEFAULT_GREP_LIMIT);
      if (params.glob !== undefined && typeof params.glob !== "string") throw new Error("glob must be a string");
      const given = typeof params.path === "string" && params.path !== "" ? params.path : ".";
      const searchPath = resolveToCwd(given, cwd);
      if (signal?.aborted) throw new Error("Operation aborted");

      let isDirectory: boolean;
      try {
        isDirectory = await ops.isDirectory(searchPath);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException)?.code;
        throw new Error(code === "ENOENT" || code === undefined ? `Path not found: ${searchPath}` : describeFsError(e, searchPath));
      }

      const result = await search({
        pattern,
        searchPath,
        isDirectory,
        glob: params.glob || undefined,
        ignoreCase: !!params.ignoreCase,
        literal: !!params.literal,
        limit,
        signal,
      });
      if (signal?.aborted) throw new Error("Operation aborted");
      const matches = result.matches.slice(0, limit);
      if (matches.length === 0) {
        const note = result.notes.length ? `\n\n[${result.notes.join(". ")}]` : "";
        return { content: [{ type: "text", text: `No matches found${note}` }], details: undefined };
      }

      const show = (file: string) => {
        if (isDirectory) {
          const rel = relative(searchPath, file);
          if (rel && !rel.startsWith("..")) return sep === "/" ? rel : rel.split(sep).join("/");
        }
        return basename(file);
      };
      let linesTruncated = false;
      const cut = (text: string) => {
        const t = truncateLine(sanitizeOutput(text));
        if (t.wasTruncated) linesTruncated = true;
        return t.text;
      };

      const out: string[] = [];
      // Enough to fill the byte limit; building more would only be thrown away.
      const budget = DEFAULT_MAX_BYTES * 4;
      let built = 0;
      const add = (line: string) => {
        out.push(line);
        built += line.length + 1;
        return built < budget;
      };
      if (context === 0) {
        for (const m of matches) if (!add(`${show(m.filePath)}:${m.lineNumber}: ${cut(m.lineText)}`)) break;
      } else {
        // Group by file (in order of first appearance) and print merged windows around matches.
        const byFile = new Map<string, GrepMatch[]>();
        for (const m of matches) {
          const list = byFile.get(m.filePath);
          if (list) list.push(m);
          else byFile.set(m.filePath, [m]);
        }
        files: for (const [file, list] of byFile) {
          if (built >= budget) break;
          const name = show(file);
          let lines: string[] | undefined;
          try {
            lines = (await ops.readFile(file)).split("\n");
          } catch {
            lines = undefined;
          }
          if (!lines) {
            for (const m of list) if (!add(`${name}:${m.lineNumber}: ${cut(m.lineText)}`)) break files;
            continue;
          }
          const matchLines = new Set(list.map((m) => m.lineNumber));
          let printedTo = 0;
          for (const m of list.sort((a, b) => a.lineNumber - b.lineNumber)) {
            const from = Math.max(1, m.lineNumber - context, printedTo + 1);
            const to = Math.min(lines.length, m.lineNumber + context);
            for (let n = from; n <= to; n++) {
              let text = lines[n - 1] ?? "";
              if (text.endsWith("\r")) text = text.slice(0, -1);
              if (!add(matchLines.has(n) ? `${name}:${n}: ${cut(text)}` : `${name}-${n}- ${cut(text)}`)) break files;
            }
            printedTo = Math.max(printedTo, to);
          }
        }
      }

      const truncation = truncateHead(out.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      let text = truncation.content;
      const details: GrepToolDetails = {};
      const notices: string[] = [];
      if (result.limitReached || result.matches.length > limit) {
        notices.push(`${limit} matches limit reached. Use limit=${limit * 2} for more, or refine pattern`);
        details.matchLimitReached = limit;
      }
      if (truncation.truncated) {
        notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
        details.truncation = truncation;
      }
      if (linesTruncated) {
        notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use read to see full lines`);
        details.linesTruncated = true;
      }
      notices.push(...result.notes);
      if (notices.length) text += `\n\n[${notices.join(". ")}]`;
      return { content: [{ type: "text", text }], details: Object.keys(details).length ? details : undefined };
    },
  };
}

export function createGrepTool(cwd: string, options?: GrepToolOptions) {
  return createGrepToolDefinition(cwd, options);
}
