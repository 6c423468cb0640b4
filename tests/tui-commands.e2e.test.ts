/**
 * End to end: pi 1.6's slash commands in the real CLI's terminal UI (tmux) against the loopback
 * model server — /model for this session and Ctrl+S for the default, /scoped-models, /login and
 * /logout (auth.json, mode 0600), /copy (a stub xclip on PATH), /share (a stub gh), /changelog,
 * /trust, /import, /bug, /compact's notices at the bottom, /tree's summary question, and a `/word`
 * that names no command (sent to the model as a prompt, as pi 1.6 does).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type Server } from "node:http";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, sessionFilesIn, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";
import { copyText, osc52 } from "../modes/tui/clipboard.js";

const SOCKET = `pi-tui-cmds-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;
let stubs: string;
/** A stand-in llama.cpp router: its model list, load and unload. */
let router: Server;
let routerUrl = "";
const routerModels = [{ id: "tiny-model", status: { value: "unloaded" } }];
const routerCalls: string[] = [];

const { tmux, send, typeText, waitFor, capture } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

const SCRIPT = {
  turns: [{ match: "summarize", text: "SUMMARY-OF-THE-CONVERSATION" }],
  default: { text: "Answer with `code` and COPY-ME-MARKER." },
};

/** A pi extension with an account sign-in (OAuth) provider: the flow shows an address and asks for a code. */
const OAUTH_EXTENSION = `
export default function (pi) {
  pi.registerProvider("fake-oauth", {
    baseUrl: "http://127.0.0.1:9/v1",
    api: "openai-completions",
    models: [{ id: "fake-model", name: "fake-model", reasoning: false, input: ["text"], contextWindow: 1000, maxTokens: 100 }],
    oauth: {
      name: "Fake Account",
      async login(callbacks) {
        callbacks.onAuth({ url: "https://auth.example.test/authorize?x=1" });
        const code = await callbacks.onPrompt({ message: "Paste the authorization code" });
        return { access: "access-" + code, refresh: "refresh-1", expires: Date.now() + 3600000 };
      },
      async refreshToken(c) { return c; },
      getApiKey(c) { return c.access; },
    },
  });
}
`;

const settingsFile = () => join(e.agentDir, "settings.json");
const readSettings = () => JSON.parse(readFileSync(settingsFile(), "utf8"));
const authFile = () => join(e.agentDir, "auth.json");


/** The rows between the conversation and the editor: the last non-empty rows above the editor's border. */
function lastChatRows(screen: string, n: number): string {
  const rows = screen.split("\n");
  const border = rows.findIndex((r, i) => i > 2 && /^─{20,}/.test(r));
  const above = rows.slice(0, border === -1 ? rows.length : border).filter((r) => r.trim());
  return above.slice(-n).join("\n");
}

/** Send a prompt and wait until its answer has come and the run has settled. */
async function prompt(text: string): Promise<void> {
  const n0 = server.stats().requests.length;
  typeText(text);
  send("Enter");
  await waitFor((s) => {
    const i = s.lastIndexOf(text);
    return server.stats().requests.length > n0 && !/Working/.test(s) && i >= 0 && s.indexOf("COPY-ME-MARKER", i) > i;
  });
}

async function runCommand(text: string): Promise<void> {
  typeText(text);
  await waitFor((s) => s.includes(text));
  send("Enter");
}

