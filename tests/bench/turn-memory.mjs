#!/usr/bin/env node
/**
 * Where a long RPC session's memory goes: the session of the 50-turn case in agent-cases.mjs (per
 * turn a prompt, a read call for a 40-line file, a 20-sentence answer), with the CLI's RSS split
 * at chosen turns (read from /proc/<pid>/smaps, so Linux only) into
 *   - file-backed pages (the node binary, shared libraries);
 *   - malloc's main arena (`[heap]`);
 *   - malloc's thread arenas: glibc gives each thread that allocates an arena of its own, a
 *     64 MiB-aligned anonymous reservation; V8's worker threads (optimizing compiles, parts of GC)
 *     allocate there;
 *   - other anonymous memory (V8's heap pages, stacks);
 * and with --heap, after a full GC in the CLI (a preload answers SIGUSR2), V8's heap: used,
 * committed, young generation, code space, external, array buffers. Growth in the heap's used
 * bytes between marks is what the process keeps; growth elsewhere is memory of the runtime
 * (compiler threads' arenas, young generation sizing). The forced GCs run on V8's worker threads
 * too, so the RSS of later marks is a little higher with --heap than without.
 *
 *   npm run build && node tests/bench/turn-memory.mjs [--turns 50] [--marks 1,5,25,50] [--runs 1]
 *                                                     [--heap] [--cli <cli.js>] [-- <node flags for the CLI>]
 *
 * The CLI runs on the Node running this script with the node flags given after `--` (and, with
 * --heap, --expose-gc and the preload). Everything runs offline against the loopback scripted
 * LLM server.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLlmServer } from "../fixtures/llm-server.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const own = dash >= 0 ? argv.slice(0, dash) : argv;
const nodeFlags = dash >= 0 ? argv.slice(dash + 1) : [];
const opt = (name, dflt) => {
  const i = own.indexOf(`--${name}`);
  return i >= 0 ? own[i + 1] : dflt;
};
const TURNS = Number(opt("turns", "50"));
const MARKS = opt("marks", "1,5,25,50")
  .split(",")
  .map(Number)
  .filter((n) => n >= 1 && n <= TURNS);
const RUNS = Number(opt("runs", "1"));
const HEAP = own.includes("--heap");
const CLI = resolve(opt("cli", join(ROOT, "dist", "bundle", "cli.js")));
if (!existsSync(CLI)) {
  console.error(`no such CLI: ${CLI} (run \`npm run build\` first)`);
  process.exit(2);
}
if (!existsSync("/proc/self/smaps")) {
  console.error("turn-memory reads /proc/<pid>/smaps: Linux only");
  process.exit(2);
}

/** Answers SIGUSR2: two full GCs, then one JSON line of V8's figures appended to $TURN_MEMORY_OUT. */
const PRELOAD = `
const { appendFileSync } = require("node:fs");
const v8 = require("node:v8");
process.on("SIGUSR2", () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  const code = v8.getHeapSpaceStatistics().find((s) => s.space_name === "code_space");
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  appendFileSync(process.env.TURN_MEMORY_OUT, JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, code: code?.space_used_size ?? 0, young: young?.space_size ?? 0 }) + "\\n");
});
`;

const ARENA = 64 * 1024 * 1024;

/** RSS (KiB) of a process split by kind of mapping. */
function rssSplit(pid) {
  const maps = [];
  let cur;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      cur = { start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), path: m[4].trim(), rss: 0 };
      maps.push(cur);
      continue;
    }
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r && cur) cur.rss = Number(r[1]);
  }
  const out = { total: 0, files: 0, mainArena: 0, threadArenas: 0, arenas: 0, otherAnon: 0 };
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i];
    out.total += m.rss;
    if (m.path.startsWith("/")) out.files += m.rss;
    else if (m.path === "[heap]") out.mainArena += m.rss;
    else if (m.path === "" && m.start % BigInt(ARENA) === 0n) {
      // A thread arena: anonymous mappings from a 64 MiB boundary that together span exactly 64 MiB.
      let j = i;
      let rss = 0;
      while (j < maps.length && maps[j].path === "" && maps[j].end <= m.start + BigInt(ARENA) && (j === i || maps[j].start === maps[j - 1].end)) rss += maps[j++].rss;
      if (j > i && maps[j - 1].end === m.start + BigInt(ARENA)) {
        out.threadArenas += rss;
        out.arenas++;
        out.total += rss - m.rss;
        i = j - 1;
      } else out.otherAnon += m.rss;
    } else out.otherAnon += m.rss;
  }
  return out;
}

