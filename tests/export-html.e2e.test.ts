/**
 * End to end: a session with tool calls (bash, edit) and a markdown answer, made by the real CLI
 * against the loopback model server, exported with --export and with /export in the TUI (tmux),
 * then loaded in headless Chromium: rendered markdown, highlighted code, tool calls and the
 * edit's diff, the session tree, search and filters. A screenshot is kept under tests/artifacts/.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { dumpDom, screenshot } from "./helpers/chromium.js";
import { tmuxDriver } from "./helpers/tmux.js";

jest.setTimeout(240_000);

const ANSWER = [
  "## Done",
  "",
  "I changed **beta** to `gamma` in *notes.txt*:",
  "",
  "```js",
  "const answer = 42; // the answer",
  "function twice(a) { return a * 2; }",
  "```",
  "",
  "- first point",
  "- second point",
  "",
  "| file | change |",
  "|---|---|",
  "| notes.txt | beta → gamma |",
  "",
  "<script>document.title='pwned'</script>",
].join("\n");

const SCRIPT = {
  turns: [
    { thinking: "Look at the file first.", toolCalls: [{ name: "bash", arguments: { command: "printf 'alpha\\nbeta\\n' > notes.txt; cat notes.txt" } }] },
    { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "beta", newText: "gamma" }] } }] },
    { text: ANSWER },
  ],
};

let server: LlmServer;
let e: E2eEnv;
let sessionFile: string;
const ARTIFACTS = join(ROOT, "tests", "artifacts");

beforeAll(async () => {
  server = await startLlmServer({ script: SCRIPT });
  e = makeE2eEnv(server.url);
  const r = await runCli(["-p", "Please change beta to gamma in notes.txt"], e);
  expect(r.code).toBe(0);
  const dir = join(e.agentDir, "sessions");
  const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
  expect(files).toHaveLength(1);
  sessionFile = join(dir, files[0]!);
});
afterAll(async () => {
  await server.close();
  e?.cleanup();
});

const text = (dom: string) => dom.replace(/<[^>]+>/g, "").replace(/&gt;/g, ">").replace(/&lt;/g, "<").replace(/&amp;/g, "&");

describe("--export", () => {
  let out: string;
  beforeAll(async () => {
    out = join(e.root, "session.html");
    const r = await runCli(["--export", sessionFile, out], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(out);
  });

  it("renders the markdown, the highlighted code and the tool calls with the edit as a diff", async () => {
    const dom = await dumpDom(out);
    // Markdown: heading, emphasis, inline code, list, table; raw HTML stays text.
    expect(dom).toMatch(/<h3[^>]*>Done<\/h3>/);
    expect(dom).toContain("<strong>beta</strong>");
    expect(dom).toContain("<code>gamma</code>");
    expect(dom).toContain("<em>notes.txt</em>");
    expect(dom).toMatch(/<ul><li>first point<\/li><li>second point<\/li><\/ul>/);
    expect(dom).toMatch(/<th>file<\/th><th>change<\/th>/);
    expect(dom).toContain("&lt;script&gt;document.title='pwned'&lt;/script&gt;");
    expect(dom).not.toMatch(/<title>pwned/);
    // Highlighted code block.
    expect(dom).toMatch(/<span class="tok-syntaxKeyword">const<\/span>/);
    expect(dom).toMatch(/<span class="tok-syntaxComment">\/\/ the answer<\/span>/);
    // Tool calls: the bash command with its output, the edit as a diff.
    expect(text(dom)).toMatch(/\$ printf 'alpha\\nbeta\\n' > notes\.txt; cat notes\.txt/);
    expect(dom).toMatch(/<span class="diff-del">-2 beta<\/span>/);
    expect(dom).toMatch(/<span class="diff-add">\+2 gamma<\/span>/);
    expect(dom).toContain("Look at the file first.");
    // The session itself, to download.
    const href = /<a id="download" download="[^"]+\.jsonl" href="data:application\/x-ndjson;base64,([^"]+)"/.exec(dom)![1]!;
    expect(Buffer.from(href, "base64").toString("utf8")).toBe(readFileSync(sessionFile, "utf8"));
  });

  it("has the session tree in the sidebar, and search and filters work on it", async () => {
    const dom = await dumpDom(out);
    const nodes = [...dom.matchAll(/<div class="node ([^"]*)"[^>]*>([\s\S]*?)<\/div>/g)];
    const lines = nodes.map((n) => text(n[2]!));
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/^user: Please change beta/), expect.stringMatching(/^\[bash: printf/), "[edit: notes.txt]", expect.stringMatching(/^assistant: ## Done/)]));
    expect(nodes.find((n) => n[2]!.startsWith("assistant: ## Done"))![1]).toMatch(/\bleaf\b/);
    expect(dom).toMatch(/<div id="tree-count">\d+ \/ \d+ entries<\/div>/);

    // Search from the fragment: only entries mentioning "gamma" stay listed.
    const searched = await dumpDom(`${pathToFileURL(out).href}#q=gamma`);
    expect(searched).toMatch(/data-matches="[1-9]/);
    const after = [...searched.matchAll(/<div class="node ([^"]*)"[^>]*>([\s\S]*?)<\/div>/g)];
    const listed = after.filter((n) => !/search-miss|filtered/.test(n[1]!)).map((n) => text(n[2]!));
    expect(listed.length).toBeGreaterThan(0);
    expect(listed).not.toContainEqual(expect.stringMatching(/^\[bash: printf/));
    expect(after.filter((n) => /\bmatch\b/.test(n[1]!)).length).toBe(listed.length);

    // The User filter lists user messages only.
    const users = await dumpDom(`${pathToFileURL(out).href}#filter=user`);
    const shown = [...users.matchAll(/<div class="node ([^"]*)"[^>]*>([\s\S]*?)<\/div>/g)].filter((n) => !/filtered|search-miss/.test(n[1]!));
    expect(shown.map((n) => text(n[2]!))).toEqual([expect.stringMatching(/^user: Please change beta/)]);
    expect(users).toMatch(/<body[^>]*data-filter="user"/);

    mkdirSync(ARTIFACTS, { recursive: true });
    const png = join(ARTIFACTS, "export-html.png");
    await screenshot(pathToFileURL(out).href, png);
    expect(statSync(png).size).toBeGreaterThan(10_000);
  });
});

describe("/export in the TUI", () => {
  const SOCKET = `pi-export-html-${process.pid}`;
  const { tmux, waitFor, typeText, send, kill } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));
  afterAll(() => kill());

  it("writes the resumed session's page with the same rendering", async () => {
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' --session '${sessionFile}' 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd);
    await waitFor(/mock\/mock-model/, 120_000);
    typeText("/export tui.html");
    send("Enter");
    await waitFor(/tui\.html/);
    const file = join(e.cwd, "tui.html");
    await waitFor(() => existsSync(file) && readFileSync(file, "utf8").includes("</html>"));
    const dom = await dumpDom(file);
    expect(dom).toContain("<strong>beta</strong>");
    expect(dom).toMatch(/<span class="diff-add">\+2 gamma<\/span>/);
    expect(dom).toMatch(/<nav id="tree"/);
  });
});
