/**
 * Benchmark cases for what agents do (used by run.mjs): turns with a tool call (the time from the
 * tool call's arrival, when the scripted server has sent the whole answer carrying it, to the next
 * request), an RPC prompt whose read call comes before a 5,000-chunk answer, a 50-turn RPC session
 * with a tool call per turn (time and RSS per turn), a first run in a fresh agent dir, and the
 * installed size (`npm pack`, installed with `--omit=dev` into a temporary prefix).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const TOOL_CALLS = {
  read: { name: "read", arguments: { path: "notes.txt" } },
  bash: { name: "bash", arguments: { command: "echo hello" } },
  edit: { name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "line 7", newText: "line seven" }] } },
};

/** A fresh folder with the file the tool calls work on. */
function workDir(root) {
  const dir = mkdtempSync(join(root, "work-"));
  writeFileSync(join(dir, "notes.txt"), Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") + "\n");
  return dir;
}

/** The requests this run made, and the time from the answer carrying the tool call to the next request. */
function toolGap(server, fromSeq) {
  const reqs = server.stats().requests.filter((r) => r.seq > fromSeq);
  if (reqs.length < 2 || reqs[0].endTime === undefined) throw new Error(`expected a request after the tool call, saw ${reqs.length}`);
  const results = (reqs[1].body?.messages ?? []).filter((m) => m.role === "tool");
  if (!results.length) throw new Error("the second request carries no tool result");
  return reqs[1].preciseTime - reqs[0].preciseEndTime;
}
const lastSeq = (server) => server.stats().requests.at(-1)?.seq ?? 0;

/** The RSS (MiB) of the CLI's Node process: the child of /usr/bin/time when it wraps it. */
function rssMiB(pid) {
  const read = (p) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, "utf8"));
      return m ? Number(m[1]) / 1024 : undefined;
    } catch {
      return undefined;
    }
  };
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    if (kids.length) return read(kids[0]);
  } catch {
    // no /proc children list: the process itself
  }
  return read(pid);
}

