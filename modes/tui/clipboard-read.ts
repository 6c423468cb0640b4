/**
 * Pasting from the system clipboard (Ctrl+V, `app.clipboard.pasteImage`), as pi 1.6 does: an
 * image is written to a file in the temp folder and its path goes into the editor (the model
 * reads it with the read tool); otherwise the clipboard's text is inserted. Under Linux the
 * image comes from wl-paste (Wayland) or xclip (X11), the text from wl-paste, xclip or xsel;
 * macOS reads text with pbpaste, Windows with PowerShell, Termux with termux-clipboard-get.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const IMAGE_TYPES: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

/** Run `command args`; its stdout when it exits 0 within the time limit, else undefined. */
function readFrom(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 3000): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { env, stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      child.kill();
      resolve(undefined);
    }, timeoutMs);
    child.stdout?.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", () => (clearTimeout(timer), resolve(undefined)));
    child.on("close", (code) => (clearTimeout(timer), resolve(code === 0 ? Buffer.concat(chunks) : undefined)));
  });
}

const pickImageType = (types: string[]) => Object.keys(IMAGE_TYPES).find((t) => types.includes(t));
const listTypes = (b: Buffer | undefined) => (b ? b.toString("utf8").split(/\r?\n/).map((t) => t.trim().split(";")[0]!) : []);

async function readImage(env: NodeJS.ProcessEnv): Promise<{ bytes: Buffer; ext: string } | undefined> {
  if (env.WAYLAND_DISPLAY) {
    const type = pickImageType(listTypes(await readFrom("wl-paste", ["--list-types"], env)));
    const bytes = type ? await readFrom("wl-paste", ["--type", type, "--no-newline"], env) : undefined;
    if (type && bytes?.length) return { bytes, ext: IMAGE_TYPES[type]! };
  }
  if (env.DISPLAY) {
    const type = pickImageType(listTypes(await readFrom("xclip", ["-selection", "clipboard", "-t", "TARGETS", "-o"], env)));
    const bytes = type ? await readFrom("xclip", ["-selection", "clipboard", "-t", type, "-o"], env) : undefined;
    if (type && bytes?.length) return { bytes, ext: IMAGE_TYPES[type]! };
  }
  return undefined;
}

function textCommands(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): Array<[string, string[]]> {
  if (platform === "darwin") return [["pbpaste", []]];
  if (platform === "win32") return [["powershell.exe", ["-NoProfile", "-Command", "Get-Clipboard -Raw"]]];
  const out: Array<[string, string[]]> = [];
  if (env.TERMUX_VERSION) out.push(["termux-clipboard-get", []]);
  if (env.WAYLAND_DISPLAY) out.push(["wl-paste", ["--no-newline", "--type", "text"]]);
  if (env.DISPLAY) out.push(["xclip", ["-selection", "clipboard", "-o"]], ["xsel", ["--clipboard", "--output"]]);
  return out;
}

/** What Ctrl+V puts into the editor: an image's saved path, or the clipboard's text; undefined when the clipboard has neither. */
export async function readClipboardForPaste(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): Promise<{ kind: "image" | "text"; text: string } | undefined> {
  if (platform === "linux" && !env.TERMUX_VERSION) {
    const image = await readImage(env);
    if (image) {
      const file = join(tmpdir(), `pi-clipboard-${randomUUID()}.${image.ext}`);
      writeFileSync(file, image.bytes);
      return { kind: "image", text: file };
    }
  }
  for (const [cmd, args] of textCommands(platform, env)) {
    const out = await readFrom(cmd, args, env);
    if (out !== undefined) return out.length ? { kind: "text", text: out.toString("utf8") } : undefined;
  }
  return undefined;
}
