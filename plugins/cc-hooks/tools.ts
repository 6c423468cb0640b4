/**
 * Tool names and tool inputs, translated between Claude Code's shapes (what hook scripts
 * expect) and ours (what our tools take).
 *
 *   Claude Code                                   ours
 *   Bash  {command, timeout (ms), description}    bash  {command, timeout (s)}
 *   Read  {file_path, offset, limit}              read  {path, offset, limit}
 *   Write {file_path, content}                    write {path, content}
 *   Edit  {file_path, old_string, new_string}     edit  {path, edits: [{oldText, newText}]}   (one edit)
 *   MultiEdit {file_path, edits: [{old_string, new_string}]}  edit (several edits)
 *   Grep  {pattern, path, glob, -i, -C, head_limit}  grep {pattern, path, glob, ignoreCase, context, limit}
 *   Glob  {pattern, path}                         find  {pattern, path}
 *   LS    {path}                                  ls    {path}
 *   WebFetch {url, prompt}                        webfetch / web_fetch (an extension's tool), raw input
 *   mcp__server__tool                             the same name (our MCP tools are named that way), raw input
 * Paths sent to hooks are absolute.
 */
import { isAbsolute, resolve } from "node:path";

type Obj = Record<string, unknown>;

const CC_TO_OURS: Record<string, string[]> = {
  Bash: ["bash"],
  Read: ["read"],
  Write: ["write"],
  Edit: ["edit"],
  MultiEdit: ["edit"],
  Grep: ["grep"],
  Glob: ["find"],
  LS: ["ls"],
  WebFetch: ["webfetch", "web_fetch"],
};

/** The names a matcher is compared with for our tool `name` with `input`: Claude Code's name first, then ours. */
export function matchNames(name: string, input: Obj): string[] {
  const cc = ccToolName(name, input);
  return cc === name ? [name] : [cc, name];
}

/** Claude Code's name for our tool call. */
export function ccToolName(name: string, input: Obj): string {
  if (name === "edit") return Array.isArray(input.edits) && input.edits.length > 1 ? "MultiEdit" : "Edit";
  for (const [cc, ours] of Object.entries(CC_TO_OURS)) if (cc !== "MultiEdit" && cc !== "Edit" && ours.includes(name)) return cc;
  return name;
}

const abs = (cwd: string, p: unknown) => (typeof p === "string" ? (isAbsolute(p) ? p : resolve(cwd, p)) : p);
const defined = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Our input → Claude Code's tool_input. */
export function toCcInput(name: string, input: Obj, cwd: string): Obj {
  switch (name) {
    case "bash":
      return defined({ command: input.command, timeout: typeof input.timeout === "number" ? input.timeout * 1000 : undefined });
    case "read":
      return defined({ file_path: abs(cwd, input.path), offset: input.offset, limit: input.limit });
    case "write":
      return defined({ file_path: abs(cwd, input.path), content: input.content });
    case "edit": {
      const edits = (Array.isArray(input.edits) ? input.edits : []) as Obj[];
      if (edits.length === 1) return { file_path: abs(cwd, input.path), old_string: edits[0]!.oldText, new_string: edits[0]!.newText };
      return { file_path: abs(cwd, input.path), edits: edits.map((e) => ({ old_string: e.oldText, new_string: e.newText })) };
    }
    case "grep":
      return defined({
        pattern: input.pattern,
        path: input.path === undefined ? undefined : abs(cwd, input.path),
        glob: input.glob,
        "-i": input.ignoreCase,
        "-C": input.context,
        head_limit: input.limit,
        literal: input.literal,
      });
    case "find":
      return defined({ pattern: input.pattern, path: input.path === undefined ? undefined : abs(cwd, input.path) });
    case "ls":
      return defined({ path: abs(cwd, input.path ?? ".") });
    default:
      return input;
  }
}

/**
 * A hook's `updatedInput` (Claude Code's shape; our own keys are accepted too) → our input.
 * Throws with a reason the model can read when it cannot be expressed.
 */
export function fromCcInput(name: string, cc: Obj): Obj {
  const pick = (ccKey: string, ours: string) => (cc[ccKey] !== undefined ? cc[ccKey] : cc[ours]);
  switch (name) {
    case "bash":
      return defined({ command: cc.command, timeout: typeof cc.timeout === "number" ? cc.timeout / 1000 : undefined });
    case "read":
      return defined({ path: pick("file_path", "path"), offset: cc.offset, limit: cc.limit });
    case "write":
      return defined({ path: pick("file_path", "path"), content: cc.content });
    case "edit": {
      const path = pick("file_path", "path");
      const one = (e: Obj, where: string) => {
        if (e.replace_all === true) throw new Error(`${where}replace_all is not supported by our edit tool`);
        return { oldText: e.old_string ?? e.oldText, newText: e.new_string ?? e.newText };
      };
      if (Array.isArray(cc.edits)) return { path, edits: (cc.edits as Obj[]).map((e, i) => one(e ?? {}, `edits[${i}].`)) };
      return { path, edits: [one(cc, "")] };
    }
    case "grep":
      return defined({
        pattern: cc.pattern,
        path: cc.path,
        glob: cc.glob,
        ignoreCase: pick("-i", "ignoreCase"),
        context: pick("-C", "context"),
        limit: pick("head_limit", "limit"),
        literal: cc.literal,
      });
    case "find":
      return defined({ pattern: cc.pattern, path: cc.path, limit: cc.limit });
    case "ls":
      return defined({ path: cc.path, limit: cc.limit });
    default:
      return cc;
  }
}
