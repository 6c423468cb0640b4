/**
 * The package exports for tools (sdk/pi-package/tools.ts), imported from the package entry, in process:
 * - images: resizeImage / formatDimensionNote / convertToPng on PNG, JPEG, GIF and WebP made
 *   here, dimensions read back from the encoded bytes (PNG IHDR, JPEG SOF) by this test;
 * - PowerShell: pwsh is not installable from Debian's archive, so a stand-in `pwsh` (a bash
 *   script that logs its arguments and runs the command) is put on PATH; the operations and the
 *   tool run it, stream its output, report exit codes; injected operations replace it;
 * - the MCP and tool-search extension factories loaded into an SDK session: the fixture MCP
 *   server from loadConfig connects through the MCP plugin, its deferred tools stay undeclared
 *   until the model calls tool_search, then the model calls the loaded tool.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { createRequire } from "node:module";
import {
  convertToPng,
  createLocalPowerShellOperations,
  createMcpExtension,
  createPowerShellTool,
  createPowerShellToolDefinition,
  createToolSearchExtension,
  formatDimensionNote,
  getPowerShellConfig,
  isPowerShellToolResult,
  resizeImage,
  createAgentSession,
  type CreateAgentSessionResult,
} from "../index.js";
import { FauxModel, createFauxPlugin } from "../../plugins/faux/index.js";
import type { PluginManifest } from "../../core/kernel/plugin.js";
import { SessionManager } from "../../core/stores/session/session-manager.js";
import { waitUntil } from "../../tests/helpers/system.js";

const photon = createRequire(import.meta.url)("@silvia-odwyer/photon-node") as typeof import("@silvia-odwyer/photon-node");

const roots: string[] = [];
const live: CreateAgentSessionResult[] = [];
afterEach(async () => {
  while (live.length) await live.pop()!.runtime.dispose();
});
afterAll(() => {
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "pi-tools-img-"));
  roots.push(d);
  return d;
}

// ---- images ----------------------------------------------------------------------------------------

/** An RGBA image with noise (so it does not compress to nothing), encoded by Photon. */
function makeImage(width: number, height: number, encode: "png" | "jpeg" | "webp", noise = false): Uint8Array {
  const px = new Uint8Array(width * height * 4);
  let seed = 7;
  for (let i = 0; i < width * height; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    px[i * 4] = noise ? seed & 255 : (i % width) % 256;
    px[i * 4 + 1] = noise ? (seed >>> 8) & 255 : 80;
    px[i * 4 + 2] = noise ? (seed >>> 16) & 255 : 160;
    px[i * 4 + 3] = 255;
  }
  const img = new photon.PhotonImage(px, width, height);
  try {
    return encode === "png" ? img.get_bytes() : encode === "jpeg" ? img.get_bytes_jpeg(90) : img.get_bytes_webp();
  } finally {
    img.free();
  }
}

/** Width and height from the encoded bytes: PNG's IHDR or JPEG's SOF marker. */
function dimensionsOf(bytes: Buffer): { type: string; width: number; height: number } {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { type: "png", width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    let i = 2;
    while (i < bytes.length) {
      const marker = bytes[i + 1]!;
      const len = bytes.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { type: "jpeg", height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
      }
      i += 2 + len;
    }
  }
  throw new Error("not a PNG or JPEG");
}

