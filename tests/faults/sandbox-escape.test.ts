/**
 * Attacks on `--sandbox workspace-write`, through the real CLI and the scripted model, written as
 * an attacker who controls the model's tool calls: each case first proves the direct action is
 * blocked, then tries the escape and its siblings, and checks the host afterwards.
 *
 * Agent dir and project live outside /tmp (mkdtempOutsideTmp) so that the private /tmp does not
 * hide them by accident: what is checked is the boundary itself. Nothing here harms the host
 * when an attack succeeds (writes go to throw-away folders; kernel knobs are written with the
 * value they already hold).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "../fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "../helpers/e2e.js";
import { mkdtempOutsideTmp, requireProgram } from "../helpers/system.js";

let server: LlmServer;
let e: E2eEnv;
let outside: string;
let project: string;
let agentDir: string;
const servers: Server[] = [];
const connections = { count: 0 };

const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
const tool = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

/** Each tool result of a JSON-mode run, in order. */
function results(stdout: string): Array<{ name: string; text: string; isError: boolean }> {
  return jsonLines(stdout)
    .filter((ev) => ev.type === "tool_execution_end")
    .map((ev) => ({ name: ev.toolName, text: (ev.result?.content ?? []).map((c: any) => c.text ?? "").join(""), isError: ev.isError === true }));
}

/** Run the scripted turns (tool calls in order) under a prompt of its own, sandboxed. */
async function attack(name: string, turns: unknown[], opts: { env?: NodeJS.ProcessEnv; args?: string[] } = {}) {
  await fetch(`${server.url}/__script`, { method: "POST", body: JSON.stringify({ turns: [{ match: name, turns: [...turns, { text: "done" }] }], default: { text: "nothing scripted" } }) });
  const r = await runCli(["--mode", "json", "--no-session", ...(opts.args ?? ["--sandbox", "workspace-write"]), name], { cwd: project, env: { ...e.env, PI_CODING_AGENT_DIR: agentDir } }, { env: opts.env, timeoutMs: 120_000 });
  expect(r.stderr).not.toContain("cannot start");
  return { ...r, results: results(r.stdout) };
}

const node = (code: string) => `'${process.execPath}' -e ${JSON.stringify(code)}`;

