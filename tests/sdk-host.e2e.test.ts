/**
 * A Node host written against pi 1.6's SDK names (tests/fixtures/sdk-host/host.mjs) imports
 * the built package (dist/bundle/index.js) and runs one prompt against the scripted LLM server
 * with a throwaway agent dir: DefaultResourceLoader finds the project's and agent dir's resources
 * and extensions, ModelRuntime holds a runtime key (models.json has none), resolveCliModel picks
 * "mock/mock-model:low", createAgentSession runs on both and the host prints the answer.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";

const ENTRY = join(ROOT, "dist", "bundle", "index.js");
const HOST = join(ROOT, "tests", "fixtures", "sdk-host", "host.mjs");

let llm: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  llm = await startLlmServer({ script: { default: { text: "The answer is 42." } } });
  e = makeE2eEnv(llm.url);
  // No key in models.json: the host's ModelRuntime.setRuntimeApiKey() is what makes the model usable.
  const model = { id: "mock-model", name: "mock-model", reasoning: true, input: ["text"], contextWindow: 128000, maxTokens: 4096 };
  writeFileSync(join(e.agentDir, "models.json"), JSON.stringify({ providers: { mock: { baseUrl: `${llm.url}/v1`, api: "openai-completions", models: [model] } } }));
  mkdirSync(join(e.agentDir, "skills", "deploy"), { recursive: true });
  writeFileSync(join(e.agentDir, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Ships the build\n---\nSteps.\n");
  mkdirSync(join(e.cwd, ".pi", "prompts"), { recursive: true });
  writeFileSync(join(e.cwd, ".pi", "prompts", "review.md"), "---\ndescription: Review code\n---\nReview $1\n");
  writeFileSync(join(e.cwd, "AGENTS.md"), "Project rule: be brief.\n");
  mkdirSync(join(e.agentDir, "extensions"), { recursive: true });
  writeFileSync(
    join(e.agentDir, "extensions", "greet.ts"),
    `import { Type } from "@earendil-works/pi-coding-agent";
export default function (pi: any) {
  pi.registerTool({ name: "greet", label: "Greet", description: "Greets someone", parameters: Type.Object({ name: Type.String() }),
    execute: async (_id: string, p: any) => ({ content: [{ type: "text", text: "Hi " + p.name }], details: {} }) });
  pi.registerCommand("hello", { handler: async () => {} });
}
`,
  );
});
afterAll(async () => {
  await llm?.close();
  e?.cleanup();
});

function runHost(prompt: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HOST, ENTRY, prompt], { cwd: e.cwd, env: e.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 170_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("a Node host on pi 1.6's SDK names", () => {
  it("loads resources and extensions, resolves the model with a runtime key, and prints the streamed answer", async () => {
    const r = await runHost("What is the answer?");
    expect(r.stderr).not.toMatch(/error|failed/i);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    expect(out.answer).toBe("The answer is 42.");
    expect(out.model).toBe("mock/mock-model");
    expect(out.thinkingLevel).toBe("low");
    expect(out.skills).toEqual(["deploy"]);
    expect(out.prompts).toEqual(["review"]);
    expect(out.agentsFiles).toEqual(["Project rule: be brief."]);
    expect(out.extensions).toEqual(["greet", "hello"]);
    expect(out.extensionErrors).toEqual([]);
    // the inline factory of the loader ran in the session (once), and the host saw the run end
    expect(out.seen).toEqual(["inline:agent_start", "host:agent_end"]);
    expect(out.activeTools).toContain("greet");
    // the loader decided the system prompt: its override, the context file and the skill
    expect(out.systemPrompt).toContain("HOST-APPENDED: answer briefly.");
    expect(out.systemPrompt).toContain("Project rule: be brief.");
    expect(out.systemPrompt).toContain("<name>deploy</name>");

    const asks = llm.stats().requests.filter((q) => q.method === "POST");
    expect(asks).toHaveLength(1);
    expect(asks[0]!.body.model).toBe("mock-model");
    expect(asks[0]!.body.reasoning_effort).toBe("low");
    const system = JSON.stringify(asks[0]!.body.messages[0]);
    expect(system).toContain("HOST-APPENDED: answer briefly.");
    expect(JSON.stringify(asks[0]!.body.tools ?? [])).toContain("greet");
  }, 180_000);
});
