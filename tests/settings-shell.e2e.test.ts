/**
 * Settings as pi 1.6 reads them, through the real CLI against the scripted server: defaultTools []
 * means no built-in tools, a project's +/- entries apply to the user's list, compaction.modelOverrides,
 * images.autoResize for @image arguments, and ${N:-default} in prompt templates.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
});
afterAll(async () => {
  await server.close();
});

function withEnv(settings: Record<string, unknown>, project?: Record<string, unknown>): E2eEnv {
  const e = makeE2eEnv(server.url, { settings });
  if (project) {
    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify(project));
  }
  return e;
}

const toolNames = (req: any): string[] => (req.body.tools ?? []).map((t: any) => t.function?.name ?? t.name).sort();

/** A grey RGB PNG of the given size. */
function png(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 128)]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

describe("defaultTools", () => {
  it("[] means no built-in tools (extension tools stay)", async () => {
    const e = withEnv({ defaultTools: [] });
    try {
      writeFileSync(join(e.cwd, "tool.ts"), `export default function (pi) { pi.registerTool({ name: "ext_tool", label: "x", description: "x", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [{ type: "text", text: "x" }] }) }); }\n`);
      server.reset();
      const r = await runCli(["-e", "./tool.ts", "--no-session", "-p", "hi"], e);
      expect(r.code).toBe(0);
      expect(toolNames(server.stats().requests[0])).toEqual(["ext_tool"]);
    } finally {
      e.cleanup();
    }
  });

  it("a trusted project's +/- entries change the user's list; a plain project list replaces it; untrusted, neither applies", async () => {
    const delta = withEnv({ defaultTools: ["read", "grep"] }, { defaultTools: ["-grep", "+ls"] });
    const plain = withEnv({ defaultTools: ["read", "grep"] }, { defaultTools: ["bash"] });
    try {
      server.reset();
      expect((await runCli(["--no-session", "--trust", "-p", "hi"], delta)).code).toBe(0);
      expect(toolNames(server.stats().requests[0])).toEqual(["ls", "read"]);
      server.reset();
      expect((await runCli(["--no-session", "--trust", "-p", "hi"], plain)).code).toBe(0);
      expect(toolNames(server.stats().requests[0])).toEqual(["bash"]);
      // An untrusted project's tool choice is ignored: the user's list stays.
      server.reset();
      expect((await runCli(["--no-session", "-p", "hi"], plain)).code).toBe(0);
      expect(toolNames(server.stats().requests[0])).toEqual(["grep", "read"]);
    } finally {
      delta.cleanup();
      plain.cleanup();
    }
  });
});

describe("compaction.modelOverrides", () => {
  it("the current model's keepRecentTokens decides what compaction keeps", async () => {
    // Ordinary keepRecentTokens keeps everything (nothing to compact); the model's override keeps little.
    const e = withEnv({ compaction: { enabled: false, reserveTokens: 2000, keepRecentTokens: 1_000_000, modelOverrides: { "mock/mock-model": { keepRecentTokens: 10 } } } });
    const other = withEnv({ compaction: { enabled: false, reserveTokens: 2000, keepRecentTokens: 1_000_000, modelOverrides: { "mock/another-model": { keepRecentTokens: 10 } } } });
    try {
      for (const [env, compacts] of [[e, true], [other, false]] as const) {
        server.setScript({ turns: [{ match: "<conversation>", text: "SUMMARY" }], default: { text: "a reply with a handful of words in it for the history" } });
        const client = new RpcClient({ cliPath: CLI, cwd: env.cwd, env: env.env, args: ["--no-session"] });
        await client.start();
        try {
          await client.promptAndWait("first question here");
          await client.promptAndWait("second question here");
          if (compacts) expect(((await client.compact()) as { summary: string }).summary).toContain("SUMMARY");
          else await expect(client.compact()).rejects.toThrow(/Nothing to compact/);
        } finally {
          await client.stop();
        }
      }
    } finally {
      e.cleanup();
      other.cleanup();
    }
  });
});

describe("images.autoResize for @image arguments", () => {
  it("a 2400 px wide image is sent at most 2000 px wide with a dimension note; autoResize false sends it as it is", async () => {
    const on = withEnv({});
    const off = withEnv({ images: { autoResize: false } });
    try {
      for (const e of [on, off]) writeFileSync(join(e.cwd, "wide.png"), png(2400, 60));
      server.reset();
      expect((await runCli(["--no-session", "-p", "@wide.png", "what is it"], on)).code).toBe(0);
      const sent = JSON.stringify(server.stats().requests[0]!.body.messages);
      expect(sent).toContain("original 2400x60, displayed at 2000x50");
      server.reset();
      expect((await runCli(["--no-session", "-p", "@wide.png", "what is it"], off)).code).toBe(0);
      const raw = JSON.stringify(server.stats().requests[0]!.body.messages);
      expect(raw).not.toContain("displayed at");
      expect(raw).toContain(png(2400, 60).toString("base64").slice(0, 200));
    } finally {
      on.cleanup();
      off.cleanup();
    }
  });
});

describe("prompt templates", () => {
  it("${N:-default} and ${@:-default} take the default when the argument is missing", async () => {
    const e = withEnv({});
    try {
      mkdirSync(join(e.cwd, ".pi", "prompts"), { recursive: true });
      writeFileSync(join(e.cwd, ".pi", "prompts", "review.md"), "Review $1 focusing on ${2:-correctness and safety}; all: ${@:-nothing given}.\n");
      server.reset();
      expect((await runCli(["--no-session", "-p", "/review parser.ts"], e)).code).toBe(0);
      expect(JSON.stringify(server.stats().requests[0]!.body.messages)).toContain("Review parser.ts focusing on correctness and safety; all: parser.ts.");
      server.reset();
      expect((await runCli(["--no-session", "-p", "/review a.ts speed"], e)).code).toBe(0);
      expect(JSON.stringify(server.stats().requests[0]!.body.messages)).toContain("Review a.ts focusing on speed; all: a.ts speed.");
    } finally {
      e.cleanup();
    }
  });
});
