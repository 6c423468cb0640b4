/**
 * Themes a package ships, as an extension sees them at session_start without the TUI: pi 1.6
 * answers `ctx.ui.getAllThemes()` with an empty list in print, json and RPC mode (checked by
 * running 1.6 with the same package), and so does this CLI. The package's own extension is the
 * probe, so the package is known to be loaded.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/e2e.js";

let root: string;
let env: NodeJS.ProcessEnv;
let cwd: string;
const out = () => join(root, "themes.jsonl");

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "themes-headless-"));
  const pkg = join(root, "theme-pkg");
  mkdirSync(join(pkg, "themes"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "theme-pkg", version: "1.0.0", keywords: ["pi-package"], pi: { extensions: ["./probe.ts"], themes: ["./themes"] } }));
  writeFileSync(join(pkg, "themes", "pkgtheme.json"), JSON.stringify({ name: "pkgtheme", colors: {} }));
  writeFileSync(
    join(pkg, "probe.ts"),
    `import { appendFileSync } from "node:fs";
export default function (pi: any) {
  pi.on("session_start", async (_e: any, ctx: any) => {
    appendFileSync(process.env.THEMES_OUT!, JSON.stringify({ mode: ctx.mode, hasUI: ctx.hasUI, themes: ctx.ui.getAllThemes() }) + "\\n");
  });
}
`,
  );
  const agentDir = join(root, "agent");
  cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", packages: [pkg] }));
  writeFileSync(join(root, "faux.json"), JSON.stringify(["ok", "ok", "ok"]));
  env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_FAUX_SCRIPT: join(root, "faux.json"), THEMES_OUT: out() };
  for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const records = () =>
  readFileSync(out(), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { mode: string; hasUI: boolean; themes: unknown[] });

describe("a package's themes at session_start without the TUI", () => {
  it("getAllThemes() is empty in print, json and RPC mode, as in pi 1.6", async () => {
    for (const args of [["-p", "hi"], ["--mode", "json", "hi"]]) {
      const r = await runCli(["--no-session", ...args], { cwd, env });
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: expect.any(String) });
    }
    const rpc = await runCli(["--no-session", "--mode", "rpc"], { cwd, env }, { input: JSON.stringify({ type: "get_state", id: "1" }) + "\n" });
    expect(rpc.stdout).toContain('"get_state"');
    expect(records()).toEqual([
      { mode: "print", hasUI: false, themes: [] },
      { mode: "json", hasUI: false, themes: [] },
      { mode: "rpc", hasUI: true, themes: [] },
    ]);
  }, 120_000);
});
