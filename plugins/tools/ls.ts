/**
 * ls: the entries of one folder, sorted case-insensitively, folders marked with "/", dotfiles
 * included (like `ls -A`; a listing shows what is there, ignored or not).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Type, type Static } from "typebox";
import type { ToolDefinition } from "../../core/kernel/index.js";
import { describeFsError, resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, formatSize, truncateHead, type TruncationResult } from "./truncate.js";

const lsSchema = Type.Object({
  path: Type.Optional(Type.String({ description: "Folder to list (default: the working directory)" })),
  limit: Type.Optional(Type.Number({ description: "Most entries to return (default 500)" })),
});

export type LsToolInput = Static<typeof lsSchema>;

export interface LsToolDetails {
  truncation?: TruncationResult;
  entryLimitReached?: number;
}

/** File access for ls; replace it to list folders elsewhere (ssh, a container). */
export interface LsOperations {
  exists(absolutePath: string): Promise<boolean> | boolean;
  /** Throws when the path does not exist. */
  stat(absolutePath: string): Promise<{ isDirectory(): boolean }> | { isDirectory(): boolean };
  readdir(absolutePath: string): Promise<string[]> | string[];
}

export interface LsToolOptions {
  operations?: LsOperations;
}

export const DEFAULT_LS_LIMIT = 500;

export function createLocalLsOperations(): LsOperations {
  return { exists: (p) => existsSync(p), stat: (p) => statSync(p), readdir: (p) => readdirSync(p) };
}

export function createLsToolDefinition(cwd: string, options: LsToolOptions = {}): ToolDefinition<LsToolInput, LsToolDetails | undefined> {
  const ops = options.operations ?? createLocalLsOperations();
  return {
    name: "ls",
    label: "ls",
    description:
      `List a folder: entries sorted alphabetically, folders with a trailing "/", dotfiles included. ` +
      `At most ${DEFAULT_LS_LIMIT} entries (see limit) and ${DEFAULT_MAX_BYTES / 1024}KB.`,
    promptSnippet: "List a folder's entries",
    promptGuidelines: ["Use ls to see what a folder holds; use find to search a whole tree."],
    parameters: lsSchema,
    async execute(_id, params, signal) {
      const given = typeof params?.path === "string" && params.path !== "" ? params.path : ".";
      let limit = DEFAULT_LS_LIMIT;
      if (params?.limit !== undefined && params.limit !== null) {
        if (typeof params.limit !== "number" || !Number.isFinite(params.limit)) throw new Error(`limit must be a number, got ${JSON.stringify(params.limit)}`);
        limit = Math.max(1, Math.floor(params.limit));
      }
      const dir = resolveToCwd(given, cwd);
      if (signal?.aborted) throw new Error("Operation aborted");

      let st: { isDirectory(): boolean };
      try {
        if (!(await ops.exists(dir))) {
          // exists() is false for a symlink loop or a dangling link too: let stat say why.
          await ops.stat(dir);
          throw Object.assign(new Error("not found"), { code: "ENOENT" });
        }
        st = await ops.stat(dir);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException)?.code;
        throw new Error(code === "ENOENT" ? `Path not found: ${dir}` : describeFsError(e, dir));
      }
      if (!st.isDirectory()) throw new Error(`Not a directory: ${dir}`);

      let entries: string[];
      try {
        entries = [...(await ops.readdir(dir))];
      } catch (e) {
        throw new Error(`Cannot read directory ${dir}: ${describeFsError(e, dir)}`);
      }
      entries.sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()) || (a < b ? -1 : a > b ? 1 : 0));

      const out: string[] = [];
      let limitReached = false;
      for (const name of entries) {
        if (out.length >= limit) {
          limitReached = true;
          break;
        }
        if (signal?.aborted) throw new Error("Operation aborted");
        let suffix = "";
        try {
          if ((await ops.stat(join(dir, name))).isDirectory()) suffix = "/";
        } catch {
          // a dangling symlink or a loop: listed as it is, without "/"
        }
        out.push(name + suffix);
      }
      if (out.length === 0) return { content: [{ type: "text", text: "(empty directory)" }], details: undefined };

      const truncation = truncateHead(out.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      let text = truncation.content;
      const details: LsToolDetails = {};
      const notices: string[] = [];
      if (limitReached) {
        notices.push(`${limit} entries limit reached. Use limit=${limit * 2} for more`);
        details.entryLimitReached = limit;
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

export function createLsTool(cwd: string, options?: LsToolOptions) {
  return createLsToolDefinition(cwd, options);
}