describe("resizeImage / formatDimensionNote", () => {
  it("shrinks a PNG over 2000 px wide to fit, keeping the aspect ratio, and the note maps coordinates back", async () => {
    const png = makeImage(3000, 1500, "png");
    const r = await resizeImage(png, "image/png");
    expect(r).not.toBeNull();
    expect(r!).toMatchObject({ originalWidth: 3000, originalHeight: 1500, width: 2000, height: 1000, wasResized: true });
    const back = dimensionsOf(Buffer.from(r!.data, "base64"));
    expect(back).toEqual({ type: r!.mimeType === "image/png" ? "png" : "jpeg", width: 2000, height: 1000 });
    expect(formatDimensionNote(r!)).toBe("[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]");
  });

  it("returns an image within every limit unchanged, with no note", async () => {
    const png = makeImage(40, 30, "png");
    const r = await resizeImage(png, "image/png");
    expect(r).toEqual({ data: Buffer.from(png).toString("base64"), mimeType: "image/png", originalWidth: 40, originalHeight: 30, width: 40, height: 30, wasResized: false });
    expect(formatDimensionNote(r!)).toBeUndefined();
  });

  it("fits a JPEG inside maxWidth × maxHeight", async () => {
    const jpeg = makeImage(640, 480, "jpeg");
    const r = await resizeImage(jpeg, "image/jpeg", { maxWidth: 100, maxHeight: 100 });
    expect(r).toMatchObject({ width: 100, height: 75, originalWidth: 640, originalHeight: 480, wasResized: true });
    expect(dimensionsOf(Buffer.from(r!.data, "base64"))).toMatchObject({ width: 100, height: 75 });
  });

  it("gets under maxBytes of base64 by lowering quality and then size", async () => {
    const noisy = makeImage(600, 600, "png", true);
    expect(Buffer.from(noisy).toString("base64").length).toBeGreaterThan(200_000);
    const r = await resizeImage(noisy, "image/png", { maxBytes: 20_000 });
    expect(r).not.toBeNull();
    expect(r!.data.length).toBeLessThan(20_000);
    expect(r!.wasResized).toBe(true);
    const back = dimensionsOf(Buffer.from(r!.data, "base64"));
    expect([back.width, back.height]).toEqual([r!.width, r!.height]);
    expect(r!.width).toBeLessThanOrEqual(600);
    expect(r!.width).toBe(r!.height);
  });

  it("resolves to null for bytes that are no image, and names a bad option", async () => {
    expect(await resizeImage(new Uint8Array([1, 2, 3, 4, 5, 6]), "image/png")).toBeNull();
    await expect(resizeImage(makeImage(4, 4, "png"), "image/png", { maxWidth: -1 })).rejects.toThrow(/maxWidth must be a positive number/);
  });
});

describe("convertToPng", () => {
  it("converts WebP and GIF to PNG, leaves PNG as is, and gives null for garbage", async () => {
    const webp = Buffer.from(makeImage(30, 20, "webp"));
    expect(webp.subarray(8, 12).toString("latin1")).toBe("WEBP");
    const fromWebp = await convertToPng(webp.toString("base64"), "image/webp");
    expect(fromWebp?.mimeType).toBe("image/png");
    expect(dimensionsOf(Buffer.from(fromWebp!.data, "base64"))).toEqual({ type: "png", width: 30, height: 20 });

    // A 3×2 GIF89a, red and white pixels alternating (2-colour palette, literal LZW codes), byte by byte.
    const gif = Buffer.from("R0lGODlhAwACAIAAAP8AAP///ywAAAAAAwACAAACBEQQEAUAOw==", "base64");
    expect(gif.subarray(0, 6).toString("latin1")).toBe("GIF89a");
    const fromGif = await convertToPng(gif.toString("base64"), "image/gif");
    expect(dimensionsOf(Buffer.from(fromGif!.data, "base64"))).toEqual({ type: "png", width: 3, height: 2 });

    const png = Buffer.from(makeImage(5, 5, "png")).toString("base64");
    expect(await convertToPng(png, "image/png")).toEqual({ data: png, mimeType: "image/png" });
    expect(await convertToPng(Buffer.from("not an image at all").toString("base64"), "image/jpeg")).toBeNull();
  });
});

