/**
 * The interactive mode of two CLIs side by side on the same scripted stream, in a real terminal
 * (tmux, 120x40). Not a test: a measurement, run by hand after a build:
 *
 *   node tests/bench/tui-stream-compare.mjs [--chunks 2000] [--components] \
 *     ours=node:dist/bundle/cli.js  pi16=/path/to/node22:/path/to/pi-coding-agent/dist/cli.js
 *
 * Each target is label=NODE:CLI. For each, a loopback scripted model streams `chunks` chunks
 * (~20 characters, a line break every 5th, 2 ms apart) ending in a marker; the CLI runs in a
 * fresh tmux session with a throwaway agent dir. Measured from Enter to the marker on screen with
 * the working indicator gone: wall time, and the CLI process's CPU time (utime+stime from /proc)
 * and share. --components loads tests/fixtures/extensions/tui-components.ts (a pi-tui footer that
 * changes with every chunk and a widget below the editor) in both.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLlmServer } from "../fixtures/llm-server.mjs";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : dflt;
};
const CHUNKS = Number(opt("--chunks", "2000"));
const components = args.includes("--components") ? (args.splice(args.indexOf("--components"), 1), true) : false;
const targets = args.map((a) => {
  const m = /^([^=]+)=([^:]+):(.+)$/.exec(a);
  if (!m) throw new Error(`target "${a}": expected label=NODE:CLI`);
  return { label: m[1], node: m[2] === "node" ? process.execPath : m[2], cli: resolve(m[3]) };
});
if (!targets.length) {
  console.error("usage: node tests/bench/tui-stream-compare.mjs [--chunks N] [--components] label=NODE:CLI ...");
  process.exit(2);
}

const MARK = "STREAM-END-MARK";
const text = Array.from({ length: CHUNKS }, (_, i) => `chunk ${String(i).padStart(5, "0")} text ${(i + 1) % 5 === 0 ? "\n" : " "}`).join("") + MARK;
const server = await startLlmServer({ script: { turns: [], default: { text, chunkSize: Math.ceil(text.length / CHUNKS), delayMs: 2 } } });
const CLK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
const SOCKET = `pi-tui-compare-${process.pid}`;
const tmux = (...a) => execFileSync("tmux", ["-L", SOCKET, ...a], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK; // utime, stime (fields 14, 15)
};

async function measure(t) {
  const root = mkdtempSync(join(tmpdir(), "pi-tui-compare-"));
  try {
    const agent = join(root, "agent");
    const cwd = join(root, "project");
    mkdirSync(agent, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    const model = { id: "mock-model", name: "mock-model", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096 };
    writeFileSync(join(agent, "models.json"), JSON.stringify({ providers: { mock: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "MOCK", models: [model] } } }));
    writeFileSync(join(agent, "settings.json"), JSON.stringify({ defaultProvider: "mock", defaultModel: "mock-model", quietStartup: true }));
    const ext = components ? ` -e '${join(ROOT, "tests/fixtures/extensions/tui-components.ts")}'` : "";
    const cmd = `cd '${cwd}' && exec '${t.node}' '${t.cli}'${ext} 2>'${join(root, "err.log")}'`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", t.label, "-x", "120", "-y", "40", "-e", `PI_CODING_AGENT_DIR=${agent}`, "-e", "PI_OFFLINE=1", "-e", "LANG=C.UTF-8", cmd);
    const pane = () => tmux("capture-pane", "-p", "-t", t.label);
    const waitFor = async (test, ms = 600_000) => {
      const t0 = Date.now();
      while (Date.now() - t0 < ms) {
        const s = pane();
        if (test(s)) return s;
        await sleep(20);
      }
      throw new Error(`${t.label}: timed out\n${pane()}\n${readFileSync(join(root, "err.log"), "utf8")}`);
    };
    await waitFor((s) => /mock-model|FOOTER-COMP/.test(s)); // the footer, ours or the fixture's
    await sleep(1500); // let start-up work (pi-tui load, extension load) finish before counting CPU
    const pid = Number(tmux("display", "-p", "-t", t.label, "#{pane_pid}").trim());
    tmux("send-keys", "-t", t.label, "-l", "stream please");
    const cpu0 = cpuOf(pid);
    const t0 = performance.now();
    tmux("send-keys", "-t", t.label, "Enter");
    await waitFor((s) => s.includes(MARK) && !/Working/.test(s));
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuOf(pid) - cpu0;
    tmux("kill-session", "-t", t.label);
    return { label: t.label, wall, cpu, share: cpu / wall };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

try {
  console.log(`${CHUNKS} chunks at 2 ms, 120x40 tmux${components ? ", with a pi-tui footer and widget" : ""}`);
  for (const t of targets) {
    const r = await measure(t);
    console.log(`${r.label.padEnd(8)} Enter→final frame ${r.wall.toFixed(2)} s   CPU ${r.cpu.toFixed(2)} s   CPU share ${(r.share * 100).toFixed(0)}%`);
  }
} finally {
  try {
    tmux("kill-server");
  } catch {
    /* gone */
  }
  await server.close();
}
