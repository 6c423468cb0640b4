/**
 * The client's own file system and terminals, used when the client advertises them in
 * `initialize` (clientCapabilities.fs.readTextFile / writeTextFile / terminal):
 * - read: text files come from fs/read_text_file, so the model sees the editor's buffer with
 *   its unsaved edits (images and failures of the client fall back to our read tool);
 * - write: fs/write_text_file, so the edit goes through the editor (its buffers, undo, saving);
 * - bash: terminal/create + terminal/wait_for_exit, the terminal embedded in the tool call so the
 *   editor shows the live output; the timeout and session/cancel kill it.
 * These are wrappers on the registered tools (kernel.tools.wrap), so the permission gate and every
 * tool_call/tool_result hook still apply to them; edit, grep, find and ls stay local.
 *
 * With the OS sandbox on, bash and write stay local whatever the client offers: a client's
 * terminal runs the command outside the sandbox, and an editor's write follows links the sandbox
 * cannot check at the moment it writes.
 */
import { isAbsolute, resolve } from "node:path";
import type { Kernel, AgentToolResult, ToolDefinition } from "../../core/kernel/index.js";

const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;
const TERMINAL_OUTPUT_LIMIT = 50 * 1024;
const IMAGE_EXT = /\.(png|jpe?g|gif|webp|bmp|ico|tiff?)$/i;

export interface ClientSide {
  caps: { fs?: { readTextFile?: boolean; writeTextFile?: boolean } | null; terminal?: boolean | null };
  sessionId(): string;
  cwd(): string;
  readTextFile(p: { sessionId: string; path: string; line?: number; limit?: number }): Promise<{ content: string }>;
  writeTextFile(p: { sessionId: string; path: string; content: string }): Promise<unknown>;
  createTerminal(p: { sessionId: string; command: string; args: string[]; cwd: string; outputByteLimit: number }): Promise<{
    id: string;
    waitForExit(): Promise<{ exitCode?: number | null; signal?: string | null }>;
    currentOutput(): Promise<{ output: string; truncated: boolean }>;
    kill(): Promise<unknown>;
    release(): Promise<unknown>;
  }>;
  /** Shows the terminal in the tool call (tool_call_update content {type:"terminal"}). */
  embedTerminal(toolCallId: string, terminalId: string): Promise<void>;
}

const text = (t: string): AgentToolResult => ({ content: [{ type: "text", text: t }] });
const absOf = (p: string, cwd: string) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p));

function cap(content: string, offset: number | undefined): string {
  const lines = content.split("\n");
  let out: string[] = [];
  let bytes = 0;
  for (const l of lines) {
    const b = Buffer.byteLength(l, "utf8") + 1;
    if (out.length >= MAX_LINES || bytes + b > MAX_BYTES) break;
    out.push(l);
    bytes += b;
  }
  if (out.length === lines.length) return content;
  const start = (offset ?? 1) + out.length;
  out = [...out, "", `[Showing ${out.length} of ${lines.length} lines. Use offset=${start} to continue.]`];
  return out.join("\n");
}

/** Installs the wrappers the client's capabilities allow; returns a remover. */
export function useClientTools(kernel: Kernel, client: ClientSide): () => void {
  const removers: Array<() => void> = [];
  const sandboxed = (): boolean => {
    try {
      return (kernel.service("sandbox")?.policy().level ?? "off") !== "off";
    } catch {
      // A sandbox setting that does not resolve: stay local (the wrapper refuses what it must).
      return true;
    }
  };
  const wrap = (name: string, fn: (inner: ToolDefinition) => ToolDefinition["execute"]) =>
    removers.push(kernel.tools.wrap(name, (inner) => ({ ...inner, execute: fn(inner) }), "mode-acp"));

  if (client.caps.fs?.readTextFile) {
    wrap("read", (inner) => async (id, params, signal, onUpdate, ctx) => {
      const p = params as { path?: unknown; offset?: unknown; limit?: unknown };
      if (typeof p?.path !== "string" || !p.path || IMAGE_EXT.test(p.path)) return inner.execute(id, params, signal, onUpdate, ctx);
      const line = typeof p.offset === "number" && p.offset > 0 ? Math.floor(p.offset) : undefined;
      const limit = typeof p.limit === "number" && p.limit > 0 ? Math.floor(p.limit) : undefined;
      let content: string;
      try {
        ({ content } = await client.readTextFile({ sessionId: client.sessionId(), path: absOf(p.path, client.cwd()), ...(line ? { line } : {}), ...(limit ? { limit } : {}) }));
      } catch {
        return inner.execute(id, params, signal, onUpdate, ctx);
      }
      return text(cap(content, line));
    });
  }

  if (client.caps.fs?.writeTextFile) {
    wrap("write", (inner) => async (id, params, signal, onUpdate, ctx) => {
      if (sandboxed()) return inner.execute(id, params, signal, onUpdate, ctx);
      const p = params as { path?: unknown; content?: unknown };
      if (typeof p?.path !== "string" || !p.path.trim()) throw new Error("write needs a path (a non-empty string)");
      if (typeof p.content !== "string") throw new Error(`write needs content (a string) for ${p.path}`);
      if (signal?.aborted) throw new Error("Operation aborted");
      try {
        await client.writeTextFile({ sessionId: client.sessionId(), path: absOf(p.path, client.cwd()), content: p.content });
      } catch (e) {
        throw new Error(`Could not write ${p.path} through the editor: ${(e as Error).message}`);
      }
      return text(`Wrote ${Buffer.byteLength(p.content, "utf8")} bytes to ${p.path}`);
    });
  }

  if (client.caps.terminal) {
    wrap("bash", (inner) => async (toolCallId, params, signal, onUpdate, ctx) => {
      if (sandboxed()) return inner.execute(toolCallId, params, signal, onUpdate, ctx);
      const p = params as { command?: unknown; timeout?: unknown };
      if (typeof p?.command !== "string" || !p.command.trim()) throw new Error("bash needs a command (a non-empty string)");
      if (signal?.aborted) throw new Error("Command aborted");
      const term = await client.createTerminal({ sessionId: client.sessionId(), command: "bash", args: ["-c", p.command], cwd: client.cwd(), outputByteLimit: TERMINAL_OUTPUT_LIMIT });
      let why: string | undefined;
      const kill = (reason: string) => {
        why ??= reason;
        void term.kill().catch(() => {});
      };
      const onAbort = () => kill("Command aborted");
      signal?.addEventListener("abort", onAbort, { once: true });
      const timeout = typeof p.timeout === "number" && p.timeout > 0 ? setTimeout(() => kill(`Command timed out after ${p.timeout} seconds`), p.timeout * 1000) : undefined;
      try {
        await client.embedTerminal(toolCallId, term.id);
        const exit = await term.waitForExit();
        const { output, truncated } = await term.currentOutput();
        const body = (truncated ? "[output truncated to its last part]\n" : "") + (output || "(no output)");
        if (why) throw new Error(`${body}\n\n${why}`);
        if (exit.exitCode !== undefined && exit.exitCode !== null && exit.exitCode !== 0) throw new Error(`${body}\n\nCommand exited with code ${exit.exitCode}`);
        if (exit.signal) throw new Error(`${body}\n\nCommand was killed by signal ${exit.signal}`);
        return text(body);
      } finally {
        if (timeout) clearTimeout(timeout);
        signal?.removeEventListener("abort", onAbort);
        void term.release().catch(() => {});
      }
    });
  }
  return () => {
    for (const r of removers.splice(0)) r();
  };
}