describe("the read tool fits images (images.autoResize)", () => {
  const withFaux = (faux: FauxModel) => (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p));
  async function readTool(settings: Record<string, unknown>) {
    const root = tempDir();
    const r = await createAgentSession({ cwd: root, agentDir: join(root, "agent"), model: "faux/faux-1", sessionManager: SessionManager.inMemory(root), plugins: withFaux(new FauxModel({ steps: [] })), settings });
    live.push(r);
    return { root, read: r.services.kernel.tools.get("read")! };
  }

  it("shrinks an image over 2000 px with 1.6's dimension note; a small one is sent as it is", async () => {
    const { root, read } = await readTool({});
    writeFileSync(join(root, "wide.png"), makeImage(3000, 1500, "png"));
    const wide = await read.execute("r1", { path: "wide.png" }, undefined, undefined, undefined as never);
    expect(wide.content[0]).toEqual({ type: "text", text: "Read image file [image/png]\n[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]" });
    const sent = wide.content[1] as { type: string; data: string; mimeType: string };
    expect(sent.type).toBe("image");
    expect(dimensionsOf(Buffer.from(sent.data, "base64"))).toMatchObject({ width: 2000, height: 1000 });

    const small = Buffer.from(makeImage(64, 48, "jpeg"));
    writeFileSync(join(root, "small.jpg"), small);
    const r = await read.execute("r2", { path: "small.jpg" }, undefined, undefined, undefined as never);
    expect(r.content).toEqual([
      { type: "text", text: "Read image file [image/jpeg]" },
      { type: "image", data: small.toString("base64"), mimeType: "image/jpeg" },
    ]);
  });

  it("with images.autoResize false the image is sent unchanged", async () => {
    const { root, read } = await readTool({ images: { autoResize: false } });
    const png = Buffer.from(makeImage(2400, 100, "png"));
    writeFileSync(join(root, "wide.png"), png);
    const r = await read.execute("r1", { path: "wide.png" }, undefined, undefined, undefined as never);
    expect(r.content).toEqual([
      { type: "text", text: "Read image file [image/png]" },
      { type: "image", data: png.toString("base64"), mimeType: "image/png" },
    ]);
  });
});

// ---- PowerShell ------------------------------------------------------------------------------------

