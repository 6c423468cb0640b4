/**
 * Cost of checkpoints on a generated 10,000-file project (600 folders, ~1 KB files, a
 * .gitignore'd build folder, written an hour before): the first capture, then the time each mutating tool call adds
 * (a capture before it, nothing changed, and one after it, one file changed: what the agent
 * waits for, and the work of both captures), the store's size
 * and its growth over 50 such calls, and the RSS the process gained.
 * bashWithoutWatcher: the bash figure with the watcher off (every whole-project capture scans).
 * The wall times depend on the machine's load (printed); cpuMean (this process and its git
 * children, from /proc) does not.
 *   node tests/bench/checkpoints.mjs [files=10000] [calls=50]
 */
import { createJiti } from "jiti";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

const files = Number(process.argv[2] ?? 10000);
const calls = Number(process.argv[3] ?? 50);
const jiti = createJiti(import.meta.url);
const { CheckpointStore, DEFAULTS } = await jiti.import("../../plugins/checkpoints/store.ts");
const { makeE2eEnv, runCli, CLI } = await jiti.import("../helpers/e2e.ts");

const root = mkdtempSync(join(tmpdir(), "pi-cp-bench-"));
const cwd = join(root, "project");
generate(cwd);

function generate(cwd) {
for (let i = 0; i < files; i++) {
  const dir = join(cwd, "src", `d${i % 600}`);
  if (i < 600) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `f${i}.ts`), `export const v${i} = ${i};\n` + "// filler line of a source file\n".repeat(30));
}
mkdirSync(join(cwd, "build"));
for (let i = 0; i < 200; i++) writeFileSync(join(cwd, "build", `o${i}.js`), "x".repeat(2000));
writeFileSync(join(cwd, ".gitignore"), "build/\n");
// A project is older than the session: its files were written before (git's racy-clean check
// would otherwise re-read every file written in the same second as the store's index).
const old = new Date(Date.now() - 3600_000);
for (let i = 0; i < files; i++) utimesSync(join(cwd, "src", `d${i % 600}`, `f${i}.ts`), old, old);
}

const du = (p) => Number(execFileSync("du", ["-sk", p]).toString().split("\t")[0]);
const store = new CheckpointStore(cwd, join(root, "store"), DEFAULTS);
const rss0 = process.memoryUsage().rss;
let t = performance.now();
await store.snapshot("first");
const first = performance.now() - t;
const size0 = du(join(root, "store"));
/** CPU ms used by this process and its finished children (git), from /proc/self/stat; load-independent. */
const cpuMs = () => {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
};
/**
 * One mutating call: a capture before it (the agent waits for it), one file changed, a capture
 * after it. The plugin does not wait for the after-capture: it runs while the model answers the
 * tool result, and the next capture or restore queues behind it. `waited` is what the agent
 * waits per call (the capture before it); `work` is both captures, as the store does them.
 * `targeted`: a write/edit call (its path is known: no scan).
 */
async function series(store, n, targeted, tag) {
  const waited = [];
  const work = [];
  const cpu0 = cpuMs();
  for (let i = 0; i < n; i++) {
    const rel = join("src", `d${i % 600}`, `f${i}.ts`);
    const t = performance.now();
    await store.snapshot("before", targeted ? [rel] : undefined);
    const w = performance.now() - t;
    writeFileSync(join(cwd, rel), `export const v${i} = ${i + 1}; // ${tag}\n` + "// changed by call\n".repeat(30));
    const t2 = performance.now();
    await store.snapshot("after", targeted ? [rel] : undefined); // (the model's answer time)
    waited.push(w);
    work.push(w + performance.now() - t2);
  }
  const stats = (per) => {
    const sorted = [...per].sort((a, b) => a - b);
    return { median: Math.round(sorted[Math.floor(n / 2)]), p90: Math.round(sorted[Math.floor(n * 0.9)]) };
  };
  return { waited: stats(waited), work: stats(work), cpuMean: Math.round((cpuMs() - cpu0) / n) };
}
const bash = await series(store, calls, false, "bash");
const write = await series(store, calls, true, "write");
await store.flush();
store.close();
// The same without the watcher (checkpoints.watch: false): every whole-project capture scans.
const scanStore = new CheckpointStore(cwd, join(root, "store-scan"), { ...DEFAULTS, watch: false });
await scanStore.snapshot("first");
const bashScan = await series(scanStore, calls, false, "bash-scan");
console.log(JSON.stringify({
  files,
  calls,
  firstCaptureMs: Math.round(first),
  addedPerCallMs: { bashOrOtherTool: bash, writeOrEdit: write, bashWithoutWatcher: bashScan },
  loadAverage: Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]),
  storeKiB: { afterFirst: size0, afterAllCalls: du(join(root, "store")) },
  rssGainMiB: Math.round((process.memoryUsage().rss - rss0) / 1048576),
}));
rmSync(root, { recursive: true, force: true });

/**
 * A real turn: the CLI (dist/bundle, `npm run build` first) in print mode against the loopback
 * scripted model on a freshly generated project, `calls` bash calls in a row (each appends to one
 * file). The figure is the time from the end of the model's answer holding a bash call to the
 * arrival of the next request (the tool run, the captures the agent waits for, the next request
 * built), with checkpoints off and on, for a model answering at once and in 500 ms; the first call is left out of the median (it waits for the
 * project's first capture, started with the session).
 */
if (existsSync(CLI)) {
  const { startLlmServer } = await import("../fixtures/llm-server.mjs");
  const server = await startLlmServer({ script: { turns: [] } });
  const gaps = {};
  // The model answers at once (the capture after a call cannot overlap its answer: the worst
  // case), or after 500 ms (a fast real model's first token: the capture after overlaps it).
  // And once with the watcher off (checkpoints.watch: false): every whole-project capture scans.
  for (const [enabled, answerMs, watch = true] of [[false, 0], [true, 0], [false, 500], [true, 500], [true, 500, false]]) {
    const e = makeE2eEnv(server.url, { settings: { checkpoints: { enabled, watch } } });
    generate(e.cwd);
    server.reset();
    const turns = [];
    for (let i = 0; i < calls; i++) turns.push({ firstByteDelayMs: answerMs, toolCalls: [{ name: "bash", arguments: { command: `echo ${i} >> src/d${i % 600}/f${i}.ts` } }] });
    turns.push({ text: "done" });
    server.setScript({ turns });
    const r = await runCli(["-p", "--tools", "bash", "run the commands"], e);
    if (r.code !== 0 || /checkpoints:/.test(r.stderr)) throw new Error(`the CLI failed or warned: ${r.stderr}`);
    const reqs = server.stats().requests;
    const per = [];
    for (let i = 1; i < reqs.length; i++) if (reqs[i - 1].preciseEndTime) per.push(reqs[i].preciseTime - reqs[i - 1].preciseEndTime);
    const later = per.slice(1).sort((a, b) => a - b);
    gaps[`${enabled ? (watch ? "checkpointsOn" : "checkpointsOnWithoutWatcher") : "checkpointsOff"}_modelAnswers${answerMs}ms`] = { first: per[0], median: later[Math.floor(later.length / 2)], p90: later[Math.floor(later.length * 0.9)] };
    e.cleanup();
  }
  await server.close();
  console.log(JSON.stringify({ turnGapMs: gaps, loadAverage: Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]) }));
}
