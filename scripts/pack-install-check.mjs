#!/usr/bin/env node
/**
 * Installs this package the way users install a CLI and runs the installed commands:
 *
 *   1. `npm pack` of the current build (run `npm run build` first; the check skips the package's
 *      prepack, which builds) into a throwaway folder;
 *   2. `npm install -g --prefix <tmp>/prefix <tarball>`: no build step, no dev dependencies;
 *   3. `pi --version` and `pi-kernel --version`; `pi -p` and `pi --mode json` with an extension
 *      importing the package against the scripted model server (tests/fixtures/llm-server.mjs);
 *      the TUI under tmux, one prompt answered;
 *   4. `pi new cli mycli` from the installed package: a version range on pi-kernel, the tarball
 *      installed into it, `npm install -g` of the custom CLI, and `mycli --mode json` with an
 *      extension printing to stdout gives a clean JSON stream;
 *   5. the published types: the tarball installed with `--omit=dev` into a TypeScript project
 *      whose consumer of every export type-checks with `--strict --skipLibCheck false`
 *      (scripts/pack-types-check.mjs; skipped with `--no-types`).
 *
 * Prints the tarball and installed sizes. Exits non-zero naming the first step that failed.
 * Uses the `node` and `npm` on the PATH (CI runs it with Node 20 and with Node 22).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLlmServer } from "../tests/fixtures/llm-server.mjs";
import { checkPublishedTypes } from "./pack-types-check.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const tmp = mkdtempSync(join(tmpdir(), "pi-pack-"));
const prefix = join(tmp, "prefix");
const binDir = join(prefix, "bin");
const agentDir = join(tmp, "agent");
const project = join(tmp, "project");
const socket = `pi-pack-${process.pid}`;
let server;

const npmEnv = { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", npm_config_loglevel: "error" };
const env = { ...npmEnv, PATH: `${binDir}:${process.env.PATH}`, PI_CODING_AGENT_DIR: agentDir, MYCLI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", NODE_DISABLE_COMPILE_CACHE: "1" };
for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];

function step(name) {
  console.log(`== ${name}`);
}
function fail(message) {
  throw new Error(message);
}
function check(cond, message) {
  if (!cond) fail(message);
}
/** Run a command to completion (asynchronously: the scripted server runs in this process); fails with its output unless it exits 0. */
function sh(cmd, args, opts = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { env, cwd: project, stdio: ["ignore", "pipe", "pipe"], ...opts });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${cmd} ${args.join(" ")} exited ${code ?? signal}\n${stdout}\n${stderr}`));
      else resolvePromise({ stdout, stderr });
    });
  });
}
function duSize(dir) {
  let n = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) n += statSync(p).size;
    }
  };
  walk(dir);
  return n;
}
const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  check(existsSync(join(ROOT, "dist", "bundle", "cli.js")), "dist/bundle/cli.js is missing: run `npm run build` first");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(project, { recursive: true });
  console.log(`node ${process.version}, npm ${execFileSync("npm", ["--version"], { encoding: "utf8" }).trim()}, in ${tmp}`);

  step("npm pack");
  const packed = JSON.parse((await sh("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], { cwd: ROOT })).stdout)[0];
  const tarball = join(tmp, packed.filename);
  console.log(`${packed.filename}: ${mb(packed.size)} packed, ${mb(packed.unpackedSize)} unpacked, ${packed.entryCount} files`);

  step("npm install -g --prefix <tmp> <tarball>");
  const t0 = Date.now();
  await sh("npm", ["install", "-g", "--prefix", prefix, tarball], { cwd: tmp });
  const installed = join(prefix, "lib", "node_modules", pkg.name);
  console.log(`installed in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${mb(duSize(installed))} (pi-kernel with its dependencies)`);
  // @types/* come along with dependencies that ship types; the build and test tools must not.
  for (const dev of Object.keys(pkg.devDependencies ?? {}).filter((d) => !d.startsWith("@types/"))) {
    check(!existsSync(join(installed, "node_modules", dev)) && !existsSync(join(prefix, "lib", "node_modules", dev)), `dev dependency ${dev} was installed`);
  }
  // pi-ai's provider SDKs are bundled (lazy chunks), not installed as its dependencies.
  for (const sdk of ["openai", "@anthropic-ai/sdk", "@google/genai", "@aws-sdk/client-bedrock-runtime"]) {
    check(!existsSync(join(installed, "node_modules", sdk)), `provider SDK ${sdk} was installed (the bundle carries it)`);
  }
  check(!existsSync(join(installed, "tsconfig.json")) && !existsSync(join(installed, "core")), "sources were packed");

  step("pi --version, pi-kernel --version");
  for (const bin of ["pi", "pi-kernel"]) {
    const v = (await sh(join(binDir, bin), ["--version"])).stdout;
    check(v === `${pkg.version}\n`, `${bin} --version printed ${JSON.stringify(v)}`);
  }
  check((await sh("bash", ["-c", "command -v pi"])).stdout.trim() === join(binDir, "pi"), "pi on the PATH is not the installed one");

  step("pi -p and pi --mode json against the scripted model server, with an extension importing the package");
  server = await startLlmServer({ script: { turns: [] } });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({ providers: { scripted: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "test-key", models: [{ id: "scripted-model", contextWindow: 128000, maxTokens: 4096 }] } } }),
  );
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "scripted", defaultModel: "scripted-model" }));
  server.setScript({ turns: [{ text: "PRINT-MODE-ANSWER" }] });
  const printed = (await sh("pi", ["-p", "--no-session", "hello"])).stdout;
  check(printed === "PRINT-MODE-ANSWER\n", `pi -p printed ${JSON.stringify(printed)}`);
  writeFileSync(
    join(project, "loud.ts"),
    [
      'import { Type } from "pi-kernel";',
      'import { Type as LegacyType } from "@mariozechner/pi-coding-agent";',
      'console.log("NOISE-AT-LOAD");',
      "export default function (pi) {",
      '  pi.on("session_start", () => console.log("NOISE-IN-SESSION-START"));',
      '  pi.registerTool({ name: "loud_tool", label: "Loud", description: "says ok", parameters: Type.Object({}),',
      '    async execute() { console.log("NOISE-IN-TOOL"); return { content: [{ type: "text", text: Type === LegacyType ? "SAME-TYPE" : "OTHER-TYPE" }], details: {} }; } });',
      "}",
    ].join("\n"),
  );
  const cleanJson = (stdout, what) => {
    check(stdout.startsWith("{"), `${what}: stdout does not start with a record: ${stdout.slice(0, 80)}`);
    const records = stdout.split("\n").filter(Boolean).map((l, i) => {
      try {
        return JSON.parse(l);
      } catch {
        return fail(`${what}: stdout line ${i + 1} is not JSON: ${l.slice(0, 120)}`);
      }
    });
    const end = records.find((r) => r.type === "tool_execution_end");
    check(end?.result?.content?.[0]?.text === "SAME-TYPE", `${what}: the extension's tool did not answer SAME-TYPE: ${JSON.stringify(end)}`);
    return records;
  };
  server.setScript({ turns: [{ toolCalls: [{ name: "loud_tool", arguments: {} }] }, { text: "done" }] });
  const json = await sh("pi", ["--mode", "json", "--no-session", "-e", "./loud.ts", "use the tool"]);
  cleanJson(json.stdout, "pi --mode json");
  check(json.stderr.includes("NOISE-AT-LOAD") && json.stderr.includes("NOISE-IN-TOOL"), "pi --mode json: the extension's output is not on stderr");

  step("the TUI (tmux)");
  const tmux = (...args) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env });
  server.setScript({ turns: [{ text: "TUI-ANSWER-SHOWN" }] });
  tmux("new-session", "-d", "-s", "t", "-x", "110", "-y", "32", "-c", project, `pi 2>${join(tmp, "tui.err")}`);
  const waitScreen = async (re, what) => {
    let s = "";
    for (const t0 = Date.now(); Date.now() - t0 < 90_000; await sleep(100)) {
      s = tmux("capture-pane", "-p", "-t", "t");
      if (re.test(s)) return s;
    }
    fail(`the TUI did not show ${what}\n--- screen ---\n${s}\n--- stderr ---\n${existsSync(join(tmp, "tui.err")) ? readFileSync(join(tmp, "tui.err"), "utf8") : ""}`);
  };
  await waitScreen(/scripted-model/, "the model in its footer");
  tmux("send-keys", "-t", "t", "-l", "hello from the packed install");
  tmux("send-keys", "-t", "t", "Enter");
  await waitScreen(/TUI-ANSWER-SHOWN/, "the scripted answer");
  tmux("kill-server");

  step("pi new cli: a version range on pi-kernel; npm install -g of the custom CLI; a clean JSON stream");
  const created = (await sh("pi", ["new", "cli", "mycli"], { cwd: tmp })).stdout;
  const mycli = join(tmp, "mycli");
  const spec = JSON.parse(readFileSync(join(mycli, "package.json"), "utf8")).dependencies[pkg.name];
  check(spec === `^${pkg.version}`, `the scaffold depends on ${pkg.name} as ${spec}, not ^${pkg.version}`);
  check(created.includes(`first: npm install <the ${pkg.name}-${pkg.version}.tgz you installed>`), `the scaffold's Next: does not say what to do without a registry:\n${created}`);
  await sh("npm", ["install", tarball], { cwd: mycli });
  await sh("npm", ["test"], { cwd: mycli });
  await sh("npm", ["install", "-g", "--prefix", prefix, mycli], { cwd: tmp });
  server.setScript({ turns: [{ toolCalls: [{ name: "loud_tool", arguments: {} }] }, { text: "done" }] });
  const custom = await sh("mycli", ["--mode", "json", "--no-session", "-e", "./loud.ts", "use the tool"]);
  cleanJson(custom.stdout, "mycli --mode json");
  check(custom.stderr.includes("NOISE-AT-LOAD") && custom.stderr.includes("NOISE-IN-TOOL"), "mycli --mode json: the extension's output is not on stderr");
  console.log(`mycli --mode json -e ./loud.ts: ${custom.stdout.split("\n").filter(Boolean).length} JSON records on stdout; on stderr: ${custom.stderr.trim().split("\n").join(" | ")}`);

  // The declarations do not depend on the Node that runs the check: CI runs this step once (`--no-types` on the other pass).
  if (process.argv.includes("--no-types")) console.log("the published types: not checked in this run (--no-types)");
  else {
    step("the published types: npm install --omit=dev <tarball>, tsc --strict --skipLibCheck false on a consumer of every export");
    console.log(checkPublishedTypes({ tarball, tmp, env: npmEnv }));
  }
  console.log("pack-install check passed");
}

try {
  await main();
} catch (e) {
  console.error(`pack-install check FAILED: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  try {
    execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  } catch {
    /* no tmux server left */
  }
  await server?.close();
  if (!process.env.PI_PACK_KEEP) rmSync(tmp, { recursive: true, force: true });
}