describe("PowerShell", () => {
  let bin: string;
  let argsLog: string;
  const savedPath = process.env.PATH;
  beforeAll(() => {
    const dir = tempDir();
    bin = join(dir, "bin");
    mkdirSync(bin);
    argsLog = join(dir, "args.log");
    // Stand-in for pwsh: logs the arguments before the script, drops the UTF-8 console line, runs the rest.
    writeFileSync(
      join(bin, "pwsh"),
      [
        "#!/bin/bash",
        'n=$#; printf "%s\\n" "${@:1:$((n-1))}" > "$PWSH_ARGS_LOG"',
        'script="${!n}"',
        'case "$script" in *OutputEncoding*) script="${script#*$\'\\n\'}";; esac',
        'exec /bin/bash -c "$script"',
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "pwsh"), 0o755);
    process.env.PWSH_ARGS_LOG = argsLog;
  });
  afterAll(() => {
    process.env.PATH = savedPath;
    delete process.env.PWSH_ARGS_LOG;
  });
  const withPwsh = () => (process.env.PATH = `${bin}${delimiter}${savedPath}`);
  const withoutPwsh = () => (process.env.PATH = savedPath);

  it("getPowerShellConfig finds pwsh on PATH with 1.6's arguments, and says so when there is none", () => {
    withoutPwsh();
    if (process.platform !== "win32") expect(() => getPowerShellConfig()).toThrow(/No PowerShell found: install PowerShell 7 and put pwsh on PATH/);
    withPwsh();
    expect(getPowerShellConfig()).toEqual({ shell: join(bin, "pwsh"), args: ["-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"] });
  });

  it("createLocalPowerShellOperations runs the command in cwd, streams output, returns the exit code", async () => {
    withPwsh();
    const cwd = tempDir();
    const chunks: string[] = [];
    const ops = createLocalPowerShellOperations();
    const gate = join(cwd, "go");
    const run = ops.exec(`echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; pwd; exit 3`, cwd, { onData: (b) => chunks.push(b.toString()) });
    // "first" arrives while the command is still waiting: output streams.
    await waitUntil(() => chunks.join("").includes("first"), "the first line of output", 60_000);
    expect(chunks.join("")).not.toContain("second");
    writeFileSync(gate, "");
    expect(await run).toEqual({ exitCode: 3, signal: null });
    expect(chunks.join("")).toBe(`first\nsecond\n${cwd}\n`);
    expect(readFileSync(argsLog, "utf8").trim().split("\n")).toEqual(["-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"]);
  });

  it("the powershell tool returns the output, fails on a non-zero exit, and streams updates", async () => {
    withPwsh();
    const cwd = tempDir();
    const tool = createPowerShellToolDefinition(cwd);
    expect(tool.name).toBe("powershell");
    expect(tool.description).toMatch(/PowerShell/);
    const ok = await tool.execute("t1", { command: "echo hello from ps" }, undefined, undefined, undefined as never);
    expect(ok.content).toEqual([{ type: "text", text: "hello from ps\n" }]);
    await expect(tool.execute("t2", { command: "echo oops; exit 4" }, undefined, undefined, undefined as never)).rejects.toThrow(/oops\n\nCommand exited with code 4/);
    await expect(tool.execute("t3", { command: "  " }, undefined, undefined, undefined as never)).rejects.toThrow(/powershell needs a command/);

    const updates: string[] = [];
    const running = tool.execute("t4", { command: "echo partial; while [ ! -e go ]; do sleep 0.05; done; echo done" }, undefined, (u) => updates.push((u.content[0] as { text: string }).text), undefined as never);
    await waitUntil(() => updates.some((u) => u.includes("partial")), "an update with the first line", 60_000);
    writeFileSync(join(cwd, "go"), "");
    expect((await running).content).toEqual([{ type: "text", text: "partial\ndone\n" }]);
    expect(createPowerShellTool(cwd).name).toBe("powershell");
  });

  it("takes injected operations (no PowerShell needed) and a spawn hook", async () => {
    withoutPwsh();
    const seen: Array<{ command: string; cwd: string }> = [];
    const tool = createPowerShellToolDefinition("/project", {
      operations: {
        async exec(command, cwd, { onData }) {
          seen.push({ command, cwd });
          onData(Buffer.from("Get-ChildItem ran\n"));
          return { exitCode: 0 };
        },
      },
      spawnHook: (c) => ({ ...c, command: `Set-Location /x; ${c.command}` }),
    });
    const r = await tool.execute("t", { command: "Get-ChildItem" }, undefined, undefined, undefined as never);
    expect(r.content).toEqual([{ type: "text", text: "Get-ChildItem ran\n" }]);
    expect(seen).toEqual([{ command: "Set-Location /x; Get-ChildItem", cwd: "/project" }]);
    const err = await createLocalPowerShellOperations().exec("x", "/", { onData: () => undefined }).catch((e: Error) => e.message);
    if (process.platform !== "win32") expect(err).toMatch(/No PowerShell found/);
  });

  it("isPowerShellToolResult narrows by tool name", () => {
    expect(isPowerShellToolResult({ type: "tool_result", toolName: "powershell" } as never)).toBe(true);
    expect(isPowerShellToolResult({ type: "tool_result", toolName: "bash" } as never)).toBe(false);
  });
});

// ---- MCP and tool search extension factories ------------------------------------------------------

