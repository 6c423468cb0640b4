/**
 * End to end: RPC framing and robustness on raw stdin/stdout bytes — CRLF, U+2028 inside a
 * string, a 5 MB line, records split across writes, an unterminated last line, 1,000 malformed
 * lines — plus the command-line edges (rpc-schema, @file, signals).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RawRpc } from "./helpers/rpc.js";

let server: LlmServer;
let e: E2eEnv;
const procs: RawRpc[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  await server.close();
  e.cleanup();
});

function rpc(args: string[] = []): RawRpc {
  const p = new RawRpc(e, ["--no-session", ...args]);
  procs.push(p);
  return p;
}

/** mulberry32: deterministic random numbers, so a failure reproduces. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("RPC framing", () => {
  it("CRLF lines, U+2028/U+2029 inside strings, and a multi-byte character split across writes", async () => {
    const p = rpc();
    p.write('{"id":"crlf","type":"get_state"}\r\n');
    expect((await p.response("crlf")).success).toBe(true);

    const name = "left\u2028middle\u2029right";
    p.write(JSON.stringify({ id: "name", type: "set_session_name", name }) + "\r\n");
    expect((await p.response("name")).success).toBe(true);
    p.send({ id: "s1", type: "get_state" });
    expect((await p.response("s1")).data.sessionName).toBe(name);

    // A record split in three writes, the middle one cutting "é" (0xC3 0xA9) in half.
    const bytes = Buffer.from(JSON.stringify({ id: "split", type: "set_session_name", name: "caf\u00e9 split" }) + "\n", "utf8");
    const cut = bytes.indexOf(0xc3) + 1;
    p.write(bytes.subarray(0, 10));
    await new Promise((r) => setTimeout(r, 30));
    p.write(bytes.subarray(10, cut));
    await new Promise((r) => setTimeout(r, 30));
    p.write(bytes.subarray(cut));
    expect((await p.response("split")).success).toBe(true);
    p.send({ id: "s2", type: "get_state" });
    expect((await p.response("s2")).data.sessionName).toBe("caf\u00e9 split");
    // Raw output: U+2028 travels as the character itself inside the JSON string, and lines split on LF only.
    expect(p.records.filter((r) => r.type === "response")).toHaveLength(5);
  });

  it("a 5 MB line arrives whole", async () => {
    const p = rpc();
    const big = "x".repeat(5 * 1024 * 1024 - 10) + "END\u2028X";
    const line = JSON.stringify({ id: "big", type: "set_session_name", name: big }) + "\n";
    // Written in 64 KiB pieces, as a pipe would deliver them.
    for (let i = 0; i < line.length; i += 65536) p.write(line.slice(i, i + 65536));
    expect((await p.response("big")).success).toBe(true);
    p.send({ id: "after-big", type: "get_state" });
    const s = await p.response("after-big");
    expect(s.data.sessionName.length).toBe(big.length);
    expect(s.data.sessionName.endsWith("END\u2028X")).toBe(true);
  });

  it("an unterminated last line is processed when stdin ends, then the process exits 0", async () => {
    const p = rpc();
    p.write('{"id":"one","type":"get_state"}\n');
    p.end('{"id":"last","type":"get_state"}');
    const closed = await p.closed;
    expect(closed.code).toBe(0);
    expect(p.records.find((r) => r.id === "one")?.success).toBe(true);
    expect(p.records.find((r) => r.id === "last")?.success).toBe(true);
  });

  it("1,000 random malformed lines are each answered, and the process keeps serving", async () => {
    const p = rpc();
    const random = rng(7);
    const pick = <T>(a: readonly T[]) => a[Math.floor(random() * a.length)]!;
    const garbageChars = ['{', '}', '[', ']', '"', ':', ',', 'a', '1', ' ', '\\', 'é', '\u2028', 'null', 'tru', '\t', '\r'];
    const lines: string[] = [];
    let withId = 0;
    for (let i = 0; i < 1000; i++) {
      const kind = i % 5;
      let line: string;
      if (kind === 0) {
        // Not JSON at all.
        line = "";
        const n = 1 + Math.floor(random() * 40);
        for (let k = 0; k < n; k++) line += pick(garbageChars);
        line = "#" + line; // never accidentally valid JSON, never empty
      } else if (kind === 1) {
        // Truncated JSON of a real command.
        const full = JSON.stringify({ id: `m${i}`, type: "prompt", message: "hello" });
        line = full.slice(0, 1 + Math.floor(random() * (full.length - 2)));
      } else if (kind === 2) {
        // JSON that is not an object.
        line = JSON.stringify(pick([42, "text", null, [1, 2], true, 3.5]));
      } else if (kind === 3) {
        // Unknown command, with an id.
        line = JSON.stringify({ id: `m${i}`, type: pick(["nope", "PROMPT", "get-state", ""]) });
        withId++;
      } else {
        // A known command with a missing or wrongly typed field, with an id.
        line = JSON.stringify(
          pick([
            { id: `m${i}`, type: "prompt" },
            { id: `m${i}`, type: "prompt", message: 5 },
            { id: `m${i}`, type: "set_model", provider: "mock" },
            { id: `m${i}`, type: "set_thinking_level", level: "maximum" }, // ("max" is a level since pi 1.6)
            { id: `m${i}`, type: "bash", command: ["ls"] },
            { id: `m${i}`, type: "steer", message: "x", images: [{ type: "image" }] },
            { id: `m${i}`, type: "fork" },
          ]),
        );
        withId++;
      }
      lines.push(line);
    }
    // Some lines end in CRLF, all are sent in a few large writes.
    const text = lines.map((l, i) => l + (i % 7 === 0 ? "\r\n" : "\n")).join("");
    for (let i = 0; i < text.length; i += 20000) p.write(text.slice(i, i + 20000));
    p.send({ id: "alive", type: "get_state" });
    const alive = await p.response("alive");
    expect(alive.success).toBe(true);
    const errors = p.records.filter((r) => r.type === "response" && r.success === false);
    expect(errors).toHaveLength(1000);
    // Each answered error echoes its line's id, when the line had one, and names a command.
    const echoed = errors.filter((r) => typeof r.id === "string" && r.id.startsWith("m"));
    expect(echoed).toHaveLength(withId);
    for (const r of errors) {
      expect(typeof r.command).toBe("string");
      expect(typeof r.error).toBe("string");
    }
    const parseErrors = errors.filter((r) => r.command === "parse");
    expect(parseErrors.length).toBeGreaterThanOrEqual(400); // kinds 0 and 1
    for (const r of parseErrors) expect(r.id).toBeUndefined();
    // Field-level errors name the field.
    expect(errors.find((r) => r.id && r.command === "set_model")?.error).toMatch(/"modelId"/);
    // And it still works.
    p.send({ id: "prompt-after", type: "prompt", message: "still there?" });
    expect((await p.response("prompt-after")).data).toEqual({ disposition: "started" });
    await p.waitFor((r) => r.type === "agent_settled", "agent_settled");
  });

  it("prompt: the response precedes agent_start; a busy prompt without streamingBehavior is refused with its id", async () => {
    // The answer waits at a gate after its first chunk: the agent is busy until the abort.
    server.setScript({ default: { text: "slow ", repeat: 200, gate: "busy" } });
    const p = rpc();
    p.send({ id: "p1", type: "prompt", message: "go" });
    await p.waitFor((r) => r.type === "agent_start", "agent_start");
    const iResponse = p.records.findIndex((r) => r.id === "p1");
    const iStart = p.records.findIndex((r) => r.type === "agent_start");
    expect(iResponse).toBeGreaterThanOrEqual(0);
    expect(iResponse).toBeLessThan(iStart);
    p.send({ id: "p2", type: "prompt", message: "again" });
    const refused = await p.response("p2");
    expect(refused).toMatchObject({ type: "response", command: "prompt", success: false, id: "p2" });
    expect(refused.error).toMatch(/busy/);
    p.send({ id: "stop", type: "abort" });
    await p.response("stop");
    // Exactly one response for p1.
    expect(p.records.filter((r) => r.id === "p1")).toHaveLength(1);
    server.setScript({ default: { text: "ok" } });
  });
});

describe("RPC command line", () => {
  it("pi rpc-schema prints the JSON Schema of commands, responses and events", async () => {
    const r = await runCli(["rpc-schema"], e);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout);
    expect(schema.$schema).toMatch(/json-schema\.org/);
    expect(schema.$defs.commands.prompt.required).toEqual(expect.arrayContaining(["type", "message"]));
    expect(schema.$defs.responses.prompt.properties.data.properties.disposition.anyOf.map((x: any) => x.const)).toEqual(["started", "queued", "handled"]);
    expect(Object.keys(schema.$defs.events)).toEqual(expect.arrayContaining(["agent_settled", "message_update", "extension_error"]));
  });

  it("@file arguments are refused in RPC mode", async () => {
    const r = await runCli(["--mode", "rpc", "@notes.txt"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/@file arguments cannot be used with --mode rpc/);
    expect(r.stdout).toBe("");
  });

  it("SIGTERM exits 143 and SIGHUP 129", async () => {
    for (const [sig, code] of [
      ["SIGTERM", 143],
      ["SIGHUP", 129],
    ] as const) {
      const p = rpc();
      p.send({ id: "ready", type: "get_state" });
      await p.response("ready");
      p.child.kill(sig);
      expect((await p.closed).code).toBe(code);
    }
  });
});
