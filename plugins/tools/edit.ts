/**
 * edit: replace exact text in one file, one or more disjoint blocks per call.
 *
 * Parameters as pi 0.73: `{ path, edits: [{ oldText, newText }] }`; the older single-edit form
 * `{ path, oldText, newText }` is accepted too (see prepareEditArguments). Edits and writes to
 * one file are serialised.
 */
import { constants } from "node:fs";
import { guardedWriteFile, type ToolDefinition } from "../../core/kernel/index.js";
import { isUtf8 } from "node:buffer";
import { Type, type Static } from "typebox";
import { applyEdits, normalizeToLF, generateDiffString, stripBom, type Edit } from "./edit-diff.js";
import { withFileMutationQueue } from "./file-mutation-queue.js";
import { assertLocalAccess, describeFsError, readLocalFile, resolveToCwd, writeLocalFile } from "./path-utils.js";

const replaceEditSchema = Type.Object(
  {
    oldText: Type.String({
      description: "Text to replace, copied exactly from the file. It must occur once and must not overlap another edit's oldText.",
    }),
    newText: Type.String({ description: "The text to put in its place." }),
  },
  { additionalProperties: false },
);

const editSchema = Type.Object(
  {
    path: Type.String({ description: "File to edit, absolute or relative to the working directory" }),
    edits: Type.Array(replaceEditSchema, {
      description:
        "One or more replacements. Every oldText is looked up in the file as it is now (not after the other edits); regions must not overlap — merge neighbouring changes into one edit.",
    }),
  },
  { additionalProperties: false },
);

export type EditToolInput = Static<typeof editSchema>;

export interface EditToolDetails {
  /** Line-numbered diff of the change. */
  diff: string;
  /** First changed line in the new file. */
  firstChangedLine?: number;
}

/** File access for the edit tool; replace it to edit files elsewhere (ssh, a container). */
export interface EditOperations {
  readFile(absolutePath: string): Promise<Buffer>;
  writeFile(absolutePath: string, content: string): Promise<void>;
  /** Resolves when the file exists and is readable and writable. */
  access(absolutePath: string): Promise<void>;
}

export interface EditToolOptions {
  operations?: EditOperations;
}

export function createLocalEditOperations(): EditOperations {
  return {
    readFile: (p) => readLocalFile(p),
    // Re-checked where it really lands, and not redirected by a link, with a file guard active (core/kernel/file-guard.ts).
    writeFile: async (p, content) => {
      if (!guardedWriteFile(p, content)) await writeLocalFile(p, content);
    },
    access: (p) => assertLocalAccess(p, constants.R_OK | constants.W_OK),
  };
}

/**
 * Normalise raw arguments before validation: `edits` sent as a JSON string is parsed, and the
 * single-edit form `{ oldText, newText }` becomes one entry of `edits`.
 */
export function prepareEditArguments(input: unknown): unknown {
  if (!input || typeof input !== "object") return input;
  const args = { ...(input as Record<string, unknown>) };
  if (typeof args.edits === "string") {
    try {
      const parsed = JSON.parse(args.edits);
      if (Array.isArray(parsed)) args.edits = parsed;
    } catch {
      /* left as is: validation reports it */
    }
  }
  if (typeof args.oldText === "string" && typeof args.newText === "string") {
    const edits = Array.isArray(args.edits) ? [...args.edits] : [];
    edits.push({ oldText: args.oldText, newText: args.newText });
    delete args.oldText;
    delete args.newText;
    args.edits = edits;
  }
  return args;
}

export function createEditToolDefinition(
  cwd: string,
  options: EditToolOptions = {},
): ToolDefinition<EditToolInput, EditToolDetails | undefined> & { prepareArguments: (input: unknown) => unknown } {
  const ops = options.operations ?? createLocalEditOperations();
  return {
    name: "edit",
    label: "edit",
    description:
      "Change a file by replacing exact text. Each edits[].oldText must occur exactly once in the file and the edited regions must not overlap; " +
      "put nearby changes into a single edit, and keep oldText short without losing uniqueness.",
    promptSnippet: "Change files by exact text replacement (several separate blocks per call)",
    promptGuidelines: [
      "Use edit for targeted changes; oldText must be copied exactly from the file.",
      "Change several places of one file in a single edit call, one edits[] entry per place.",
      "Every oldText is matched against the file before this call, so edits must not overlap or depend on each other.",
      "Keep oldText minimal: just enough lines to be unique.",
    ],
    parameters: editSchema,
    prepareArguments: prepareEditArguments,
    async execute(_id, rawParams, signal) {
      const params = prepareEditArguments(rawParams) as Partial<EditToolInput>;
      const path = params?.path;
      if (typeof path !== "string" || path.trim() === "") throw new Error("edit needs a path (a non-empty string)");
      const edits = params.edits as Edit[] | undefined;
      if (!Array.isArray(edits) || edits.length === 0) throw new Error("edit needs edits: a list of at least one { oldText, newText }");
      const abs = resolveToCwd(path, cwd);
      if (signal?.aborted) throw new Error("Operation aborted");

      return withFileMutationQueue(abs, async () => {
        if (signal?.aborted) throw new Error("Operation aborted");
        try {
          await ops.access(abs);
        } catch (e) {
          throw new Error(`Could not edit ${path}: ${describeFsError(e, path)}`);
        }
        let buffer: Buffer;
        try {
          buffer = await ops.readFile(abs);
        } catch (e) {
          throw new Error(`Could not edit ${path}: ${describeFsError(e, path)}`);
        }
        if (buffer.subarray(0, 8192).indexOf(0) >= 0) throw new Error(`Could not edit ${path}: it is a binary file, not text.`);
        if (!isUtf8(buffer)) {
          throw new Error(
            `Could not edit ${path}: it is not valid UTF-8 text, and writing it back would corrupt the bytes that are not. Convert it first (e.g. iconv in bash) or change it with bash.`,
          );
        }
        const { bom, text } = stripBom(buffer.toString("utf8"));
        const { content } = applyEdits(text, edits, path);
        if (signal?.aborted) throw new Error("Operation aborted");
        try {
          await ops.writeFile(abs, bom + content);
        } catch (e) {
          throw new Error(`Could not write ${path}: ${describeFsError(e, path)}`);
        }
        const { diff, firstChangedLine } = generateDiffString(normalizeToLF(text), normalizeToLF(content));
        return {
          content: [{ type: "text", text: `Replaced ${edits.length} block(s) in ${path}.` }],
          details: { diff, firstChangedLine },
        };
      });
    },
  };
}

export function createEditTool(cwd: string, options?: EditToolOptions) {
  return createEditToolDefinition(cwd, options);
}