async function heapFigures(child, file) {
  const count = () => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);
  const before = count();
  child.kill("SIGUSR2");
  const t0 = performance.now();
  while (count() === before) {
    if (performance.now() - t0 > 30000) throw new Error("the CLI did not answer SIGUSR2 within 30 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  return JSON.parse(readFileSync(file, "utf8").split("\n").filter(Boolean).at(-1));
}

async function runSession(server, root) {
  const agentDir = join(root, "agent");
  mkdirSync(agentDir);
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({ providers: { bench: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "bench-key", models: [{ id: "bench-model", name: "bench", contextWindow: 1000000, maxTokens: 4096 }] } } }),
  );
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "bench", defaultModel: "bench-model", quietStartup: true, retry: { provider: { maxRetries: 0 } } }));
  const cwd = join(root, "work");
  mkdirSync(cwd);
  writeFileSync(join(cwd, "notes.txt"), Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") + "\n");
  const preload = join(root, "preload.cjs");
  writeFileSync(preload, PRELOAD);
  const out = join(root, "heap.jsonl");
  const turns = [];
  for (let i = 0; i < TURNS; i++) turns.push({ toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] }, { text: `Turn ${i + 1}: the file has forty lines. `.repeat(20) });
  server.setScript({ turns });
  const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", TURN_MEMORY_OUT: out };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn(process.execPath, [...(HEAP ? ["--expose-gc", "--require", preload] : []), ...nodeFlags, CLI, "--mode", "rpc"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  let buf = "";
  let waiter;
  child.stdout.on("data", (c) => {
    buf += c;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let rec;
      try {
        rec = JSON.parse(line);
      } catch {
        continue;
      }
      if (waiter?.until(rec)) {
        const w = waiter;
        waiter = undefined;
        w.resolve();
      }
    }
  });
  const wait = (until) =>
    new Promise((res, rej) => {
      waiter = { until, resolve: res };
      setTimeout(() => rej(new Error(`rpc wait timed out; stderr: ${err.slice(-500)}`)), 60000).unref();
    });
  const send = (o) => child.stdin.write(JSON.stringify(o) + "\n");
  send({ id: "s", type: "get_state" });
  await wait((r) => r.type === "response" && r.id === "s");
  const rows = [];
  for (let i = 1; i <= TURNS; i++) {
    const t0 = performance.now();
    send({ id: `p${i}`, type: "prompt", message: `turn ${i}: read notes.txt` });
    await wait((r) => r.type === "agent_end");
    const ms = performance.now() - t0;
    if (!MARKS.includes(i)) continue;
    const rss = rssSplit(child.pid); // before the GC the heap figures take
    rows.push({ turn: i, ms, rss, heap: HEAP ? await heapFigures(child, out) : undefined });
  }
  child.stdin.end();
  await new Promise((r) => child.on("close", r));
  return rows;
}

const MiB = (kib) => (kib / 1024).toFixed(1).padStart(6);
const MiBb = (bytes) => (bytes / 1048576).toFixed(1).padStart(6);
const server = await startLlmServer({ script: { default: { text: "ok" } } });
try {
  console.log(`CLI: ${CLI} on Node ${process.version}${nodeFlags.length ? ` with ${nodeFlags.join(" ")}` : ""}; ${TURNS} turns`);
  console.log(`MiB${HEAP ? "; V8 figures after a full GC" : ""}`);
  console.log(` run  turn    ms     RSS  files  malloc main  thread arenas   other anon${HEAP ? "  | heap used  committed  young  code  external  array buffers" : ""}`);
  for (let run = 1; run <= RUNS; run++) {
    const root = mkdtempSync(join(tmpdir(), "pi-turn-memory-"));
    try {
      const rows = await runSession(server, root);
      for (const r of rows) {
        const arenas = `${MiB(r.rss.threadArenas)} (${r.rss.arenas})`;
        const heap = r.heap ? `  |    ${MiBb(r.heap.heapUsed)}     ${MiBb(r.heap.heapTotal)} ${MiBb(r.heap.young)} ${MiBb(r.heap.code)}    ${MiBb(r.heap.external)}         ${MiBb(r.heap.arrayBuffers)}` : "";
        console.log(`${String(run).padStart(4)}  ${String(r.turn).padStart(4)} ${r.ms.toFixed(0).padStart(5)}  ${MiB(r.rss.total)} ${MiB(r.rss.files)}       ${MiB(r.rss.mainArena)}  ${arenas.padStart(13)}       ${MiB(r.rss.otherAnon)}${heap}`);
      }
      const [a, b] = [rows.find((r) => r.turn === 5) ?? rows[0], rows.at(-1)];
      if (a && b && a !== b) {
        const d = (f) => MiB(f(b) - f(a)).trim();
        const dh = (f) => MiBb(f(b) - f(a)).trim();
        const heap = HEAP ? `; heap used +${dh((r) => r.heap.heapUsed)}, code +${dh((r) => r.heap.code)}` : "";
        console.log(`      turn ${a.turn} → ${b.turn}: RSS +${d((r) => r.rss.total)} (thread arenas +${d((r) => r.rss.threadArenas)}, malloc main +${d((r) => r.rss.mainArena)}, other anon +${d((r) => r.rss.otherAnon)}, files +${d((r) => r.rss.files)})${heap}`);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
} finally {
  server.close?.();
}
