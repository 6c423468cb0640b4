/**
 * HTML export through the kernel: the page of the active branch with tool calls and results,
 * self-contained (no network), escaped, and rendered by a real headless Chromium.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import { dumpDom } from "../../tests/helpers/chromium.js";
import exportHtml from "./index.js";
import { escapeHtml } from "./render.js";
import type { SessionManager } from "../../core/stores/index.js";
import type { ToolDefinition } from "../../core/kernel/index.js";

type TK = Awaited<ReturnType<typeof createTestKernel>>;
let tk: TK | undefined;
afterEach(() => {
  tk?.cleanup();
  tk = undefined;
});

const XSS = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script> & "quotes"`;

const listTool: ToolDefinition = {
  name: "list_files",
  description: "lists files",
  parameters: { type: "object", properties: { dir: { type: "string" } } },
  execute: async () => ({ content: [{ type: "text", text: "alpha.txt\nbeta.txt <not a tag>" }] }),
};

/** External resources a page could load: any src/href that is not a data: URL or a fragment, CSS url(), @import. */
function externalReferences(html: string): string[] {
  // Real tags only: session text is escaped, so "<" starts markup and nothing else.
  const tags = [...html.matchAll(/<[a-zA-Z][^>]*>/g)].map((m) => m[0]);
  const refs = tags
    .flatMap((t) => [...t.matchAll(/\s(?:src|href|action|poster|srcset)\s*=\s*["']?([^"'\s>]*)/gi)].map((m) => m[1]!))
    .filter((v) => !/^(data:|#)/i.test(v));
  const css = [...html.matchAll(/url\(|@import/gi)].map((m) => m[0]);
  return [...refs, ...css];
}

async function sessionWithBranches(t: TK) {
  t.faux.setScript([
    { thinking: "Let me look around.", text: "Listing the files.", toolCalls: [{ name: "list_files", arguments: { dir: "src" } }] },
    "There are two files: alpha.txt and beta.txt.",
    "ABANDONED BRANCH ANSWER",
    "Kept answer on the active branch.",
  ]);
  await t.session.prompt(`What is in src? ${XSS}`);
  const sm = t.session.sessionManager as SessionManager;
  const branchPoint = sm.getLeafId()!;
  await t.session.prompt("abandoned question");
  await t.session.navigateTree(branchPoint);
  await t.session.prompt("active question");
  t.session.setLabel(sm.getLeafId()!, "done-here");
  t.session.setSessionName("Export test session");
  return sm;
}

describe("export-html", () => {
  it("exports a session file to one self-contained page that Chromium renders with the active branch, tool calls and results", async () => {
    tk = await createTestKernel({ plugins: [exportHtml], tools: [listTool], persist: true });
    await sessionWithBranches(tk);
    const file = tk.session.sessionFile!;
    const out = join(tk.cwd, "out", "session.html");
    const written = await tk.kernel.service("export-html")!(file, out);
    expect(written).toBe(out);
    const html = readFileSync(out, "utf8");

    // Self-contained: a CSP that forbids network use, and nothing to fetch.
    expect(html).toContain(`content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'`);
    expect(externalReferences(html)).toEqual([]);
    expect(html).not.toMatch(/<link\b|<iframe\b|<object\b|<embed\b/i);
    // Escaped: the payload is text, not markup.
    expect(html).toContain(escapeHtml(XSS));
    expect(html).not.toContain("<img src=x");

    const dom = await dumpDom(out);
    expect(dom).toContain("Export test session");
    expect(dom).toContain("What is in src?");
    expect(dom).toContain("Let me look around.");
    expect(dom).toContain("Listing the files.");
    expect(dom).toContain("list_files");
    expect(dom.replace(/<[^>]+>/g, "")).toContain('"dir": "src"');
    expect(dom).toContain("beta.txt &lt;not a tag&gt;");
    expect(dom).toContain("Kept answer on the active branch.");
    expect(dom).toContain("active question");
    expect(dom).toContain("done-here");
    // The other branch is in the tree sidebar, its messages hidden until it is picked there.
    const sectionWith = (text: string) => [...dom.matchAll(/<section[^>]*>[\s\S]*?<\/section>/g)].map((m) => m[0]).find((x) => x.includes(text));
    expect(sectionWith("ABANDONED BRANCH ANSWER")).toMatch(/^<section[^>]*\shidden/);
    expect(sectionWith("abandoned question")).toMatch(/^<section[^>]*\shidden/);
    expect(sectionWith("Kept answer on the active branch.")).not.toMatch(/^<section[^>]*\shidden/);
    expect(dom).toMatch(/<nav id="tree"[\s\S]*abandoned question[\s\S]*<\/nav>/);
    // Picking the other branch in the tree (here through the address's #leaf=) shows it instead.
    const abandonedId = /data-id="([^"]+)"/.exec(sectionWith("abandoned question")!)![1]!;
    const other = await dumpDom(`${pathToFileURL(out).href}#leaf=${abandonedId}`);
    const otherSection = (text: string) => [...other.matchAll(/<section[^>]*>[\s\S]*?<\/section>/g)].map((m) => m[0]).find((x) => x.includes(text));
    expect(otherSection("ABANDONED BRANCH ANSWER")).not.toMatch(/^<section[^>]*\shidden/);
    expect(otherSection("Kept answer on the active branch.")).toMatch(/^<section[^>]*\shidden/);
    expect(otherSection("What is in src?")).not.toMatch(/^<section[^>]*\shidden/);
    expect(other).toMatch(/<body[^>]*data-branch="/);
    // The inline script ran (the CSP allows inline code only) and the payload did not.
    expect(dom).toMatch(/<html[^>]*data-ready="5"/);
    expect(dom).not.toContain("pwned</title>");
    expect(dom).toContain("&lt;img src=x onerror=");
  });

  it("exports the live session (export-session), in memory too, with the system prompt", async () => {
    tk = await createTestKernel({ plugins: [exportHtml], tools: [listTool] });
    tk.faux.setScript(["in-memory answer"]);
    const exp = tk.kernel.service("export-session")!;
    await expect(exp(tk.session)).rejects.toThrow(/nothing to export yet/);
    await tk.session.prompt("hello there");
    const path = await exp(tk.session);
    expect(path).toBe(join(tk.cwd, `pi-session-${tk.session.sessionId}.html`));
    const html = readFileSync(path, "utf8");
    expect(html).toContain("in-memory answer");
    expect(html).toContain("System prompt");
    expect(html).toMatch(/Available tools \(\d+\)/);
    expect(html).toContain("<b>list_files</b> — lists files");
    expect(html).toContain(escapeHtml((await tk.session.getSystemPrompt()).slice(0, 60)));
  });

  it("/export writes the current session; bad inputs are clear errors", async () => {
    tk = await createTestKernel({ plugins: [exportHtml], persist: true });
    tk.faux.setScript(["answer"]);
    await tk.session.prompt("hi");
    await tk.session.prompt("/export mine.html");
    expect(existsSync(join(tk.cwd, "mine.html"))).toBe(true);
    const exp = tk.kernel.service("export-html")!;
    await expect(exp(join(tk.cwd, "missing.jsonl"))).rejects.toThrow(/File not found: .*missing\.jsonl/);
    const notSession = join(tk.cwd, "x.jsonl");
    writeFileSync(notSession, '{"type":"message"}\n');
    await expect(exp(notSession)).rejects.toThrow(/not a session file/);
    // Default name next to the working directory.
    const p = await exp(tk.session.sessionFile!);
    expect(p).toMatch(/pi-session-.*\.html$/);
  });
});
