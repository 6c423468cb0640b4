/**
 * End to end: ctx.modelRegistry.complete() / stream() reach any model of the registry, here a
 * built-in provider's model whose baseUrl and key are overridden in models.json (pi 1.6's
 * custom-compaction and summarize examples take this path).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "a summary" } } });
  e = makeE2eEnv(server.url);
  const models = JSON.parse(readFileSync(join(e.agentDir, "models.json"), "utf8"));
  models.providers.openai = { baseUrl: `${server.url}/v1`, apiKey: "OVERRIDE_KEY_789" };
  writeFileSync(join(e.agentDir, "models.json"), JSON.stringify(models));
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

describe("ctx.modelRegistry requests", () => {
  it("complete() and stream() reach a built-in model overridden in models.json", async () => {
    const out = join(e.root, "complete.json");
    const r = await runCli(["--no-session", "-e", resolve("tests/fixtures/api-shapes/registry-complete.ts"), "-p", "hi"], e, { env: { COMPLETE_MODEL: "openai/gpt-4o-mini", COMPLETE_OUT: out } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ baseUrl: `${server.url}/v1`, completed: "a summary", stopReason: "stop", streamed: "a summary" });
    const reqs = server.stats().requests.filter((q: any) => q.body?.model === "gpt-4o-mini");
    expect(reqs.length).toBe(2);
    // (the server does not record credentials; without a key the provider would refuse before sending)
    expect(reqs.map((q: any) => q.path)).toEqual(["/v1/responses", "/v1/responses"]); // the built-in model's API
  });
});
