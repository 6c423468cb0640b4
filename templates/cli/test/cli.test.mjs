// Runs the real CLI (bin/cli.js) against the scripted faux model: no API key, no network.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createExtensionHarness } from "{{HOST_NAME}}";
import teamExtension from "../src/extension.js";

const bin = fileURLToPath(new URL("../bin/cli.js", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const envVar = `${"{{NAME}}".toUpperCase().replace(/[^A-Z0-9]/g, "_")}_CODING_AGENT_DIR`;

function run(args, opts = {}) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 30000, ...opts });
}

test("--version answers with the package version", () => {
  const r = run(["--version"]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${pkg.version}\n`);
});

test("a run uses .{{NAME}}/ in the project, the agent dir from the environment, and the built-in extension", () => {
  const root = mkdtempSync(join(tmpdir(), "{{NAME}}-test-"));
  try {
    const agentDir = join(root, "agent");
    const project = join(root, "project");
    mkdirSync(join(project, ".{{NAME}}"), { recursive: true });
    // The project's settings pick the scripted faux model; a project's model choice applies once
    // the project is trusted (listed in the global settings of this CLI's agent dir).
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ trustedProjects: [project] }));
    writeFileSync(join(project, ".{{NAME}}", "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
    const script = join(root, "script.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "team_info", arguments: {} }] }, "It is {{NAME}}."]));
    const r = run(["--mode", "json", "which agent is this?"], {
      cwd: project,
      env: { ...process.env, [envVar]: agentDir, PI_FAUX_SCRIPT: script },
    });
    assert.equal(r.status, 0, r.stderr);
    const events = r.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const toolEnd = events.find((e) => e.type === "tool_execution_end");
    assert.equal(toolEnd.toolName, "team_info");
    assert.equal(toolEnd.result.content[0].text, "This is {{NAME}}; project settings live in .{{NAME}}/");
    const end = events.findLast((e) => e.type === "message_end");
    assert.equal(end.message.content.at(-1).text, "It is {{NAME}}.");
    // The session was saved in this CLI's agent dir.
    assert.ok(existsSync(join(agentDir, "sessions")));
    assert.equal(readdirSync(join(agentDir, "sessions")).length, 1);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the extension on its own: /team notifies through the UI", async () => {
  const notes = [];
  const h = await createExtensionHarness({ extensions: [teamExtension], ui: { kind: "rpc", notify: (m) => notes.push(m) } });
  try {
    await h.prompt("/team");
    assert.deepEqual(notes, ["You are using {{NAME}}"]);
    assert.deepEqual(h.diagnostics.filter((d) => d.level === "error"), []);
  } finally {
    await h.dispose();
  }
});
