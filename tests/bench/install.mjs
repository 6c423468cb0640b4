/**
 * Benchmark case: `pi install npm:<package>` of a pi package that names the host packages as
 * peers, against a loopback npm registry (offline). The registry also serves those host
 * packages (2 MiB each), so a CLI whose npm installs peers pays for them in time and size.
 * Metrics: wall ms and the installed size of the agent dir's npm prefix.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startNpmRegistry } from "../fixtures/npm-registry.mjs";

const HOST = ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent", "@earendil-works/pi-tui", "typebox"];
let registry;
let work;

function write(path, text) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** Bytes under `dir` (files and links, not following links). */
function sizeOf(dir) {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? sizeOf(p) : lstatSync(p).size;
  }
  return total;
}

async function ensureRegistry(root) {
  if (registry) return;
  work = mkdtempSync(join(root, "npm-bench-"));
  const src = join(work, "src");
  write(join(src, "dep", "package.json"), JSON.stringify({ name: "pi-bench-dep", version: "1.0.0", main: "index.js" }));
  write(join(src, "dep", "index.js"), `module.exports = ${JSON.stringify("x".repeat(100_000))};\n`);
  write(
    join(src, "pkg", "package.json"),
    JSON.stringify({
      name: "pi-bench-peers",
      version: "1.0.0",
      keywords: ["pi-package"],
      dependencies: { "pi-bench-dep": "^1.0.0" },
      peerDependencies: Object.fromEntries(HOST.map((n) => [n, "*"])),
      pi: { extensions: ["./index.js"] },
    }),
  );
  write(join(src, "pkg", "index.js"), "export default function (pi) {}\n");
  const folders = [join(src, "dep"), join(src, "pkg")];
  for (const name of HOST) {
    const dir = join(src, name.replace("/", "__"));
    write(join(dir, "package.json"), JSON.stringify({ name, version: "99.0.0", main: "index.js" }));
    write(join(dir, "index.js"), `module.exports = ${JSON.stringify("h".repeat(2 * 1024 * 1024))};\n`);
    folders.push(dir);
  }
  registry = await startNpmRegistry(folders);
  // Warm npm's cache once, so no CLI's first run pays for it.
  const prefix = join(work, "warm");
  mkdirSync(prefix, { recursive: true });
  // (async: the registry answers from this process)
  await new Promise((r) => spawn("npm", ["install", "pi-bench-peers", ...HOST, "--prefix", prefix, "--no-audit", "--no-fund"], { env: npmEnv(process.env), stdio: "ignore" }).on("close", r));
}

function npmEnv(env) {
  const out = { ...env, npm_config_registry: registry.url, npm_config_cache: join(work, "cache"), npm_config_update_notifier: "false" };
  delete out.PI_OFFLINE;
  return out;
}

/** The case, for tests/bench/run.mjs (`runOnce` is its CLI runner). */
export function installCase(runOnce) {
  return {
    name: "install npm package with host peers",
    run: async (cli, ctx) => {
      await ensureRegistry(ctx.root);
      const agentDir = mkdtempSync(join(work, "agent-"));
      cpSync(join(ctx.env.PI_CODING_AGENT_DIR, "settings.json"), join(agentDir, "settings.json"));
      try {
        const r = await runOnce(cli, ["install", "npm:pi-bench-peers"], { ...ctx, env: { ...npmEnv(ctx.env), PI_CODING_AGENT_DIR: agentDir } });
        if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr.slice(-300)}`);
        return { "wall ms": r.wall, "installed KiB": sizeOf(join(agentDir, "npm")) / 1024 };
      } finally {
        rmSync(agentDir, { recursive: true, force: true });
      }
    },
  };
}

export async function closeInstallRegistry() {
  await registry?.close();
  registry = undefined;
}