describe("pi 1.6's slash commands in the terminal UI", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: SCRIPT });
    router = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        routerCalls.push(`${req.method} ${req.url} ${body}`);
        const m = routerModels[0]!;
        if (req.method === "POST" && req.url === "/models/load") m.status.value = "loaded";
        if (req.method === "POST" && req.url === "/models/unload") m.status.value = "unloaded";
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(req.url === "/models" ? { data: routerModels } : { success: true }));
      });
    });
    await new Promise<void>((r) => router.listen(0, "127.0.0.1", () => r()));
    routerUrl = `http://127.0.0.1:${(router.address() as { port: number }).port}`;
    e = makeE2eEnv(server.url, { settings: { compaction: { enabled: false, reserveTokens: 16384, keepRecentTokens: 10 } } });
    // A saved session to /import, made by a headless run in the same project.
    const r = await runCli(["-p", "IMPORT-ME-PROMPT"], e);
    expect(r.code).toBe(0);
    const made = sessionFilesIn(join(e.agentDir, "sessions"));
    expect(made).toHaveLength(1);
    renameSync(made[0]!, join(e.cwd, "imported.jsonl"));
    // Stub clipboard and GitHub tools: they record what they were given.
    stubs = join(e.root, "bin");
    mkdirSync(stubs);
    writeFileSync(join(stubs, "xclip"), `#!/bin/sh\ncat > '${join(e.root, "clipboard.txt")}'\n`);
    writeFileSync(
      join(stubs, "gh"),
      `#!/bin/sh
if [ "$1" = auth ]; then [ -e '${join(e.root, "gh-logged-out")}' ] && exit 1; exit 0; fi
if [ "$1" = gist ] && [ "$2" = create ]; then cp "$4" '${join(e.root, "gist.html")}'; echo "- Creating gist session.html" >&2; echo "https://gist.github.com/someone/abc123def"; exit 0; fi
exit 2
`,
    );
    writeFileSync(join(stubs, "xdg-open"), `#!/bin/sh\necho "$1" > '${join(e.root, "browser.txt")}'\n`);
    chmodSync(join(stubs, "xdg-open"), 0o755);
    writeFileSync(join(e.root, "oauth-ext.mjs"), OAUTH_EXTENSION);
    chmodSync(join(stubs, "xclip"), 0o755);
    chmodSync(join(stubs, "gh"), 0o755);
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
    e.env.DISPLAY = ":99";
    delete e.env.WAYLAND_DISPLAY;
    delete e.env.SSH_CONNECTION;
    delete e.env.SSH_CLIENT;
    e.env.PATH = `${stubs}:${dirname(process.execPath)}:/usr/bin:/bin`;
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' -e '${join(e.root, "oauth-ext.mjs")}' 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
    await waitFor(/mock\/mock-model/);
    // The footer can be drawn before the editor reads keys: type a probe until the editor shows it.
    for (let seen = false; !seen; ) {
      typeText("q");
      seen = await waitFor(/^q+\s*$/m, 3000).then(
        () => true,
        () => false,
      );
    }
    send("C-u");
    await waitFor((x) => !/^q+\s*$/m.test(x));
  });

  afterAll(async () => {
    try {
      tmux("kill-server");
    } catch {
      /* already gone */
    }
    await server?.close();
    await new Promise((r) => router?.close(r));
    e?.cleanup();
  });

  it("sends a /word that names no command to the model as a prompt, as pi 1.6 does", async () => {
    const before = server.stats().requests.length;
    typeText("/frobnicate the widget");
    send("Enter");
    await waitFor(/COPY-ME-MARKER/);
    const req = server.stats().requests.slice(before).find((x) => JSON.stringify(x.body ?? "").includes("/frobnicate the widget"));
    expect(req).toBeDefined();
  });

  it("lists the commands with pi 1.6's argument hints", async () => {
    typeText("/lo");
    const s = await waitFor(/\/login <provider>/);
    expect(s).toMatch(/\/logout/);
    send("C-u");
    typeText("/mod");
    await waitFor(/\/model <provider\/model>/);
    // Ctrl+U empties the editor, which closes the menu (an Escape right before another key could
    // reach the terminal as one Alt+key).
    send("C-u");
    await waitFor((x) => !/\/model <provider\/model>/.test(x));
  });

  it("/model picks for this session only; Ctrl+S in the list saves the default", async () => {
    const before = readFileSync(settingsFile(), "utf8");
    await runCommand("/model");
    await waitFor(/Select a model/);
    typeText("claude");
    await waitFor(/→ (✓ | {2})mock-claude \[mock-anthropic\]/);
    send("Enter");
    await waitFor(/Model: mock-anthropic\/mock-claude/);
    expect(readFileSync(settingsFile(), "utf8")).toBe(before);
    await runCommand("/model");
    await waitFor(/Ctrl\+S set as default/);
    typeText("claude");
    await waitFor(/→ (✓ | {2})mock-claude \[mock-anthropic\]/);
    send("C-s");
    await waitFor(/Default model: mock-anthropic\/mock-claude/);
    expect(readSettings()).toMatchObject({ defaultProvider: "mock-anthropic", defaultModel: "mock-claude" });
    // Ctrl+P cycles to the other model, for this session only.
    send("C-p");
    await waitFor(/Model: mock\/mock-model/);
    expect(readSettings()).toMatchObject({ defaultProvider: "mock-anthropic", defaultModel: "mock-claude" });
    // A name that matches more than one model opens the list searching for it.
    await runCommand("/model mock");
    const list = await waitFor(/Select a model[\s\S]*› mock/);
    expect(list).toMatch(/mock-claude \[mock-anthropic\]/);
    send("Escape");
    await waitFor((x) => !/Select a model/.test(x));
  });

  it("/scoped-models edits what Ctrl+P cycles; Ctrl+S saves it as enabledModels", async () => {
    await runCommand("/scoped-models");
    await waitFor(/\[x\] mock-anthropic\/mock-claude/);
    send("Enter"); // the first row: mock-anthropic/mock-claude off
    await waitFor(/\[ \] mock-anthropic\/mock-claude/);
    send("C-s");
    await waitFor(/Model selection saved to settings: mock\/mock-model/);
    expect(readSettings().enabledModels).toEqual(["mock/mock-model"]);
    send("Escape");
    await waitFor((s) => !/Models for Ctrl\+P cycling/.test(s));
  });

  it("/login stores an API key in auth.json (mode 0600); /logout removes it", async () => {
    await runCommand("/login mock");
    await waitFor(/API key for mock/);
    typeText("sk-test-key-123");
    send("Enter");
    await waitFor(/Saved the API key for mock\. Credentials saved to .*auth\.json/);
    expect(JSON.parse(readFileSync(authFile(), "utf8"))).toEqual({ mock: { type: "api_key", key: "sk-test-key-123" } });
    expect(statSync(authFile()).mode & 0o777).toBe(0o600);
    // Without a provider: account sign-in (pi-ai's OAuth flows) or an API key.
    await runCommand("/login");
    await waitFor(/An account \(browser sign-in\)/);
    send("Enter");
    const s = await waitFor(/Sign in to/);
    expect(s).toMatch(/anthropic/i);
    send("Escape");
    await waitFor((x) => !/Sign in to/.test(x));
    await runCommand("/logout");
    await waitFor(/Remove the stored credentials of/);
    send("Enter");
    await waitFor(/Removed the stored API key for mock/);
    expect(JSON.parse(readFileSync(authFile(), "utf8"))).toEqual({});
  });

  it("/llama manages the models of a llama.cpp router configured with /login llama.cpp", async () => {
    await runCommand("/llama");
    await waitFor(/Configure llama\.cpp with \/login llama\.cpp/);
    await runCommand("/login llama.cpp");
    await waitFor(/llama\.cpp server URL/);
    typeText(routerUrl + "/v1");
    send("Enter");
    await waitFor(/API key \(optional\)/);
    send("Enter");
    await waitFor(/Saved the llama\.cpp server\. No model is loaded: \/llama loads one/);
    expect(JSON.parse(readFileSync(authFile(), "utf8"))["llama.cpp"]).toEqual({ type: "api_key", key: "local", env: { LLAMA_BASE_URL: routerUrl } });
    await runCommand("/llama");
    await waitFor(/tiny-model {2}\(unloaded\)/);
    send("Enter");
    await waitFor(/Loaded tiny-model; \/model selects it/);
    await waitFor(/tiny-model {2}\(loaded\)/);
    send("Escape");
    await waitFor((x) => !/llama\.cpp models at/.test(x));
    expect(routerCalls).toContain('POST /models/load {"model":"tiny-model"}');
    await runCommand("/model llama.cpp/tiny-model");
    await waitFor(/Model: llama\.cpp\/tiny-model/);
    await runCommand("/model mock/mock-model");
    await waitFor(/Model: mock\/mock-model/);
    // /logout takes the stored router address away again (the earlier /logout test left auth.json empty).
    await runCommand("/logout");
    await waitFor(/Remove the stored credentials of/);
    send("Enter");
    await waitFor(/Removed the stored API key for llama\.cpp/);
  });

  it("/copy puts the last assistant message on the clipboard through xclip", async () => {
    await runCommand("/copy");
    await waitFor(/Copied the last assistant message to the clipboard/);
    expect(readFileSync(join(e.root, "clipboard.txt"), "utf8")).toBe("Answer with `code` and COPY-ME-MARKER.");
  });

  it("/share uploads the HTML export as a secret gist and prints the viewer link; clear errors without gh", async () => {
    await runCommand("/share");
    await waitFor(/Share URL: https:\/\/pi\.dev\/session\/#abc123def/);
    expect(capture()).toMatch(/Gist: https:\/\/gist\.github\.com\/someone\/abc123def/);
    expect(readFileSync(join(e.root, "gist.html"), "utf8")).toContain("frobnicate the widget");
    writeFileSync(join(e.root, "gh-logged-out"), "");
    await runCommand("/share");
    await waitFor(/GitHub CLI is not logged in: run `gh auth login` first/);
    rmSync(join(stubs, "gh"));
    await runCommand("/share");
    await waitFor(/Sharing needs the GitHub CLI \(gh\), which is not installed/);
  });

  it("/changelog shows this package's changelog", async () => {
    await runCommand("/changelog");
    await waitFor(/What's new/);
    await waitFor(/0\.1\.0/);
  });

  it("/trust saves the decision in trust.json", async () => {
    await runCommand("/trust");
    await waitFor(/Project trust:/);
    send("Enter");
    await waitFor(/Saved trust decision: trusted/);
    expect(JSON.parse(readFileSync(join(e.agentDir, "trust.json"), "utf8"))).toMatchObject({ [e.cwd]: true });
  });

  it("/bug writes a zip report to the current folder", async () => {
    await runCommand("/bug the widget broke");
    await waitFor(/Report a bug/);
    send("Enter");
    await waitFor(/Include the session transcript\?/);
    send("Enter");
    const s = await waitFor(/Bug report written to .*pi-bug-report-\w+\.zip/);
    const name = /pi-bug-report-\w+\.zip/.exec(s.replace(/\n/g, ""))![0];
    const zip = readFileSync(join(e.cwd, name));
    expect(zip.subarray(0, 4).toString("hex")).toBe("504b0304");
    const text = zip.toString("utf8");
    expect(text).toContain("report.json");
    expect(text).toContain('"description": "the widget broke"');
    expect(text).toContain("session.jsonl");
    expect(text).toContain("frobnicate the widget");
    // Without the transcript: a summary written by the session's model instead.
    const before = server.stats().requests.length;
    await runCommand("/bug");
    await waitFor(/Report a bug/);
    send("Enter");
    await waitFor(/Include the session transcript\?/);
    send("Down");
    send("Enter");
    await waitFor(/Attach a summary written by mock-model instead\?/);
    send("Enter");
    const s2 = await waitFor((x) => (x.match(/Bug report written to/g) ?? []).length >= 2);
    const names = [...s2.replace(/\n/g, "").matchAll(/pi-bug-report-\w+\.zip/g)].map((m) => m[0]);
    const zip2 = readFileSync(join(e.cwd, names.at(-1)!)).toString("utf8");
    expect(zip2).toContain("summary.md");
    expect(zip2).toContain("COPY-ME-MARKER"); // the scripted model's answer is the summary
    expect(zip2).not.toContain("session.jsonl");
    const asked = server.stats().requests.slice(before);
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked[0]!.body)).toContain("<conversation>");
  });

  it("/compact shows its result at the bottom; a failure once, without a doubled prefix", async () => {
    for (const p of ["second prompt", "third prompt"]) await prompt(p);
    await runCommand("/compact");
    // A capture can catch a frame half drawn (tmux reads the pty in pieces): wait for the whole
    // frame, with the result among the last rows and the spinner gone.
    const settled = (x: string, n: number, result: RegExp) => result.test(lastChatRows(x, n)) && !/Compacting the context/.test(x);
    const s = await waitFor((x) => settled(x, 3, /Context compacted \(\d[\d,]* tokens/));
    expect(s).not.toMatch(/Compaction failed/);
    await runCommand("/compact");
    const f = await waitFor((x) => settled(x, 2, /Compaction failed: Already compacted/));
    expect(f.match(/Compaction failed/g)).toHaveLength(1);
  });

  it("/tree asks whether to summarize with no summary first and a custom-prompt choice", async () => {
    await prompt("after compaction");
    const before = server.stats().requests.length;
    await runCommand("/tree");
    await waitFor(/Session Tree/);
    typeText("third prompt");
    await waitFor(/^› .*user: third prompt/m);
    send("Enter");
    const s = await waitFor(/Summarize the branch you leave\?/);
    expect(s).toMatch(/❯ No summary/);
    expect(s).toMatch(/Summarize with custom prompt/);
    send("Enter");
    await waitFor((x) => !/Summarize the branch/.test(x) && /^third prompt\s*$/m.test(x));
    expect(server.stats().requests.length).toBe(before);
    send("C-u");
  });

  it("/import replaces the session with a saved one", async () => {
    await runCommand("/import");
    await waitFor(/Usage: \/import <path\.jsonl>/);
    await runCommand("/import imported.jsonl");
    await waitFor(/Replace the current session with imported\.jsonl\?/);
    send("Enter");
    const s = await waitFor(/Session imported from imported\.jsonl/);
    expect(s).toContain("IMPORT-ME-PROMPT");
  });

  it("/login signs in with an account through the provider's OAuth flow", async () => {
    await runCommand("/login fake-oauth");
    await waitFor(/Sign in to Fake Account with/);
    send("Enter"); // An account (browser sign-in)
    const s = await waitFor(/Paste the authorization code/);
    expect(s).toContain("https://auth.example.test/authorize?x=1");
    await waitFor(() => existsSync(join(e.root, "browser.txt")));
    expect(readFileSync(join(e.root, "browser.txt"), "utf8").trim()).toBe("https://auth.example.test/authorize?x=1");
    typeText("code42");
    send("Enter");
    await waitFor(/Logged in to Fake Account\. Credentials saved to .*auth\.json/);
    expect(JSON.parse(readFileSync(authFile(), "utf8"))["fake-oauth"]).toMatchObject({ type: "oauth", access: "access-code42", refresh: "refresh-1" });
    expect(statSync(authFile()).mode & 0o777).toBe(0o600);
  });
});

describe("the clipboard without a display", () => {
  it("writes OSC 52 to the terminal when no tool can be used", async () => {
    let written = "";
    const how = await copyText("héllo", { env: { PATH: "/nonexistent" }, platform: "linux", writeTerminal: (d) => (written += d) });
    expect(how).toBe("osc52");
    expect(written).toBe(`\x1b]52;c;${Buffer.from("héllo").toString("base64")}\x07`);
    expect(osc52("x".repeat(200_000))).toBeUndefined();
  });

  it("names the tool to install on a desktop where none works", async () => {
    await expect(copyText("x", { env: { PATH: "/nonexistent", DISPLAY: ":0" }, platform: "linux", writeTerminal: () => undefined })).rejects.toThrow(/install xclip or xsel/);
  });
});
