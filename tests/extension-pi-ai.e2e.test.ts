/**
 * End to end: `@earendil-works/pi-ai` and `@mariozechner/pi-ai` are both the real pi-ai 1.6 for
 * extensions, the library the host streams with too. A 1.6 extension (tests/fixtures/extensions/uses-pi-ai.ts)
 * registers tools with a pi-schema schema and a TypeBox/StringEnum schema, and calls pi-ai 1.6's
 * complete() and stream() on ctx.model; a 0.73.1 extension (old-scope.ts) calls complete() from
 * its old-scope import on ctx.model. Both in `pi -p` against the scripted server.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

const PI16 = resolve("tests/fixtures/extensions/uses-pi-ai.ts");
const OLD = resolve("tests/fixtures/extensions/old-scope.ts");

let server: LlmServer;
let e: E2eEnv;
let outFile: string;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  e = makeE2eEnv(server.url);
  outFile = join(e.root, "out.jsonl");
  server.reset();
});
afterEach(() => e.cleanup());

const records = () => (existsSync(outFile) ? readFileSync(outFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
const one = (kind: string) => records().find((r) => r.kind === kind);
const chats = () => server.stats().requests.filter((q) => q.method === "POST");

describe("pi-ai for extensions", () => {
  it("a 1.6 extension gets the real pi-ai 1.6: pi-schema and StringEnum tool schemas validate, complete()/stream() on ctx.model reach the provider", async () => {
    server.setScript({
      turns: [
        { match: "SIDEQ again", text: "second aside" },
        { match: "SIDEQ", text: "first aside" },
        {
          toolCalls: [
            { name: "shout", arguments: { text: "hey", times: 2 } },
            { name: "paint", arguments: { color: "green" } },
            { name: "ask_side", arguments: { question: "SIDEQ" } },
          ],
        },
      ],
      default: { text: "all done" },
    });
    const r = await runCli(["--no-session", "--mode", "json", "-e", PI16, "go"], e, { env: { PI_AI_OUT: outFile } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);

    expect(one("load").version).toMatch(/^1\.6\./);
    expect(one("load").catalogApi).toBe("anthropic-messages");

    const results = Object.fromEntries(jsonLines(r.stdout).filter((x) => x.type === "tool_execution_end").map((x) => [x.toolName, x]));
    expect(results.shout.result.content[0].text).toBe("HEY HEY");
    expect(results.shout.isError).toBe(false);
    // StringEnum's enum is enforced by the host's validator: "green" is not allowed
    expect(results.paint.isError).toBe(true);
    expect(results.paint.result.content[0].text).toMatch(/color/);
    expect(results.ask_side.result.content[0].text).toBe("aside: first aside / second aside");

    const side = one("side");
    expect(side).toMatchObject({ provider: "mock", model: "mock-model", stopReason: "stop", text: "first aside", text2: "second aside" });
    expect(side.events).toEqual(["start", "done"]);
    const sideReqs = chats().filter((q) => JSON.stringify(q.body.messages).includes("SIDEQ") && q.body.messages.length === 1);
    expect(sideReqs).toHaveLength(2);
    // sent by pi-ai 1.6's own provider code, as the host's own requests are
    expect(String(sideReqs[0]!.headers["user-agent"])).toMatch(/^pi\/1\.6\./);
    expect(String(chats()[0]!.headers["user-agent"])).toMatch(/^pi\/1\.6\./);
    // the model saw the tool's pi-schema parameters as JSON Schema
    const tool = chats()[0]!.body.tools.find((t: any) => t.function.name === "shout");
    expect(tool.function.parameters).toMatchObject({ type: "object", required: ["text"], properties: { text: { type: "string" }, times: { type: "integer" } } });
    expect(r.stdout).toContain("all done");
  });

  it("a 0.73.1 extension's `@mariozechner/pi-ai` is pi-ai 1.6's compat API: its complete() on ctx.model", async () => {
    server.setScript({
      turns: [{ match: "OLDQ", text: "old aside" }, { toolCalls: [{ name: "old_ask", arguments: { q: "OLDQ" } }] }, { text: "finished" }],
    });
    const r = await runCli(["--no-session", "-p", "-e", OLD, "go"], e, { env: { OLD_SCOPE_OUT: outFile } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("finished\n");
    const rec = one("old");
    expect(rec.hasGetModel).toBe(true);
    expect(rec.text).toBe("old aside");
    expect(rec.sameTypebox).toBe(true);
    const oldReq = chats().find((q) => JSON.stringify(q.body.messages).includes("OLDQ") && q.body.messages.length === 1);
    expect(String(oldReq?.headers["user-agent"])).toMatch(/^pi\/1\.6\./);
  });
});