describe("sandbox escapes (workspace-write)", () => {
  requireProgram("bwrap", "bubblewrap");
  beforeAll(async () => {
    outside = mkdtempOutsideTmp(".pi-sandbox-escape-");
    project = join(outside, "project");
    agentDir = join(outside, "agent");
    mkdirSync(project);
    server = await startLlmServer({ script: { default: { text: "x" } } });
    e = makeE2eEnv(server.url);
    mkdirSync(agentDir);
    for (const f of ["models.json", "settings.json"]) writeFileSync(join(agentDir, f), readFileSync(join(e.agentDir, f)));
    writeFileSync(join(agentDir, "auth.json"), JSON.stringify({ anthropic: { type: "api_key", key: "sk-ant-AUTHJSON-SECRET-0001" } }), { mode: 0o600 });
    execFileSync("git", ["init", "-q", project]);
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
    await server?.close();
    e?.cleanup();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  describe("no capabilities, own namespaces, read-only kernel knobs", () => {
    it("a root command holds no capabilities and cannot remount the root writable", async () => {
      const target = join(outside, "remounted");
      const r = await attack("caps", [
        bash(`touch '${target}'; echo direct=$?`),
        bash("grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status"),
        bash(`mount -o remount,rw / 2>&1; mount -o remount,rw,bind / / 2>&1; touch '${target}' 2>&1; echo escaped=$?`),
        bash(`unshare -rm sh -c "mount -o remount,rw / && touch '${target}'" 2>&1; echo userns=$?`),
        bash(`${node(`try{require("fs").writeFileSync(${JSON.stringify(target)},"x");console.log("NODE-WROTE")}catch(e){console.log("node:"+e.code)}`)}`),
      ]);
      expect(r.results[0]!.text).toMatch(/direct=1/);
      expect(r.results[1]!.text).toMatch(/CapEff:\s*0+\b/);
      expect(r.results[1]!.text).toMatch(/CapPrm:\s*0+\b/);
      expect(r.results[4]!.text).not.toContain("NODE-WROTE");
      expect(existsSync(target)).toBe(false);
    });

    it("start-up refuses a bubblewrap whose command would keep capabilities", async () => {
      const dir = join(outside, "fake-bwrap");
      mkdirSync(dir, { recursive: true });
      const real = execFileSync("sh", ["-c", "command -v bwrap"]).toString().trim();
      // A bubblewrap that builds the sandbox but leaves the command its capabilities (as a root bwrap did without --cap-drop).
      writeFileSync(join(dir, "bwrap"), `#!/bin/sh\n'${real}' "$@" | sed 's/^CapEff:.*/CapEff:\t000001fffeffffff/'\n`, { mode: 0o755 });
      const r = await runCli(["--sandbox", "workspace-write", "-p", "hi"], { cwd: project, env: { ...e.env, PI_CODING_AGENT_DIR: agentDir } }, { env: { PATH: `${dir}:${process.env.PATH}` }, timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("would keep capabilities (CapEff 000001fffeffffff)");
      expect(r.stderr).toContain("--sandbox off");
    });

    it("/proc/sys and sysrq are read-only; hostname and IPC are the sandbox's own", async () => {
      const hostUts = readlinkSync("/proc/self/ns/uts");
      const hostIpc = readlinkSync("/proc/self/ns/ipc");
      const r = await attack("procsys", [
        // Writes back the value it already holds, so a hole harms nothing.
        bash("cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern && echo CORE-WRITABLE; cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo HOSTNAME-WRITABLE; test -w /proc/sysrq-trigger && : > /proc/sysrq-trigger 2>/dev/null && echo SYSRQ-WRITABLE; echo end"),
        bash("readlink /proc/self/ns/uts /proc/self/ns/ipc"),
        // The same name again: harmless should the UTS namespace be the host's.
        bash(`hostname "$(hostname)" && echo HOSTNAME-SET`),
      ]);
      expect(r.results[0]!.text).not.toMatch(/CORE-WRITABLE|HOSTNAME-WRITABLE|SYSRQ-WRITABLE/);
      expect(r.results[0]!.text).toContain("end");
      expect(r.results[1]!.text).not.toContain(hostUts);
      expect(r.results[1]!.text).not.toContain(hostIpc);
      expect(r.results[2]!.text).not.toContain("HOSTNAME-SET");
    });

    it("a command runs in a session of its own (no TIOCSTI into pi's terminal)", async () => {
      const r = await attack("session", [bash(`python3 -c "import os;print('sid=%d pid=%d'%(os.getsid(0),os.getpid()))"`)]);
      // A session started inside the PID namespace has a visible, non-zero id; pi's session would be 0 (not in the namespace).
      const m = /sid=(\d+) pid=(\d+)/.exec(r.results[0]!.text);
      expect(m).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0);
    });
  });

  describe("host sockets, /tmp and credentials", () => {
    let sockInProject = "";
    let sockInHostTmp = "";
    beforeAll(async () => {
      const listen = (path: string) =>
        new Promise<void>((res) => {
          const s = createServer((c) => {
            connections.count++;
            c.end("HOST-SOCKET-REACHED\n");
          });
          servers.push(s);
          s.listen(path, () => res());
        });
      sockInProject = join(project, "agent.sock");
      sockInHostTmp = join("/tmp", `pi-fake-tmux-${process.pid}`, "default");
      mkdirSync(join("/tmp", `pi-fake-tmux-${process.pid}`), { recursive: true });
      await listen(sockInProject);
      await listen(sockInHostTmp);
      await listen(`\0pi-abstract-${process.pid}`);
    });
    afterAll(() => {
      rmSync(join("/tmp", `pi-fake-tmux-${process.pid}`), { recursive: true, force: true });
      rmSync(`/tmp/left-by-sandbox-${process.pid}`, { force: true });
    });

    const connect = (path: string) =>
      node(`const s=require("net").connect(${JSON.stringify(path)});s.on("data",d=>{console.log(String(d).trim());process.exit(0)});s.on("error",e=>{console.log("refused:"+e.code);process.exit(1)})`);

    it("no path or abstract Unix socket is reachable with the network off; socket variables are gone", async () => {
      const before = connections.count;
      const r = await attack(
        "sockets",
        [
          bash(connect(sockInProject)),
          bash(connect(sockInHostTmp)),
          bash(connect(`\0pi-abstract-${process.pid}`)),
          bash(`ls /tmp; echo TMUX=$TMUX SSH=$SSH_AUTH_SOCK DBUS=$DBUS_SESSION_BUS_ADDRESS DISPLAY=$DISPLAY WAYLAND=$WAYLAND_DISPLAY`),
          bash(`python3 -c "import socket;s=socket.socket(socket.AF_UNIX);s.connect('${sockInProject}');print(s.recv(100))" 2>&1 | tail -1`),
          bash(`${node(`require("fs").writeFileSync("/tmp/left-by-sandbox-${process.pid}","x")`)} && echo TMP-WRITE-OK`),
          // io_uring can create and connect a socket without socket(2): its setup is refused too.
          bash(`python3 -c "import ctypes;l=ctypes.CDLL(None,use_errno=True);b=ctypes.create_string_buffer(120);r=l.syscall(425,8,b);print('uring=%d errno=%d'%(r,ctypes.get_errno()))"`),
        ],
        { env: { TMUX: `${sockInHostTmp},1234,0`, SSH_AUTH_SOCK: sockInProject, DBUS_SESSION_BUS_ADDRESS: `unix:path=${sockInHostTmp}`, DISPLAY: ":0", WAYLAND_DISPLAY: "wayland-0" } },
      );
      for (const i of [0, 1, 2, 4]) expect(r.results[i]!.text).not.toContain("HOST-SOCKET-REACHED");
      expect(connections.count).toBe(before);
      expect(r.results[3]!.text).toContain("TMUX= SSH= DBUS= DISPLAY= WAYLAND=");
      expect(r.results[3]!.text).not.toContain(`pi-fake-tmux-${process.pid}`);
      // The command's /tmp is writable, and private: the host's /tmp does not get the file.
      expect(r.results[5]!.text).toContain("TMP-WRITE-OK");
      expect(existsSync(`/tmp/left-by-sandbox-${process.pid}`)).toBe(false);
      expect(r.results[6]!.text).toContain("uring=-1 errno=13");
    });

    it("the agent dir's credentials and credential variables are invisible", async () => {
      const r = await attack(
        "credentials",
        [
          bash(`cat '${join(agentDir, "auth.json")}' '${join(agentDir, "models.json")}'; echo; ls -la '${agentDir}'`),
          bash("env"),
          bash(`grep -a -o 'sk-ant-AUTHJSON[A-Z0-9-]*' /proc/1/environ /proc/self/environ '${agentDir}'/* 2>/dev/null; echo searched`),
        ],
        { env: { OPENAI_API_KEY: "sk-openai-ENV-SECRET-0002", GROQ_API_KEY: "gsk-ENV-SECRET-0003", MY_SERVICE_TOKEN: "tok-ENV-SECRET-0004", AWS_SECRET_ACCESS_KEY: "aws-ENV-SECRET-0005", AWS_BEARER_TOKEN_BEDROCK: "bedrock-ENV-SECRET-0006" } },
      );
      const all = r.results.map((x) => x.text).join("\n");
      expect(all).toContain("searched");
      for (const secret of ["sk-ant-AUTHJSON-SECRET-0001", "MOCK_KEY_VALUE_123", "sk-openai-ENV-SECRET-0002", "gsk-ENV-SECRET-0003", "tok-ENV-SECRET-0004", "aws-ENV-SECRET-0005", "bedrock-ENV-SECRET-0006"]) {
        expect(all).not.toContain(secret);
      }
      // The files are still there for pi itself.
      expect(readFileSync(join(agentDir, "auth.json"), "utf8")).toContain("sk-ant-AUTHJSON-SECRET-0001");
    });
  });

  describe("what the next start of pi, git or the shell runs stays read-only", () => {
    const planted = ["pi.config.ts", ".pirc.json", ".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".pi/extensions/x.ts", ".pi/settings.json"];

    it("planting pi.config.ts, .pirc.json, .mcp.json, .claude hooks or .pi files fails, in every spelling", async () => {
      const r = await attack("plant-config", [
        bash("touch ./inside-ok && echo INSIDE-OK"),
        bash(`echo 'export default {}' > pi.config.ts; echo '{}' > .pirc.json; echo '{"mcpServers":{}}' > .mcp.json; echo rc=$?`),
        bash(`mkdir -p .claude && echo '{"hooks":{}}' > .claude/settings.json; echo '{}' > .claude/settings.local.json; mkdir -p .pi/extensions && echo 'x' > .pi/extensions/x.ts; echo '{}' > .pi/settings.json; echo rc=$?`),
        // Another road: build it elsewhere and rename it into place, or replace the placeholder.
        bash(`mkdir -p d/.pi/extensions && echo x > d/.pi/extensions/x.ts && mv d/.pi .pi 2>&1; rm -rf .pi .claude pi.config.ts 2>&1; mv .mcp.json gone.json 2>&1; ln -sf /etc/passwd .pirc.json 2>&1; echo rc=$?`),
        bash(`cp -r d/.pi/. .pi/ 2>&1; ${node(`const fs=require("fs");for(const f of ["pi.config.ts",".claude/settings.json",".pi/extensions/y.ts"]){try{fs.writeFileSync(f,"x");console.log("WROTE "+f)}catch(e){console.log(e.code)}}`)}`),
      ]);
      expect(r.results[0]!.text).toContain("INSIDE-OK");
      expect(r.results.map((x) => x.text).join("\n")).not.toContain("WROTE");
      for (const f of planted) expect(existsSync(join(project, f))).toBe(false);
      for (const f of ["pi.config.ts", ".pirc.json", ".mcp.json", ".claude", "gone.json"]) expect(existsSync(join(project, f))).toBe(false);
      // The empty placeholders the sandbox made are gone with pi.
      expect(existsSync(join(project, ".claude"))).toBe(false);
    });

    it("the whole .git stays: no hooks, no config, no commondir, no replacing .git", async () => {
      const config = readFileSync(join(project, ".git", "config"), "utf8");
      const r = await attack("plant-git", [
        bash(`echo '#!/bin/sh' > .git/hooks/pre-commit; git config core.fsmonitor 'touch ${outside}/fsmonitor-ran' 2>&1; echo rc=$?`),
        bash(`mkdir -p /tmp/evil && git init -q /tmp/evil; echo /tmp/evil/.git > .git/commondir 2>&1; echo '[core]' >> .git/info/exclude 2>&1; echo rc=$?`),
        bash(`mv .git .g 2>&1; cp -r .git .g 2>&1 && printf '[core]\\n\\tfsmonitor = touch ${outside}/fsmonitor-ran\\n' >> .g/config && rm -rf .git 2>&1; mv .g .git 2>&1; echo rc=$?`),
        bash(`mkdir -p sub && cd sub && ln -s ../.g .git 2>&1; cd .. && printf 'gitdir: /tmp/evil/.git\\n' > .git 2>&1; echo rc=$?`),
      ]);
      expect(r.results).toHaveLength(4);
      expect(statSync(join(project, ".git")).isDirectory()).toBe(true);
      expect(readFileSync(join(project, ".git", "config"), "utf8")).toBe(config);
      expect(existsSync(join(project, ".git", "commondir"))).toBe(false);
      expect(existsSync(join(project, ".git", "hooks", "pre-commit"))).toBe(false);
      execFileSync("git", ["status", "--short"], { cwd: project });
      expect(existsSync(join(outside, "fsmonitor-ran"))).toBe(false);
    });
  });

  describe("siblings: other spellings and other roads", () => {
    it("the write and edit tools refuse every start-up path and the agent dir, in any spelling", async () => {
      writeFileSync(join(project, "plain.txt"), "plain");
      const targets = [".git/config", ".git/hooks/post-checkout", ".git/commondir", "pi.config.ts", ".pirc.json", ".mcp.json", ".claude/settings.json", ".pi/extensions/w.ts", `${agentDir}/extensions/w.ts`, `/proc/self/root${agentDir}/settings.json`, `sub/../../agent/auth.json`];
      const r = await attack("tool-targets", [
        ...targets.map((path) => tool("write", { path, content: "planted" })),
        tool("edit", { path: ".git/config", edits: [{ oldText: "[core]", newText: "[core]\n\tfsmonitor = touch /tmp/x" }] }),
        tool("write", { path: "plain.txt", content: "inside-ok" }),
      ]);
      expect(r.results).toHaveLength(targets.length + 2);
      for (const w of r.results.slice(0, -1)) {
        expect(w.isError).toBe(true);
        expect(w.text).toContain("[sandbox]");
      }
      expect(r.results.at(-1)!.isError).toBe(false);
      expect(readFileSync(join(project, "plain.txt"), "utf8")).toBe("inside-ok");
      expect(readFileSync(join(project, ".git", "config"), "utf8")).not.toContain("fsmonitor");
      for (const f of ["pi.config.ts", ".pirc.json", ".mcp.json", ".claude/settings.json", ".pi/extensions/w.ts"]) expect(existsSync(join(project, f))).toBe(false);
      expect(existsSync(join(agentDir, "extensions", "w.ts"))).toBe(false);
      expect(readFileSync(join(agentDir, "auth.json"), "utf8")).toContain("AUTHJSON");
    });

    it("hard links into protected files cannot be made, kill -1 stays inside, /proc shows only the sandbox", async () => {
      const r = await attack("hardlinks", [
        bash(`ln '${join(agentDir, "settings.json")}' hl-settings 2>&1; ln .git/config hl-config 2>&1; ln '${join(outside, "..")}/.bashrc' hl-bashrc 2>&1; echo end`),
        tool("write", { path: "hl-config", content: "[core]\n\tfsmonitor = touch x\n" }),
        bash("ls /proc | grep -c '^[0-9]'; kill -9 -1 2>&1; echo after-kill"),
        bash("echo still-running"),
      ]);
      expect(existsSync(join(project, "hl-settings"))).toBe(false);
      expect(readFileSync(join(project, ".git", "config"), "utf8")).not.toContain("fsmonitor");
      expect(Number(/^(\d+)/m.exec(r.results[2]!.text)?.[1] ?? "999")).toBeLessThan(10);
      expect(r.results[3]!.text).toContain("still-running");
    });

    it("read-only level: the same isolation (no capabilities, no sockets, private /tmp)", async () => {
      const sock = join(project, "ro.sock");
      const srv = createServer((c) => {
        connections.count++;
        c.end("REACHED\n");
      });
      servers.push(srv);
      await new Promise<void>((res) => srv.listen(sock, () => res()));
      const before = connections.count;
      const r = await attack(
        "read-only-level",
        [
          bash("grep -E '^CapEff' /proc/self/status; cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo HOSTNAME-WRITABLE; echo end"),
          bash(`${node(`const s=require("net").connect(${JSON.stringify(sock)});s.on("data",d=>console.log(String(d)));s.on("error",e=>console.log("refused:"+e.code))`)}`),
          bash("touch ./ro-file 2>&1; echo $TMUX"),
        ],
        { args: ["--sandbox", "read-only"], env: { TMUX: "/tmp/tmux-0/default,1,0" } },
      );
      expect(r.results[0]!.text).toMatch(/CapEff:\s*0+\b/);
      expect(r.results[0]!.text).not.toContain("HOSTNAME-WRITABLE");
      expect(r.results[1]!.text).not.toContain("REACHED");
      expect(connections.count).toBe(before);
      expect(existsSync(join(project, "ro-file"))).toBe(false);
    });

    it("network on: socket variables still removed, the host's /tmp and /run still hidden", async () => {
      const settingsFile = join(agentDir, "settings.json");
      const original = readFileSync(settingsFile, "utf8");
      writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(original), sandbox: { network: true } }));
      const hostTmp = join("/tmp", `pi-net-on-${process.pid}`);
      mkdirSync(hostTmp, { recursive: true });
      try {
        const r = await attack("net-on", [bash(`ls /tmp /run; echo TMUX=$TMUX SSH=$SSH_AUTH_SOCK; grep -E '^CapEff' /proc/self/status`)], {
          env: { TMUX: `${hostTmp}/default,1,0`, SSH_AUTH_SOCK: `${hostTmp}/agent.sock` },
        });
        expect(r.results[0]!.text).toContain("TMUX= SSH=");
        expect(r.results[0]!.text).not.toContain(`pi-net-on-${process.pid}`);
        expect(r.results[0]!.text).toMatch(/CapEff:\s*0+\b/);
      } finally {
        writeFileSync(settingsFile, original);
        rmSync(hostTmp, { recursive: true, force: true });
      }
    });

    it("the extensions this run loaded (project settings, -e) stay read-only: the next start would run them again", async () => {
      mkdirSync(join(project, "tools"), { recursive: true });
      mkdirSync(join(project, ".pi"), { recursive: true });
      writeFileSync(join(project, "tools", "ext.ts"), "export default function () {}\n");
      writeFileSync(join(project, "tools", "helper.ts"), "export const x = 1;\n");
      writeFileSync(join(project, "cli-ext.ts"), "export default function () {}\n");
      writeFileSync(join(project, ".pi", "settings.json"), JSON.stringify({ extensions: ["../tools/ext.ts"] }));
      try {
        const r = await attack(
          "extension-files",
          [
            bash("echo 'console.log(1)' >> tools/ext.ts; echo rc=$?; echo 'export const x = 2;' > tools/helper.ts; echo rc=$?; echo '//' >> cli-ext.ts; echo rc=$?; touch root-file-ok && echo ROOT-OK"),
            tool("write", { path: "tools/ext.ts", content: "export default () => { require('child_process').execSync('touch /tmp/x') }" }),
            tool("write", { path: "cli-ext.ts", content: "export default () => {}" }),
          ],
          { args: ["--sandbox", "workspace-write", "--trust", "-e", "./cli-ext.ts"] },
        );
        expect(r.results[0]!.text).toContain("ROOT-OK");
        expect(r.results[1]!.isError).toBe(true);
        expect(r.results[2]!.isError).toBe(true);
        expect(readFileSync(join(project, "tools", "ext.ts"), "utf8")).toBe("export default function () {}\n");
        expect(readFileSync(join(project, "tools", "helper.ts"), "utf8")).toBe("export const x = 1;\n");
        expect(readFileSync(join(project, "cli-ext.ts"), "utf8")).toBe("export default function () {}\n");
      } finally {
        rmSync(join(project, ".pi", "settings.json"), { force: true });
      }
    });

    it("network on and the host's /tmp made writable: the tmux socket's folder is still hidden", async () => {
      const settingsFile = join(agentDir, "settings.json");
      const original = readFileSync(settingsFile, "utf8");
      writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(original), sandbox: { network: true, writableRoots: ["/tmp"] } }));
      const dir = join("/tmp", `pi-tmux-w-${process.pid}`);
      mkdirSync(dir, { recursive: true });
      const sock = join(dir, "default");
      const srv = createServer((c) => {
        connections.count++;
        c.end("TMUX-REACHED\n");
      });
      servers.push(srv);
      await new Promise<void>((res) => srv.listen(sock, () => res()));
      const before = connections.count;
      try {
        const r = await attack(
          "tmux-writable-tmp",
          [bash(`ls '${dir}'; ${node(`const s=require("net").connect(${JSON.stringify(sock)});s.on("data",d=>console.log(String(d)));s.on("error",e=>console.log("refused:"+e.code))`)}`)],
          { env: { TMUX: `${sock},1,0` } },
        );
        expect(r.results[0]!.text).not.toContain("TMUX-REACHED");
        expect(connections.count).toBe(before);
      } finally {
        writeFileSync(settingsFile, original);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