/** Files and bytes under a folder (regular files, symlinks not followed). */
function treeSize(dir) {
  let files = 0;
  let bytes = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        files++;
        bytes += lstatSync(p).size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

/** The folder of the package a cli.js belongs to. */
function packageDir(cli) {
  let dir = dirname(cli);
  for (let i = 0; i < 5; i++, dir = dirname(dir)) if (existsSync(join(dir, "package.json"))) return dir;
  throw new Error(`no package.json above ${cli}`);
}

/** `npm pack` the package, install the tarball with --omit=dev (offline from the cache when it can). */
function installedSize(pkgDir) {
  const tmp = mkdtempSync(join(tmpdir(), "pi-bench-install-"));
  try {
    const npm = (args, cwd) => spawnSync("npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
    const pack = npm(["pack", "--ignore-scripts", "--json", "--pack-destination", tmp, pkgDir], tmp);
    if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr.slice(-300)}`);
    const info = JSON.parse(pack.stdout)[0];
    const tgz = join(tmp, info.filename);
    const prefix = join(tmp, "prefix");
    mkdirSync(prefix);
    const common = ["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", prefix, tgz];
    let inst = npm(["--offline", ...common], tmp);
    let how = "offline";
    if (inst.status !== 0) {
      inst = npm(["--prefer-offline", ...common], tmp);
      how = "prefer-offline";
    }
    if (inst.status !== 0) throw new Error(`npm install failed: ${inst.stderr.slice(-300)}`);
    const size = treeSize(join(prefix, "node_modules"));
    return { "installed MB": size.bytes / 1e6, "installed files": size.files, "packed KB": info.size / 1e3, how };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The cases; `server` is the scripted server (each run sets its script). */
export function agentCases({ runOnce, rpcSession, server }) {
  const cases = [];
  for (const tool of ["read", "bash", "edit"]) {
    cases.push({
      name: `print, one ${tool} call`,
      run: async (cli, ctx) => {
        server.setScript({ turns: [{ toolCalls: [TOOL_CALLS[tool]] }, { text: "Done." }] });
        const from = lastSeq(server);
        const cwd = workDir(ctx.root);
        const r = await runOnce(cli, ["-p", `use ${tool}`], { ...ctx, cwd });
        rmSync(cwd, { recursive: true, force: true });
        if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr.slice(-300)}`);
        return { "tool → request ms": toolGap(server, from), "wall ms": r.wall, "peak RSS MiB": r.rssKiB / 1024 };
      },
    });
  }
  cases.push({
    name: "rpc, read call then 5,000-chunk answer",
    rpc: true,
    run: async (cli, ctx) => {
      server.setScript({ turns: [{ toolCalls: [TOOL_CALLS.read] }, { text: "word ", repeat: 5000, chunkSize: 5 }] });
      const cwd = workDir(ctx.root);
      const s = rpcSession(cli, { ...ctx, cwd, extraArgs: ["--no-session"] });
      s.send({ id: "s", type: "get_state" });
      await s.wait((r) => r.type === "response" && r.id === "s");
      const from = lastSeq(server);
      const t0 = performance.now();
      s.send({ id: "p", type: "prompt", message: "read it, then answer at length" });
      const t1 = await s.wait((r) => r.type === "agent_end");
      const rss = await s.close();
      rmSync(cwd, { recursive: true, force: true });
      return { "wall ms": t1 - t0, "tool → request ms": toolGap(server, from), "peak RSS MiB": rss / 1024 };
    },
  });
  cases.push({
    name: "rpc, 50 turns with a read call each",
    rpc: true,
    runs: 3,
    run: async (cli, ctx) => {
      const turns = [];
      for (let i = 0; i < 50; i++) turns.push({ toolCalls: [TOOL_CALLS.read] }, { text: `Turn ${i + 1}: the file has forty lines. `.repeat(20) });
      server.setScript({ turns });
      const cwd = workDir(ctx.root);
      const s = rpcSession(cli, { ...ctx, cwd });
      s.send({ id: "s", type: "get_state" });
      await s.wait((r) => r.type === "response" && r.id === "s");
      const out = {};
      for (let i = 1; i <= 50; i++) {
        const t0 = performance.now();
        s.send({ id: `p${i}`, type: "prompt", message: `turn ${i}: read notes.txt` });
        const t1 = await s.wait((r) => r.type === "agent_end");
        if (i === 1 || i === 5 || i === 25 || i === 50) {
          out[`turn ${i} ms`] = t1 - t0;
          out[`RSS turn ${i} MiB`] = rssMiB(s.pid);
        }
      }
      await s.close();
      rmSync(cwd, { recursive: true, force: true });
      out["RSS 50 / 5 %"] = (out["RSS turn 50 MiB"] / out["RSS turn 5 MiB"]) * 100;
      return out;
    },
  });
  cases.push({
    name: "first run, fresh agent dir (-p, bash call)",
    run: async (cli, ctx) => {
      server.setScript({ turns: [{ toolCalls: [TOOL_CALLS.bash] }, { text: "Done." }] });
      const agentDir = mkdtempSync(join(ctx.root, "fresh-agent-"));
      for (const f of ["models.json", "settings.json"]) copyFileSync(join(ctx.env.PI_CODING_AGENT_DIR, f), join(agentDir, f));
      const cwd = workDir(ctx.root);
      const r = await runOnce(cli, ["-p", "run it"], { ...ctx, cwd, env: { ...ctx.env, PI_CODING_AGENT_DIR: agentDir } });
      rmSync(cwd, { recursive: true, force: true });
      rmSync(agentDir, { recursive: true, force: true });
      if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr.slice(-300)}`);
      return { "wall ms": r.wall, "peak RSS MiB": r.rssKiB / 1024 };
    },
  });
  cases.push({
    name: "installed size (npm pack, --omit=dev)",
    runs: 1,
    run: async (cli) => {
      const { how: _how, ...m } = installedSize(packageDir(cli));
      return m;
    },
  });
  return cases;
}

/** Ratio budgets of the agent cases against pi 1.6 (ours / theirs, same run). */
export const AGENT_RATIO_BUDGETS = [
  ["Tool call → next request: read", "print, one read call", "tool → request ms", 0.5],
  ["Tool call → next request: bash", "print, one bash call", "tool → request ms", 0.5],
  ["Tool call → next request: edit", "print, one edit call", "tool → request ms", 0.5],
  ["`-p` with a read call, peak RSS", "print, one read call", "peak RSS MiB", 0.5],
  ["`-p` with a bash call, peak RSS", "print, one bash call", "peak RSS MiB", 0.5],
  ["`-p` with an edit call, peak RSS", "print, one edit call", "peak RSS MiB", 0.5],
  ["RPC read call + 5,000-chunk answer → agent_end", "rpc, read call then 5,000-chunk answer", "wall ms", 0.35],
  ["RPC read call + 5,000-chunk answer, peak RSS", "rpc, read call then 5,000-chunk answer", "peak RSS MiB", 0.5],
  ["First run in a fresh agent dir", "first run, fresh agent dir (-p, bash call)", "wall ms", 0.5],
  ["First run in a fresh agent dir, peak RSS", "first run, fresh agent dir (-p, bash call)", "peak RSS MiB", 0.5],
  ["Installed size, bytes", "installed size (npm pack, --omit=dev)", "installed MB", 0.7],
  ["Installed size, files", "installed size (npm pack, --omit=dev)", "installed files", 0.7],
];

/** The 50-turn session's own budget (ours): RSS at turn 50 within 10 % of turn 5. */
export function sessionGrowthBudget(get) {
  const r = get("rpc, 50 turns with a read call each", "ours", "RSS 50 / 5 %");
  const t5 = get("rpc, 50 turns with a read call each", "ours", "RSS turn 5 MiB");
  const t50 = get("rpc, 50 turns with a read call each", "ours", "RSS turn 50 MiB");
  if (r === undefined) return "| 50-turn session: RSS at turn 50 / turn 5 (ours) | not measured | ≤ 110 % | – |";
  return `| 50-turn session: RSS at turn 50 / turn 5 (ours) | ${t50.toFixed(0)} / ${t5.toFixed(0)} MiB = ${r.toFixed(0)} % | ≤ 110 % | ${r <= 110 ? "met" : "**missed**"} |`;
}
