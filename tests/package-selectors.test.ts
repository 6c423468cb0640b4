/**
 * pi 1.6's selector components and Theme from the host package, checked on the bundle an
 * extension gets (a child process, tests/fixtures/selectors-probe.mjs, because pi-tui loads
 * through require there): each selector is built on this project's data (model registry, session
 * files, session tree, settings, theme files, auth storage), rendered to lines (items listed,
 * current one marked, never wider than the width) and driven through handleInput (up/down/enter/
 * escape/typing → its callbacks with the right values). Importing the package loads neither
 * pi-tui nor blessed; building a selector loads pi-tui only.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/e2e.js";

let dir: string;
let p: any;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "package-selectors-"));
  mkdirSync(join(dir, "agent"), { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, PROBE_DIR: dir, PI_CODING_AGENT_DIR: join(dir, "agent") };
  // provider keys of the machine would change the auth statuses shown
  for (const k of Object.keys(env)) if (/_API_KEY$|_OAUTH_TOKEN$/.test(k)) delete env[k];
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res, rej) => {
    const child = spawn(process.execPath, [join(ROOT, "tests", "fixtures", "selectors-probe.mjs"), join(ROOT, "dist", "bundle", "index.js")], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", rej);
    child.on("close", (code) => res({ code, stdout, stderr }));
  });
  if (r.code !== 0) throw new Error(`probe failed (${r.code}): ${r.stderr}`);
  p = JSON.parse(r.stdout);
}, 120_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const row = (lines: string[], text: string) => lines.find((l) => l.includes(text));
const rowsWith = (lines: string[], ...texts: string[]) => texts.map((t) => lines.some((l) => l.includes(t)));

describe("loading", () => {
  it("importing the package loads neither pi-tui nor blessed; building selectors loads pi-tui, not blessed", () => {
    expect(p.load.beforeImport).toEqual({ tui: false, blessed: false });
    expect(p.load.afterImport).toEqual({ tui: false, blessed: false });
    expect(p.load.afterBuild).toEqual({ tui: true, blessed: false });
  });

  it("no selector renders a line wider than the width it is given", () => {
    expect(Object.keys(p.widest).sort()).toEqual(["images", "loader", "messages", "model", "oauth", "sessions", "settings", "theme", "thinking", "tree"]);
    for (const [name, over] of Object.entries(p.widest)) expect([name, over as number <= 0]).toEqual([name, true]);
  });
});

describe("ModelSelectorComponent on our model registry", () => {
  it("lists the models with configured auth (current first and ticked, then the default), then selects with the keys", () => {
    const m = p.model;
    expect(m.isContainer).toBe(true);
    expect(row(m.loading, "Loading models")).toBeDefined();
    const list = m.first.filter((l: string) => /\[(mock|zed)\]/.test(l));
    expect(list).toEqual(["→ ✓ mock-model (Name of mock-model) [mock]", "    zeta (Name of zeta) [zed] · default", "    other-model (Name of other-model) [mock]"]);
    expect(row(m.first, "Model Name: Name of mock-model")).toBeDefined();
    expect(row(m.afterDown, "→   zeta")).toBeDefined();
    expect(m.down).toEqual([["select", "zed/zeta"]]);
  });

  it("typing filters, Enter picks the match; Ctrl+S sets the default; Escape cancels; Tab switches scope", () => {
    const m = p.model;
    expect(row(m.filtered, "> zet")).toBeDefined();
    expect(m.filtered.filter((l: string) => /\[(mock|zed)\]/.test(l))).toEqual(["→   zeta (Name of zeta) [zed] · default"]);
    expect(m.typed).toEqual([["select", "zed/zeta"]]);
    expect(m.asDefault).toEqual([["default", "mock/other-model"]]);
    expect(m.cancelled).toEqual([["cancel"]]);
    expect(row(m.scoped, "Scope: all | scoped")).toBeDefined();
    expect(rowsWith(m.scoped, "zeta", "mock-model")).toEqual([true, false]);
    expect(rowsWith(m.all, "zeta", "mock-model", "other-model")).toEqual([true, true, true]);
    expect(m.narrow.every((l: string) => l.length <= 24)).toBe(true);
  });

  it("pi 0.73.1's form (settings manager, registry): the default comes from our settings and a selection is saved as the default", () => {
    const m = p.model;
    expect(m.oldForm.filter((l: string) => /\[(mock|zed)\]/.test(l))).toEqual(["→ ✓ mock-model (Name of mock-model) [mock]", "    zeta (Name of zeta) [zed] · default", "    other-model (Name of other-model) [mock]"]);
    expect(m.oldSelect).toEqual([["select", "mock/other-model"]]);
    expect(m.oldSaved).toEqual(["mock", "other-model"]);
  });
});

describe("ThinkingSelectorComponent", () => {
  it("marks the current level and the default; up/enter, typing to filter, Ctrl+S, Escape", () => {
    const t = p.thinking;
    expect(row(t.first, "medium")).toMatch(/^→ ✓ medium\s+Moderate reasoning/);
    expect(row(t.first, "low")).toMatch(/^\s+low\s+Light reasoning \(~2k tokens\) · default/);
    expect(t.up).toEqual([["level", "low"]]);
    expect(t.filtered.filter((l: string) => /reasoning/.test(l))).toEqual([expect.stringMatching(/^→ {3}xhigh\s+Extra-high/)]);
    expect(t.typed).toEqual([["level", "xhigh"]]);
    expect(t.other).toEqual([["default", "medium"], ["cancel"]]);
  });
});

describe("ThemeSelectorComponent and ShowImagesSelectorComponent", () => {
  it("lists the built-in themes and the agent dir's theme files, the current one marked; moving previews, Enter selects", () => {
    expect(p.theme.first.slice(1, 4)).toEqual([expect.stringMatching(/^→ dark\s+\(current\)$/), "  light", "  ocean"]);
    expect(p.theme.keys).toEqual([["preview", "light"], ["preview", "ocean"], ["theme", "ocean"], ["cancel"]]);
  });

  it("show images: the current answer selected, Enter reports a boolean", () => {
    expect(p.images.first.slice(1, 3)).toEqual([expect.stringMatching(/^ {2}Yes\s+Show images inline/), expect.stringMatching(/^→ No\s+Show text placeholder/)]);
    expect(p.images.keys).toEqual([["show", true], ["cancel"]]);
  });
});

describe("SessionSelectorComponent on our session files", () => {
  it("lists the current folder's sessions (name or first message, message count), the open one selected; typing filters; Enter picks the file", () => {
    const s = p.sessions;
    expect(row(s.first, "Resume Session")).toContain("◉ Current Folder");
    expect(row(s.first, "haiku")).toMatch(/^› write a haiku about rain\s+2 now$/);
    expect(row(s.first, "Tides research")).toMatch(/^ {2}Tides research\s+2 now$/);
    expect(row(s.first, "compile the kernel")).toBeUndefined();
    expect(rowsWith(s.filtered, "Tides research", "haiku")).toEqual([true, false]);
    expect(s.picked).toEqual([["pick", s.files.s1]]);
  });

  it("Tab shows all projects' sessions with their folders; Ctrl+N only named ones", () => {
    const s = p.sessions;
    expect(row(s.all, "Resume Session (All)")).toBeDefined();
    expect(row(s.all, "compile the kernel")).toMatch(/project-b 2 now$/);
    expect(rowsWith(s.all, "haiku", "Tides research")).toEqual([true, true]);
    expect(rowsWith(s.named, "Tides research", "haiku")).toEqual([true, false]);
  });

  it("Ctrl+D asks, Enter deletes the file; the open session is refused; Ctrl+R renames through renameSession", () => {
    const s = p.sessions;
    expect(row(s.confirming, "Delete session?")).toBeDefined();
    expect(s.afterDelete.some((l: string) => /Session (deleted|moved to trash)/.test(l))).toBe(true);
    expect(s.s1Exists).toBe(false);
    expect(s.s2Exists).toBe(true);
    expect(row(s.refused, "Cannot delete the session that is open")).toBeDefined();
    expect(row(s.renaming, "Rename Session")).toBeDefined();
    expect(s.calls).toEqual([["rename", s.files.s2, "Rain poems"], ["cancel"]]);
    expect(row(s.renamed, "Rain poems")).toMatch(/^› Rain poems\s+2 now$/);
  });
});

describe("TreeSelectorComponent on our session tree", () => {
  it("draws the tree as pi 1.6 does: the active branch first, connectors with fold marks and rails, the active path marked, the leaf's nearest shown entry selected; up/up/Enter picks the entry above the branch", () => {
    const t = p.tree;
    const body = t.first.filter((l: string) => /user:|assistant:/.test(l));
    expect(body).toEqual([
      "  • user: hello there",
      "  • assistant: hi, how can I help",
      "  ├⊟ • user: tell a joke",
      "› │     • assistant: why did the chicken",
      "  └⊟ [poem] user: write a poem",
      "        assistant: roses are red",
    ]);
    expect(t.up).toEqual([["entry", t.ids.a1]]);
  });

  it("typing searches (the tree redrawn from what is left), Escape clears; Ctrl+U shows user messages; Shift+L edits the label; Escape cancels", () => {
    const t = p.tree;
    expect(row(t.searched, "Type to search:")).toContain("poem");
    expect(t.searched.filter((l: string) => /user:|assistant:/.test(l))).toEqual(["› [poem] user: write a poem"]);
    expect(t.cleared.filter((l: string) => /user:|assistant:/.test(l)).length).toBe(6);
    expect(t.userOnly.filter((l: string) => /user:|assistant:/.test(l))).toEqual(["  • user: hello there", "  ├─ • user: tell a joke", "› └─ [poem] user: write a poem"]);
    expect(row(t.userOnly, "(3/3)")).toContain("[user]");
    expect(row(t.labelling, "Label")).toBeDefined();
    expect(row(t.labelling, "> poem")).toBeDefined();
    expect(t.afterLabel).toEqual([["label", t.ids.u2, "poempunchline"]]);
    expect(row(t.labelled, "[poempunchline] user: write a poem")).toBeDefined();
    expect(t.cancel).toEqual([["cancel"]]);
  });
});

describe("UserMessageSelectorComponent", () => {
  it("lists the session's user messages on one line each, the last selected; up/Enter forks from the first; an empty list cancels itself", () => {
    const u = p.messages;
    expect(u.first.filter((l: string) => /question|Message \d/.test(l))).toEqual(["  first question", "  Message 1 of 2", "› second question", "  Message 2 of 2"]);
    expect(u.up).toEqual([["fork", u.ids[0]]]);
    expect(u.empty).toEqual([["cancel-empty"]]);
  });
});

describe("OAuthSelectorComponent", () => {
  it("lists providers with their auth type and status from our auth storage; typing filters; Enter reports id and auth type", () => {
    const o = p.oauth;
    expect(row(o.first, "Select provider to configure:")).toBeDefined();
    expect(o.first.filter((l: string) => /configured/.test(l))).toEqual([" → Anthropic [subscription] ✓ configured", "   OpenAI [API key] ✓ configured", "   Groq [API key] • not configured"]);
    expect(o.filtered.filter((l: string) => /configured/.test(l))).toEqual([" → Groq [API key] • not configured"]);
    expect(o.typed).toEqual([["auth", "groq", "api_key"]]);
    expect(o.keys).toEqual([["auth", "openai", "api_key"], ["cancel"]]);
    expect(row(o.none, "No providers logged in. Use /login first.")).toBeDefined();
  });

  it("pi 0.73.1's form (auth storage, providers): the status comes from our auth storage or getAuthStatus", () => {
    const o = p.oauth;
    expect(o.oldForm.filter((l: string) => /configured/.test(l))).toEqual([" → Anthropic [subscription] ✓ configured", "   OpenAI [API key] ✓ configured", "   Groq [API key] • not configured"]);
    expect(row(o.withEnv, "Groq")).toBe("   Groq [API key] ✓ env: GROQ_API_KEY");
    expect(o.oldSelect).toEqual([["auth", "anthropic", "oauth"]]);
  });
});

describe("SettingsSelectorComponent on our settings", () => {
  it("lists the settings the config carries with their values; Enter cycles a value through its callback; the theme opens a previewing list", () => {
    const s = p.settings;
    expect(s.first.filter((l: string) => /^(→| ) \S.*\S {2,}\S+$/.test(l))).toEqual([
      expect.stringMatching(/^→ Auto-compact\s+true$/),
      expect.stringMatching(/^ {2}Steering mode\s+all$/),
      expect.stringMatching(/^ {2}Follow-up mode\s+one-at-a-time$/),
      expect.stringMatching(/^ {2}Hide thinking\s+false$/),
      expect.stringMatching(/^ {2}Double-escape action\s+tree$/),
      expect.stringMatching(/^ {2}Theme\s+dark$/),
    ]);
    expect(row(s.changed, "Auto-compact")).toMatch(/false$/);
    expect(row(s.changed, "Steering mode")).toMatch(/one-at-a-time$/);
    expect(s.submenu.slice(1, 4)).toEqual([expect.stringMatching(/^→ dark\s+\(current\)$/), "  light", "  ocean"]);
    expect(row(s.afterTheme, "Theme")).toMatch(/ocean$/);
    expect(s.calls).toEqual([["autoCompact", false], ["steering", "one-at-a-time"], ["preview", "light"], ["preview", "ocean"], ["theme", "ocean"], ["cancel"]]);
    expect(s.saved).toEqual({ autoCompact: false, steeringMode: "one-at-a-time", theme: "ocean" });
  });
});

describe("Theme (pi 1.6's constructor)", () => {
  it("colours per token in truecolor or 256-colour escapes, faint tokens, attributes, and clear errors", () => {
    const t = p.theme16;
    expect(t.fg).toEqual(["\x1b[38;2;255;0;0mx\x1b[39m", "\x1b[38;5;196mx\x1b[39m", "\x1b[39mx\x1b[39m", "\x1b[38;5;244m\x1b[2mx\x1b[22;39m", "\x1b[38;5;244mx\x1b[39m"]);
    expect(t.bg).toEqual(["\x1b[48;2;16;32;48mx\x1b[49m", "\x1b[48;5;236mx\x1b[49m"]);
    expect(t.ansi).toEqual(["\x1b[38;2;255;0;0m", "\x1b[48;2;16;32;48m"]);
    expect(t.mode).toEqual(["truecolor", "256color"]);
    expect(t.name).toBe("mine");
    expect(t.thinking).toBe("\x1b[38;2;0;255;0mx\x1b[39m");
    expect(t.bash).toBe("\x1b[38;2;0;0;255mx\x1b[39m");
    expect(t.style).toBe("\x1b[38;2;255;0;0m\x1b[1mx\x1b[22m\x1b[39m");
    expect(t.attrs).toEqual(["\x1b[1mx\x1b[22m", "\x1b[3mx\x1b[23m", "\x1b[4mx\x1b[24m", "\x1b[7mx\x1b[27m", "\x1b[9mx\x1b[29m"]);
    expect(t.unknown).toBe("Unknown theme color: nope");
    expect(t.badColor).toMatch(/colour of "accent" must be "#rrggbb"/);
    expect(t.badMode).toMatch(/colour mode must be "truecolor" or "256color"/);
  });

  it("the older (name, palette colours) form still works, both are instanceof Theme, and components take it", () => {
    expect(p.theme16.instance).toEqual([true, true]);
    expect(p.theme16.legacy).toBe("\x1b[38;5;39mx\x1b[39m");
    expect(p.theme16.loaderWithIt).toBe(true);
  });
});
