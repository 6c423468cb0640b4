#!/usr/bin/env node
/**
 * `npm run demo`: the real CLI doing real tool calls in a scratch project.
 *
 * Offline by default: a bundled scripted model server (tests/fixtures/llm-server.mjs) plays the
 * model, over the OpenAI Chat Completions wire format on 127.0.0.1. When ANTHROPIC_API_KEY or
 * OPENAI_API_KEY is set, the same task runs against that real model instead.
 *
 *   npm run demo             `pi --mode json` shown as a readable log, then what to try next
 *   npm run demo -- --tui    the interactive TUI (needs a terminal) on the same scripted model,
 *                            starting with the same task; type more, /quit (or Ctrl+C twice) to leave
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLlmServer } from "../fixtures/llm-server.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLI = join(ROOT, "dist", "bundle", "cli.js");
const real = process.env.ANTHROPIC_API_KEY || process.env.OPENAI_API_KEY;
const tui = process.argv.includes("--tui");

const TASK =
  "Create hello.js that prints the numbers 1 to 5 squared, one per line, run it with node, and tell me what it printed.";

/** The scripted model knows the demo task (a prompt naming hello.js); anything else gets a hint. */
const script = {
  turnBy: "toolResults",
  turns: [
    {
      match: "hello.js",
      turns: [
        { text: "I'll look at the project first.", toolCalls: [{ name: "bash", arguments: { command: "ls -la" } }] },
        {
          text: "The folder is empty apart from the README. Writing the script.",
          toolCalls: [{ name: "write", arguments: { path: "hello.js", content: "for (let i = 1; i <= 5; i++) console.log(i * i);\n" } }],
        },
        { text: "Now running it.", toolCalls: [{ name: "bash", arguments: { command: "node hello.js" } }] },
        { text: "Let me double-check the file.", toolCalls: [{ name: "read", arguments: { path: "hello.js" } }] },
        { text: "Done. `hello.js` prints the squares of 1 to 5:\n\n1\n4\n9\n16\n25\n\nIt is a single loop from 1 to 5 that logs `i * i`.", delayMs: 2 },
      ],
    },
  ],
  default: {
    text: "I am the demo's scripted model: I only know one task (any prompt that mentions hello.js). For real answers, leave with /quit and start pi with ANTHROPIC_API_KEY or OPENAI_API_KEY set.",
  },
};

const c = (code, s) => (process.stdout.isTTY ? `\x1b[${code}m${s}\x1b[0m` : s);
const short = (s, n = 100) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

async function main() {
  if (tui && !(process.stdin.isTTY && process.stdout.isTTY)) {
    console.error("npm run demo -- --tui: the TUI needs a terminal (stdin and stdout a TTY); run it in one");
    process.exitCode = 1;
    return;
  }
  const root = mkdtempSync(join(tmpdir(), "pi-demo-"));
  const project = join(root, "project");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "README.md"), "# demo project\n");
  let server;
  const env = { ...process.env };
  const args = tui ? [] : ["--mode", "json"];
  if (!real) {
    server = await startLlmServer({ script });
    const agentDir = join(root, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          "demo-scripted": {
            baseUrl: `${server.url}/v1`,
            api: "openai-completions",
            apiKey: "demo-key",
            models: [{ id: "scripted-model", name: "Scripted demo model", contextWindow: 128000, maxTokens: 4096 }],
          },
        },
      }),
    );
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "demo-scripted", defaultModel: "scripted-model" }));
    env.PI_CODING_AGENT_DIR = agentDir;
    console.log(c("2", `offline demo: scripted model server at ${server.url} (set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real model)`));
  } else {
    console.log(c("2", "using your API key with the default model"));
  }
  console.log(c("2", `scratch project: ${project}`));
  if (tui) {
    // The TUI owns the terminal until the user leaves it; it starts on the demo task.
    const child = spawn(process.execPath, [CLI, TASK], { cwd: project, env, stdio: "inherit" });
    const code = await new Promise((r) => child.on("close", r));
    await server?.close();
    rmSync(root, { recursive: true, force: true });
    process.exitCode = code ?? 0;
    return;
  }
  console.log(c("1", `\n> ${TASK}\n`));

  const child = spawn(process.execPath, [CLI, ...args, TASK], { cwd: project, env, stdio: ["ignore", "pipe", "inherit"] });
  let buf = "";
  let streaming = false;
  let finalText = "";
  child.stdout.on("data", (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line) continue;
      const ev = JSON.parse(line);
      if (ev.type === "message_update" && ev.assistantMessageEvent.type === "text_delta") {
        if (!streaming) process.stdout.write(c("36", "assistant: "));
        streaming = true;
        process.stdout.write(ev.assistantMessageEvent.delta);
      } else if (ev.type === "message_end" && ev.message.role === "assistant") {
        if (streaming) process.stdout.write("\n");
        streaming = false;
        finalText = ev.message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
        if (ev.message.stopReason === "error") console.log(c("31", `error: ${ev.message.errorMessage}`));
      } else if (ev.type === "tool_execution_start") {
        console.log(c("33", `  ⚙ ${ev.toolName} ${short(JSON.stringify(ev.args))}`));
      } else if (ev.type === "tool_execution_end") {
        const text = (ev.result.content || []).filter((b) => b.type === "text").map((b) => b.text).join("").trim();
        console.log(c(ev.isError ? "31" : "32", `  ${ev.isError ? "✗" : "✓"} ${short(text.split("\n").join(" ⏎ "), 110)}`));
      } else if (ev.type === "auto_retry_start") {
        console.log(c("35", `  retrying (attempt ${ev.attempt}) after: ${ev.errorMessage}`));
      }
    }
  });
  const code = await new Promise((r) => child.on("close", r));
  console.log(c("2", `\nexit code ${code}; files in the project now: ${readdirSync(project).join(", ")}`));
  if (readdirSync(project).includes("hello.js")) console.log(c("2", "hello.js:\n") + readFileSync(join(project, "hello.js"), "utf8"));
  await server?.close();
  rmSync(root, { recursive: true, force: true });
  process.exitCode = code === 0 && finalText ? 0 : 1;
  if (process.exitCode === 0) console.log(whatNext());
}

/** The closing note: the TUI on the same model, a real key, pi on the PATH, the other shells. */
function whatNext() {
  const pi = "node dist/bundle/cli.js";
  return [
    "",
    c("1", "What to try next"),
    `  The interactive TUI on the same scripted model, starting with the same task:`,
    `      ${c("36", "npm run demo -- --tui")}          (type more prompts; /quit or Ctrl+C twice leaves)`,
    `  Your own model: set a key and start the TUI in your project:`,
    `      ${c("36", `export ANTHROPIC_API_KEY=…   # or OPENAI_API_KEY=…`)}`,
    `      ${c("36", pi)}`,
    `  One answer on stdout:  ${c("36", `${pi} -p "what does this project do?"`)}`,
    `  Events for scripts:    ${c("36", `${pi} --mode json "…"`)}   a program driving it: ${c("36", "--mode rpc")}   an editor: ${c("36", "--mode acp")}`,
    `  pi on your PATH:       ${c("36", "npm pack && npm install -g ./pi-kernel-*.tgz")}   (README.md, "Install")`,
  ].join("\n");
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
