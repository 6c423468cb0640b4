/**
 * End to end: the scripted model changes a project with write, edit and bash through the real
 * CLI; `/rewind` (print mode with arguments) brings the files back exactly — an untracked new
 * file removed, an edit undone, a rename and a deletion reversed, an exec bit restored — keeps
 * a file edited outside the agent, and is itself undone. With the project's own git repository,
 * its .git folder is byte-identical before and after.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { requireProgram } from "./helpers/system.js";

let server: LlmServer;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});

/** A hash of every file (path, mode, bytes) under `dir`. */
function hashTree(dir: string): string {
  const h = createHash("sha256");
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      h.update(`${p.slice(dir.length)}\0${st.mode}\0`);
      if (st.isDirectory()) walk(p);
      else h.update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest("hex");
}

function setupProject(e: E2eEnv, withGit: boolean): void {
  writeFileSync(join(e.cwd, "a.txt"), "one\n");
  writeFileSync(join(e.cwd, "old.txt"), "old content\n");
  writeFileSync(join(e.cwd, "gone.txt"), "to be deleted\n");
  writeFileSync(join(e.cwd, "tool.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(join(e.cwd, "tool.sh"), 0o755);
  writeFileSync(join(e.cwd, ".gitignore"), "ignored/\n");
  mkdirSync(join(e.cwd, "ignored"));
  writeFileSync(join(e.cwd, "ignored", "cache.txt"), "v1\n");
  writeFileSync(join(e.cwd, "big.bin"), Buffer.alloc(5000, 7));
  if (withGit) {
    const git = (...a: string[]) => execFileSync("git", a, { cwd: e.cwd, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "initial");
    writeFileSync(join(e.cwd, "a.txt"), "one\n"); // a clean work tree, staged state untouched afterwards
  }
}

const SCRIPT = {
  turns: [
    { toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "brand new\n" } }] },
    { toolCalls: [{ name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "one", newText: "two" }] } }] },
    { toolCalls: [{ name: "bash", arguments: { command: "mv old.txt renamed.txt && rm gone.txt && chmod 644 tool.sh && echo v2 > ignored/cache.txt && head -c 6000 /dev/zero > big.bin" } }] },
    { text: "changed" },
  ],
};

