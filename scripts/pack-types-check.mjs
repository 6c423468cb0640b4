#!/usr/bin/env node
/**
 * The published type declarations as a TypeScript user gets them: the packed package installed
 * into a throwaway project with `npm install --omit=dev <tarball>` (none of our devDependencies:
 * pi's libraries and tapable are bundled, not installed), and a consumer importing "pi-kernel",
 * "pi-kernel/sdk", "pi-kernel/plugin" and "pi-kernel/binary" type-checked with
 * `tsc --noEmit --strict --skipLibCheck false`. Fails on any error, and the consumer's
 * `@ts-expect-error` lines fail too when a type reads as `any` (an unresolved import under
 * skipLibCheck), so both an unresolvable declaration and a silently untyped one are caught.
 * tsc must read nothing of this checkout but its own libraries and @types/node: the package's
 * types come from the installed copy alone.
 *
 * Run by scripts/pack-install-check.mjs (`checkPublishedTypes`), or alone after `npm run build`:
 * `node scripts/pack-types-check.mjs` packs the current build itself.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

/** Uses every entry of package.json "exports" and the library types behind them (pi-ai's messages and models, pi-tui's editor, tapable's hooks). */
const CONSUMER = `
import {
  AuthStorage,
  createAgentSession,
  CustomEditor,
  defineTool,
  ModelRegistry,
  SessionManager,
  Type,
  type AgentSessionEvent,
  type AssistantMessage,
  type CreateAgentSessionResult,
  type ExtensionAPI,
  type ExtensionFactory,
  type TextContent,
} from "pi-kernel";
import { createAgentSessionServices } from "pi-kernel/sdk";
import { createHooks, definePlugin, type PluginApi } from "pi-kernel/plugin";
import { runBinary, type BinaryOptions } from "pi-kernel/binary";

const stamp = defineTool({
  name: "stamp",
  label: "Stamp",
  description: "Stamp a text",
  parameters: Type.Object({ text: Type.String() }),
  async execute(_id, params) {
    const text: string = params.text;
    return { content: [{ type: "text", text }], details: {} };
  },
});

export const extension: ExtensionFactory = (pi: ExtensionAPI) => {
  pi.on("session_start", async (event, ctx) => {
    const reason: string = event.reason;
    ctx.ui.notify(reason, "info");
    const window: number | undefined = ctx.model?.contextWindow;
    // @ts-expect-error a model's context window is a number (pi-ai's Model)
    const wrong: string | undefined = ctx.model?.contextWindow;
    void window;
    void wrong;
  });
  pi.on("message_end", (event) => {
    if (event.message.role !== "assistant") return;
    const message: AssistantMessage = event.message;
    const tokens: number = message.usage.input;
    // @ts-expect-error usage counts are numbers (pi-ai's Usage)
    const wrong: string = message.usage.input;
    const texts: TextContent[] = message.content.filter((c): c is TextContent => c.type === "text");
    void tokens;
    void wrong;
    void texts;
  });
};

export const plugin = definePlugin({
  name: "types-consumer",
  version: "0.1.0",
  kernel: "^1.0.0",
  setup(api: PluginApi) {
    api.on("tool_call", (event) => (event.toolName === "bash" ? { block: true, reason: "no bash" } : undefined));
  },
});

export function hooks(): void {
  const all = createHooks(() => undefined);
  all.tool_call.tapPromise("consumer", async () => undefined);
  // @ts-expect-error a tap is named by a string or tap options (tapable's hooks)
  all.tool_call.tapPromise(42, async () => undefined);
}

export function editorText(editor: InstanceType<typeof CustomEditor>): string {
  // @ts-expect-error the editor's text is a string (pi-tui's Editor)
  const wrong: number = editor.getText();
  void wrong;
  return editor.getText();
}

export async function main(): Promise<void> {
  const result: CreateAgentSessionResult = await createAgentSession({
    cwd: "/tmp",
    customTools: [stamp],
    extensionFactories: [extension],
    sessionManager: SessionManager.inMemory("/tmp"),
  });
  result.session.subscribe((event: AgentSessionEvent) => {
    if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
  });
  const registry = ModelRegistry.inMemory(AuthStorage.inMemory());
  const provider: string | undefined = registry.find("anthropic", "claude-sonnet-4-5")?.provider;
  void provider;
  await createAgentSessionServices({ cwd: "/tmp" });
  const options: BinaryOptions = JSON.parse("{}") as BinaryOptions;
  await runBinary(options);
}
`;

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 300_000, ...opts });
  if (r.error) throw r.error;
  return r;
}

/**
 * Installs `tarball` without dev dependencies into `<tmp>/types-consumer` and type-checks the
 * consumer there. Throws with tsc's errors; returns a one-line summary.
 */
export function checkPublishedTypes({ tarball, tmp, env = process.env }) {
  const project = join(tmp, "types-consumer");
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "types-consumer", private: true, type: "module" }));
  const installed = run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", tarball], { cwd: project, env });
  if (installed.status !== 0) throw new Error(`npm install --omit=dev ${tarball} exited ${installed.status}\n${installed.stdout}\n${installed.stderr}`);
  writeFileSync(join(project, "src", "consumer.ts"), CONSUMER);
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ["node"],
        typeRoots: [join(ROOT, "node_modules", "@types")],
      },
      include: ["src"],
    }),
  );
  const t0 = performance.now();
  const tsc = run(process.execPath, [TSC, "-p", project, "--listFiles"], { cwd: project, env });
  const lines = (tsc.stdout + tsc.stderr).split("\n").filter(Boolean);
  const errors = lines.filter((l) => /error TS\d+/.test(l) || l.startsWith(" "));
  if (tsc.status !== 0 || errors.length) throw new Error(`tsc on a consumer of the installed package failed (exit ${tsc.status}):\n${errors.join("\n") || lines.join("\n")}`);
  const files = lines.filter((l) => !/error TS\d+/.test(l));
  // What tsc may read of this checkout: its own lib files and the Node types (with undici-types).
  const allowed = ["typescript", "@types", "undici-types"].map((d) => join(ROOT, "node_modules", d) + sep);
  const fromCheckout = files.filter((f) => resolve(f).startsWith(ROOT + sep) && !allowed.some((a) => resolve(f).startsWith(a)));
  if (fromCheckout.length) throw new Error(`tsc read files of the checkout instead of the installed package:\n${fromCheckout.join("\n")}`);
  const ours = files.filter((f) => f.includes(`${sep}node_modules${sep}pi-kernel${sep}`));
  if (!ours.some((f) => f.endsWith(join("dist", "sdk", "index.d.ts")))) throw new Error(`tsc did not read the installed package's types:\n${files.join("\n")}`);
  return `tsc --strict --skipLibCheck false: a consumer of pi-kernel, /sdk, /plugin and /binary type-checks against the installed package (${ours.length} of its declaration files, ${((performance.now() - t0) / 1000).toFixed(1)} s)`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const tmp = mkdtempSync(join(tmpdir(), "pi-pack-types-"));
  try {
    const packed = run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], { cwd: ROOT });
    if (packed.status !== 0) throw new Error(`npm pack exited ${packed.status}\n${packed.stderr}`);
    const { filename } = JSON.parse(packed.stdout)[0];
    console.log(checkPublishedTypes({ tarball: join(tmp, filename), tmp }));
    console.log("pack-types check passed");
  } catch (e) {
    console.error(`pack-types check FAILED: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  } finally {
    if (!process.env.PI_PACK_KEEP) rmSync(tmp, { recursive: true, force: true });
  }
}
