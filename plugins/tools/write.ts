/**
 * write: create or overwrite a file (parent folders are created). Serialised with edits of the
 * same file.
 */
import { mkdirSync } from "node:fs";
import { guardedMkdir, guardedWriteFile, type ToolDefinition } from "../../core/kernel/index.js";
import { dirname } from "node:path";
import { Type, type Static } from "typebox";
import { withFileMutationQueue } from "./file-mutation-queue.js";
import { assertNotSpecialFile, describeFsError, resolveToCwd, writeLocalFile } from "./path-utils.js";

const writeSchema = Type.Object({
  path: Type.String({ description: "File to write, absolute or relative to the working directory" }),
  content: Type.String({ description: "The complete new content of the file" }),
});

export type WriteToolInput = Static<typeof writeSchema>;

/** File access for the write tool; replace it to write elsewhere (ssh, a container). */
export interface WriteOperations {
  writeFile(absolutePath: string, content: string): Promise<void>;
  /** Create a folder and its parents (no error when it exists). */
  mkdir(dir: string): Promise<void>;
}

export interface WriteToolOptions {
  operations?: WriteOperations;
}

export function createLocalWriteOperations(): WriteOperations {
  return {
    // With a file guard active (the OS sandbox), the write is re-checked where it really lands
    // and cannot be redirected by a link (core/kernel/file-guard.ts).
    writeFile: async (p, content) => {
      await assertNotSpecialFile(p);
      if (!guardedWriteFile(p, content)) await writeLocalFile(p, content);
    },
    mkdir: async (dir) => {
      if (!guardedMkdir(dir)) mkdirSync(dir, { recursive: true });
    },
  };
}

export function createWriteToolDefinition(cwd: string, options: WriteToolOptions = {}): ToolDefinition<WriteToolInput, undefined> {
  const ops = options.operations ?? createLocalWriteOperations();
  return {
    name: "write",
    label: "write",
    description: "Write a whole file: creates it (and any missing parent folders) or replaces its content.",
    promptSnippet: "Create files or replace their whole content",
    promptGuidelines: ["Use write for new files or full rewrites; use edit to change part of an existing file."],
    parameters: writeSchema,
    async execute(_id, params, signal) {
      const path = params?.path;
      const content = params?.content;
      if (typeof path !== "string" || path.trim() === "") throw new Error("write needs a path (a non-empty string)");
      if (typeof content !== "string") throw new Error(`write needs content (a string) for ${path}`);
      const abs = resolveToCwd(path, cwd);
      if (signal?.aborted) throw new Error("Operation aborted");
      return withFileMutationQueue(abs, async () => {
        if (signal?.aborted) throw new Error("Operation aborted");
        try {
          await ops.mkdir(dirname(abs));
        } catch (e) {
          throw new Error(`Could not create the folder for ${path}: ${describeFsError(e, dirname(path) || ".")}`);
        }
        try {
          await ops.writeFile(abs, content);
        } catch (e) {
          throw new Error(`Could not write ${path}: ${describeFsError(e, path)}`);
        }
        const bytes = Buffer.byteLength(content, "utf8");
        return { content: [{ type: "text", text: `Wrote ${bytes} bytes to ${path}` }], details: undefined };
      });
    },
  };
}

export function createWriteTool(cwd: string, options?: WriteToolOptions) {
  return createWriteToolDefinition(cwd, options);
}
