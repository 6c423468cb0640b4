import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapArgs, probeBwrap, sweepStaleRuntimes } from "./bwrap.js";
import { seccompDenyUnixSockets } from "./seccomp.js";
import { checkWrite, resolveLevel, resolvePolicy, type PolicyInputs } from "./policy.js";

let root: string;
let project: string;
let agentDir: string;
let elsewhere: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "pi-sandbox-policy-")));
  project = join(root, "project");
  agentDir = join(root, "agent");
  elsewhere = join(root, "elsewhere");
  for (const d of [project, agentDir, elsewhere, join(project, ".git")]) mkdirSync(d, { recursive: true });
  symlinkSync("/usr", join(project, "link-out"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const inputs = (over: Partial<PolicyInputs> = {}): PolicyInputs => ({
  cwd: project,
  agentDir,
  configDir: ".pi",
  global: {},
  project: {},
  projectTrusted: false,
  globalPath: "global settings",
  projectPath: "project settings",
  ...over,
});

describe("resolvePolicy", () => {
  it("is off unless the flag or a setting turns it on; the flag wins", () => {
    expect(resolvePolicy(inputs()).level).toBe("off");
    expect(resolvePolicy(inputs({ global: { sandbox: "workspace-write" } })).level).toBe("workspace-write");
    expect(resolvePolicy(inputs({ global: { sandbox: "read-only" }, flag: "off" })).level).toBe("off");
  });

  it("an untrusted project may tighten but not loosen", () => {
    const g = { sandbox: { level: "workspace-write", network: true, writableRoots: [elsewhere] } };
    const loosen = resolvePolicy(inputs({ global: g, project: { sandbox: { level: "off", network: true, writableRoots: ["/"] } } }));
    expect(loosen.level).toBe("workspace-write");
    expect(loosen.writable).not.toContain("/");
    expect(loosen.writable).toContain(elsewhere);
    const tighten = resolvePolicy(inputs({ global: g, project: { sandbox: { level: "read-only", network: false } } }));
    expect(tighten.level).toBe("read-only");
    expect(tighten.network).toBe(false);
    const trusted = resolvePolicy(inputs({ global: g, project: { sandbox: "off" }, projectTrusted: true }));
    expect(trusted.level).toBe("off");
  });

  it("the level alone (asked on every tool call) is the policy's level, from the same place", () => {
    const g = { sandbox: { level: "workspace-write" } };
    for (const inp of [
      inputs(),
      inputs({ global: g }),
      inputs({ global: g, flag: "off" }),
      inputs({ global: g, project: { sandbox: "read-only" } }),
      inputs({ global: g, project: { sandbox: "off" } }),
      inputs({ global: g, project: { sandbox: "off" }, projectTrusted: true }),
    ]) {
      const pol = resolvePolicy(inp);
      expect(resolveLevel(inp)).toEqual({ level: pol.level, from: pol.from });
    }
    expect(() => resolveLevel(inputs({ flag: "maybe" }))).toThrow(/--sandbox "maybe" is not a sandbox level/);
  });

  it("names a bad level", () => {
    expect(() => resolvePolicy(inputs({ flag: "maybe" }))).toThrow(/--sandbox "maybe" is not a sandbox level/);
    expect(() => resolvePolicy(inputs({ project: { sandbox: { level: "loose" } } }))).toThrow(/"sandbox" in project settings is "loose"/);
  });
});

describe("checkWrite", () => {
  it("workspace-write: the project, not the host's /tmp, the agent dir, .git, .pi, the start-up files, or a symlink leading out", () => {
    const p = resolvePolicy(inputs({ flag: "workspace-write" }));
    expect(checkWrite(p, join(project, "src", "a.ts"))).toEqual({ ok: true });
    // Commands get a private /tmp; the host's is not writable.
    expect(checkWrite(p, join(elsewhere, "x"))).toMatchObject({ ok: false, why: expect.stringContaining("outside the writable folders") });
    for (const f of [".git/config", ".git/commondir", "pi.config.ts", ".pirc.json", ".mcp.json", ".claude/settings.json"]) {
      expect(checkWrite(p, join(project, f))).toMatchObject({ ok: false, why: expect.stringContaining("read-only") });
    }
    expect(checkWrite(p, "/usr/pi-sandbox-x")).toMatchObject({ ok: false, why: expect.stringContaining("outside the writable folders") });
    expect(checkWrite(p, join(agentDir, "settings.json"))).toMatchObject({ ok: false, why: expect.stringContaining("read-only") });
    expect(checkWrite(p, join(project, ".git", "hooks", "pre-commit"))).toMatchObject({ ok: false });
    expect(checkWrite(p, join(project, ".pi", "extensions", "x.ts"))).toMatchObject({ ok: false });
    expect(checkWrite(p, join(project, "link-out", "x"))).toMatchObject({ ok: false, why: expect.stringContaining("/usr/x") });
  });

  it("follows dangling symlinks (and chains of them) to where a write would land", () => {
    const p = resolvePolicy(inputs({ flag: "workspace-write" }));
    symlinkSync(join(agentDir, "extensions", "x.ts"), join(project, "dangling"));
    symlinkSync(join(project, "dangling"), join(project, "chain"));
    symlinkSync(join(agentDir, "not-yet"), join(project, "dangling-dir"));
    symlinkSync(join(project, "loop-b"), join(project, "loop-a"));
    symlinkSync(join(project, "loop-a"), join(project, "loop-b"));
    expect(checkWrite(p, join(project, "dangling"))).toMatchObject({ ok: false, why: expect.stringContaining(join(agentDir, "extensions", "x.ts")) });
    expect(checkWrite(p, join(project, "chain"))).toMatchObject({ ok: false });
    expect(checkWrite(p, join(project, "dangling-dir", "x.ts"))).toMatchObject({ ok: false, why: expect.stringContaining(join(agentDir, "not-yet", "x.ts")) });
    expect(checkWrite(p, join(project, "loop-a"))).toMatchObject({ ok: true });
  });

  it("read-only: nothing", () => {
    const p = resolvePolicy(inputs({ flag: "read-only" }));
    expect(checkWrite(p, join(project, "a"))).toMatchObject({ ok: false });
  });
});

describe("bwrapArgs", () => {
  it("binds the project writable, the agent dir read-only after it, and cuts the network unless allowed", () => {
    const p = resolvePolicy(inputs({ flag: "workspace-write" }));
    const a = bwrapArgs(p, project).join(" ");
    expect(a).toContain("--unshare-net");
    expect(a).toContain("--cap-drop ALL");
    expect(a).toContain("--new-session");
    expect(a).toContain("--unshare-uts --unshare-ipc");
    expect(a).toContain("--ro-bind /proc/sys /proc/sys");
    expect(a).toMatch(/--bind \S+pi-sandbox-\S+\/tmp \/tmp/);
    expect(a).toContain(`--bind ${project} ${project}`);
    expect(a).toContain(`--ro-bind ${join(project, ".pi")} ${join(project, ".pi")}`);
    expect(a).toContain(`--ro-bind ${join(project, ".git")} ${join(project, ".git")}`);
    expect(a.endsWith(`--chdir ${project} --`)).toBe(true);
    const net = resolvePolicy(inputs({ global: { sandbox: { level: "workspace-write", network: true } } }));
    expect(bwrapArgs(net, project)).not.toContain("--unshare-net");
  });
});

describe("bwrapArgs: programs under the host's /tmp", () => {
  it("keeps a PATH entry under /tmp reachable, read-only (its install folder for a bin entry), after the private /tmp", () => {
    const tools = join(elsewhere, "tools");
    mkdirSync(join(tools, "bin"), { recursive: true });
    const before = process.env.PATH;
    process.env.PATH = `${join(tools, "bin")}:${before}`;
    try {
      const a = bwrapArgs(resolvePolicy(inputs({ flag: "workspace-write" })), project).join(" ");
      expect(a).toContain(`--ro-bind ${tools} ${tools}`);
      expect(a.indexOf(`--ro-bind ${tools} ${tools}`)).toBeGreaterThan(a.search(/--bind \S+pi-sandbox-\S+\/tmp \/tmp/));
      expect(a).not.toContain(`--bind ${tools} ${tools}`.replace("--bind", " --bind"));
    } finally {
      process.env.PATH = before;
    }
  });
});

describe("probeBwrap", () => {
  it("reports other platforms as not supported, and a missing bwrap by its package", () => {
    const mac = probeBwrap("workspace-write", "darwin");
    expect(mac).toMatchObject({ ok: false, message: expect.stringContaining("not supported on this platform (darwin)") });
    const none = probeBwrap("read-only", "linux", { PATH: join(root, "project") });
    expect(none).toMatchObject({ ok: false, message: expect.stringContaining('install the package "bubblewrap"') });
  });
});

describe("seccompDenyUnixSockets", () => {
  it("is a whole number of BPF instructions for x64 and arm64, and absent elsewhere", () => {
    for (const arch of ["x64", "arm64"]) {
      const p = seccompDenyUnixSockets(arch)!;
      expect(p.length % 8).toBe(0);
      expect(p.length / 8).toBeGreaterThan(8);
      // The last instructions return ALLOW and EACCES.
      expect(p.readUInt32LE(p.length - 4)).toBe(0x7fff0000);
      expect(p.readUInt32LE(p.length - 12)).toBe(0x00050000 | 13);
    }
    expect(seccompDenyUnixSockets("riscv64")).toBeUndefined();
  });
});

describe("sandboxRuntime", () => {
  it("removes the folders of pi processes that no longer run, never a live one's", () => {
    const stale = mkdtempSync(join(tmpdir(), "pi-sandbox-2147483646-"));
    const live = mkdtempSync(join(tmpdir(), `pi-sandbox-${process.ppid}-`));
    mkdirSync(join(stale, "tmp"));
    sweepStaleRuntimes();
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    rmSync(live, { recursive: true, force: true });
  });
});
