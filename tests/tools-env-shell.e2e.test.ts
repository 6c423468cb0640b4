/**
 * What shell commands see, through the real CLI against the scripted server: the bash tool's
 * commands get the session as PI_SESSION_ID, PI_SESSION_FILE, PI_PROVIDER, PI_MODEL,
 * PI_REASONING_LEVEL and the process markers AI_AGENT=pi, PI_CODING_AGENT=true; an RPC `bash`
 * reaches the next prompt as "Ran `command`" with the output fenced (pi's documented form).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

const toolText = (req: any): string => JSON.stringify(req.body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content));

describe("the bash tool's environment", () => {
  it("commands see the session, the model, the reasoning level and the process markers", async () => {
    const cmd = 'printf "id=%s file=%s model=%s/%s level=%s agent=%s pi=%s\\n" "$PI_SESSION_ID" "$PI_SESSION_FILE" "$PI_PROVIDER" "$PI_MODEL" "$PI_REASONING_LEVEL" "$AI_AGENT" "$PI_CODING_AGENT"';
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: cmd } }] }, { text: "done" }] });
    server.reset();
    const r = await runCli(["--mode", "json", "--thinking", "low", "show env"], e, { env: { AI_AGENT: "", PI_SESSION_ID: "stale-from-parent" } });
    expect(r.code).toBe(0);
    const header = JSON.parse(r.stdout.split("\n")[0]!);
    const seen = toolText(server.stats().requests[1]);
    expect(seen).toContain(`id=${header.id} `);
    expect(seen).toMatch(/file=\/[^ ]*\.jsonl /);
    expect(seen).toContain("model=mock/mock-model ");
    expect(seen).toMatch(/level=(low|off) /);
    expect(seen).toContain("agent=pi pi=true");
  });
});

describe("rpc bash output in the next prompt", () => {
  it("reaches the model as Ran `command` with the output fenced; excludeFromContext keeps it out", async () => {
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, args: ["--no-session"] });
    await client.start();
    try {
      const r = await client.bash("echo visible-output");
      expect(r.output).toBe("visible-output\n");
      await client.bash("echo hidden-output", { excludeFromContext: true });
      server.setScript({ default: { text: "noted" } });
      server.reset();
      await client.promptAndWait("what did I run?");
      const body = JSON.stringify(server.stats().requests[0]!.body.messages);
      expect(body).toContain(JSON.stringify("Ran `echo visible-output`\n```\nvisible-output\n\n```").slice(1, -1));
      expect(body).not.toContain("hidden-output");
    } finally {
      await client.stop();
    }
  });
});