async function scenario(withGit: boolean) {
  server.setScript(SCRIPT);
  const e = makeE2eEnv(server.url, { settings: { checkpoints: { maxFileSizeBytes: 4000 } } });
  try {
    setupProject(e, withGit);
    const gitBefore = withGit ? hashTree(join(e.cwd, ".git")) : "";
    const r1 = await runCli(["-p", "--tools", "read,bash,edit,write", "change the files"], e);
    expect(r1.stderr).not.toMatch(/checkpoints/);
    expect(r1.code).toBe(0);
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("two\n");
    expect(existsSync(join(e.cwd, "new.txt"))).toBe(true);
    expect(existsSync(join(e.cwd, "gone.txt"))).toBe(false);
    expect(statSync(join(e.cwd, "tool.sh")).mode & 0o777).toBe(0o644);
    // the store lives under the agent dir, not in the project
    expect(readdirSync(join(e.agentDir, "checkpoints")).length).toBe(1);

    // an edit outside the agent, after its last checkpoint
    writeFileSync(join(e.cwd, "renamed.txt"), "my own edit\n");

    const list = await runCli(["-p", "-c", "/rewind list"], e);
    expect(list.stderr).toContain('1. ');
    expect(list.stderr).toContain('before "change the files"');

    const r2 = await runCli(["-p", "-c", "/rewind 1 code"], e);
    expect(r2.code).toBe(0);
    expect(r2.stderr).toContain("renamed.txt  (changed outside the agent)");
    expect(r2.stderr).toMatch(/kept 1 file\(s\) changed outside the agent: renamed\.txt/);
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(e.cwd, "new.txt"))).toBe(false);
    expect(readFileSync(join(e.cwd, "old.txt"), "utf8")).toBe("old content\n");
    expect(readFileSync(join(e.cwd, "gone.txt"), "utf8")).toBe("to be deleted\n");
    expect(statSync(join(e.cwd, "tool.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(e.cwd, "renamed.txt"), "utf8")).toBe("my own edit\n"); // kept
    // ignored and oversized files are not the checkpoints' business
    expect(readFileSync(join(e.cwd, "ignored", "cache.txt"), "utf8")).toBe("v2\n");
    expect(statSync(join(e.cwd, "big.bin")).size).toBe(6000);

    // the restore is undone like any point: the list now ends with the files before it
    const list2 = await runCli(["-p", "-c", "/rewind list"], e);
    expect(list2.stderr).toContain("2. ");
    expect(list2.stderr).toContain("(files before a restore)");
    const r3 = await runCli(["-p", "-c", "/rewind 2 code"], e);
    expect(r3.code).toBe(0);
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(join(e.cwd, "new.txt"), "utf8")).toBe("brand new\n");
    expect(existsSync(join(e.cwd, "old.txt"))).toBe(false);
    expect(existsSync(join(e.cwd, "gone.txt"))).toBe(false);
    expect(statSync(join(e.cwd, "tool.sh")).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(e.cwd, "renamed.txt"), "utf8")).toBe("my own edit\n");

    if (withGit) expect(hashTree(join(e.cwd, ".git"))).toBe(gitBefore);

    // the session file carries the checkpoints as custom entries pi 1.6 skips
    const sessions = join(e.agentDir, "sessions");
    const dir = join(sessions, readdirSync(sessions)[0]!);
    const lines = readFileSync(join(dir, readdirSync(dir)[0]!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const cps = lines.filter((l) => l.type === "custom" && l.customType === "checkpoint");
    expect(cps.map((c) => c.data.phase)).toEqual(expect.arrayContaining(["before", "after", "pre-restore", "restore"]));
  } finally {
    e.cleanup();
  }
}

describe("checkpoints end to end", () => {
  it("a project without its own git repository: write, edit and bash undone by /rewind, an outside edit kept, the restore undone", async () => {
    await scenario(false);
  }, 120_000);

  it("a project with its own git repository: the same, and its .git is byte-identical", async () => {
    await scenario(true);
  }, 120_000);
});

describe("checkpoints: off, or a store that cannot be written", () => {
  const EDIT_SCRIPT = { turns: [{ toolCalls: [{ name: "write", arguments: { path: "f.txt", content: "x\n" } }] }, { text: "written" }] };

  it("a store that cannot be written gives one warning and the turn goes on", async () => {
    server.setScript(EDIT_SCRIPT);
    const e = makeE2eEnv(server.url);
    try {
      writeFileSync(join(e.agentDir, "checkpoints"), "not a folder\n");
      const r = await runCli(["-p", "--tools", "write", "write it"], e);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("written");
      expect(readFileSync(join(e.cwd, "f.txt"), "utf8")).toBe("x\n");
      const warnings = r.stderr.split("\n").filter((l) => l.includes("were not captured"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/checkpoint store/);
    } finally {
      e.cleanup();
    }
  }, 60_000);

  it("checkpoints.enabled false captures nothing", async () => {
    server.setScript(EDIT_SCRIPT);
    const e = makeE2eEnv(server.url, { settings: { checkpoints: { enabled: false } } });
    try {
      const r = await runCli(["-p", "--tools", "write", "write it"], e);
      expect(r.code).toBe(0);
      expect(readFileSync(join(e.cwd, "f.txt"), "utf8")).toBe("x\n");
      expect(existsSync(join(e.agentDir, "checkpoints"))).toBe(false);
      const list = await runCli(["-p", "-c", "/rewind list"], e);
      expect(list.stderr).toContain("1. ");
      expect(list.stderr).toContain("(no file checkpoint)");
    } finally {
      e.cleanup();
    }
  }, 60_000);
});

describe("checkpoints: extensions hear about restores", () => {
  it("an extension refuses a restore on pi.events (nothing is written) and hears the one it lets through", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "write", arguments: { path: "f.txt", content: "agent\n" } }] }, { text: "written" }] });
    const e = makeE2eEnv(server.url);
    try {
      writeFileSync(join(e.cwd, "f.txt"), "mine\n");
      const ext = join(e.root, "veto.ts");
      writeFileSync(
        ext,
        `export default function (pi) {
  pi.events.on("checkpoints:before_restore", (ev) => { if (process.env.VETO) { ev.cancel = true; ev.reason = "frozen by policy"; } });
  pi.events.on("checkpoints:after_restore", (ev) => process.stderr.write("after_restore " + ev.restored.join(",") + "\\n"));
}
`,
      );
      expect((await runCli(["-p", "--tools", "write", "write it"], e)).code).toBe(0);
      expect(readFileSync(join(e.cwd, "f.txt"), "utf8")).toBe("agent\n");
      const refused = await runCli(["-p", "-c", "-e", ext, "/rewind 1 code"], e, { env: { VETO: "1" } });
      expect(refused.stderr).toContain("/rewind: the restore was refused by an extension: frozen by policy");
      expect(readFileSync(join(e.cwd, "f.txt"), "utf8")).toBe("agent\n");
      const allowed = await runCli(["-p", "-c", "-e", ext, "/rewind 1 code"], e);
      expect(allowed.stderr).toContain("after_restore f.txt");
      expect(readFileSync(join(e.cwd, "f.txt"), "utf8")).toBe("mine\n");
    } finally {
      e.cleanup();
    }
  }, 60_000);
});

describe("checkpoints with the OS sandbox", () => {
  requireProgram("bwrap", "bubblewrap");
  it("a sandboxed bash call is captured and restored, and cannot write into the store", async () => {
    const e = makeE2eEnv(server.url);
    try {
      writeFileSync(join(e.cwd, "a.txt"), "one\n");
      const store = join(e.agentDir, "checkpoints");
      server.setScript({
        turns: [
          { toolCalls: [{ name: "bash", arguments: { command: `echo two > a.txt; touch '${store}/tampered' 2>/dev/null && echo STORE-WRITABLE || echo STORE-READ-ONLY` } }] },
          { text: "done" },
        ],
      });
      const r = await runCli(["-p", "--sandbox", "workspace-write", "--tools", "bash", "change it"], e);
      expect(r.code).toBe(0);
      expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("two\n");
      const toolResult = JSON.stringify(server.stats().requests.at(-1)!.body.messages);
      expect(toolResult).toContain("STORE-READ-ONLY");
      expect(existsSync(join(store, "tampered"))).toBe(false);
      const back = await runCli(["-p", "-c", "/rewind 1 code"], e);
      expect(back.code).toBe(0);
      expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("one\n");
    } finally {
      e.cleanup();
    }
  }, 60_000);
});