describe("createMcpExtension / createToolSearchExtension", () => {
  const STDIO = resolve("tests/fixtures/mcp/stdio-server.mjs");
  const withFaux = (faux: FauxModel) => (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p));

  it("refuses options that would replace the MCP plugin's parts, naming them", () => {
    expect(() => createMcpExtension({ createTransport: () => undefined, logPath: "/x" })).toThrow(/createTransport, logPath are not supported/);
    expect(() => createMcpExtension({ startupWaitMs: -5 })).toThrow(/startupWaitMs must be a number/);
  });

  it("servers from loadConfig connect through the MCP plugin; tool_search loads their deferred tools; the model calls one", async () => {
    const root = tempDir();
    const agentDir = join(root, "agent");
    const cwd = join(root, "project");
    mkdirSync(agentDir);
    mkdirSync(cwd);
    const callLog = join(root, "calls.log");
    const faux = new FauxModel({
      steps: [
        { toolCalls: [{ id: "s1", name: "tool_search", arguments: { query: "echo text back", limit: 1 } }] },
        { toolCalls: [{ id: "c1", name: "mcp__demo__echo", arguments: { text: "hi" } }] },
        "All done.",
      ],
    });
    const seenCtx: unknown[] = [];
    const r = await createAgentSession({
      cwd,
      agentDir,
      model: "faux/faux-1",
      sessionManager: SessionManager.inMemory(cwd),
      plugins: withFaux(faux),
      settings: { mcp: { connectTimeoutMs: 120_000 } },
      extensionFactories: [
        createMcpExtension({
          loadConfig: (ctx) => {
            seenCtx.push(ctx.cwd);
            return {
              servers: [{ name: "demo", config: { command: process.execPath, args: [STDIO, "--call-log", callLog], exposure: "deferred" } }],
              errors: [],
            };
          },
        }),
        createToolSearchExtension(),
      ],
    });
    live.push(r);
    const mcp = r.services.kernel.service("mcp")!;
    await r.runtime.bindExtensions();
    expect(seenCtx).toEqual([cwd]);
    await waitUntil(() => mcp.list().some((s) => s.name === "demo" && s.status === "connected"), "the demo server connected", 120_000);
    await mcp.whenSettled();
    const active = () => r.runtime.session.getActiveToolNames();
    // Deferred: registered, not declared to the model; tool_search is.
    expect(r.services.kernel.tools.describe().map((t) => t.name)).toContain("mcp__demo__echo");
    expect(active()).not.toContain("mcp__demo__echo");
    expect(active()).toContain("tool_search");

    await r.runtime.session.prompt("echo hi through MCP");
    expect(active()).toContain("mcp__demo__echo");
    expect(active().filter((n) => n.startsWith("mcp__demo__"))).toEqual(["mcp__demo__echo"]);
    const results = r.runtime.session.messages.filter((m: any) => m.role === "toolResult") as any[];
    expect(results.map((m) => [m.toolName, m.isError ? m.content[0].text : "ok"])).toEqual([
      ["tool_search", "ok"],
      ["mcp__demo__echo", "ok"],
    ]);
    expect(results[0].content[0].text).toMatch(/^Loaded 1 tool; it is callable from your next call:\n- mcp__demo__echo: Echo the given text back/);
    expect(results[1].content[0].text).toBe("echo:hi");
    expect(existsSync(callLog) && readFileSync(callLog, "utf8")).toContain('echo {"text":"hi"}');
  }, 180_000);

  it("tool_search says when nothing matches and rejects an empty query", async () => {
    const root = tempDir();
    const faux = new FauxModel({ steps: [] });
    const r = await createAgentSession({
      cwd: root,
      agentDir: join(root, "agent"),
      model: "faux/faux-1",
      sessionManager: SessionManager.inMemory(root),
      plugins: withFaux(faux),
      extensionFactories: [createToolSearchExtension()],
    });
    live.push(r);
    await r.runtime.bindExtensions();
    const tool = r.services.kernel.tools.get("tool_search")!;
    const none = await tool.execute("x", { query: "make coffee" }, undefined, undefined, undefined as never);
    expect((none.content[0] as { text: string }).text).toMatch(/No tools are waiting to be loaded/);
    await expect(tool.execute("y", { query: " " }, undefined, undefined, undefined as never)).rejects.toThrow(/tool_search needs a query/);
  });
});
