/**
 * The exported page's inline stylesheet and script. The script: the tree sidebar (click an entry
 * to show its branch), the tree filters and search, the thinking / tools / hidden-message toggles
 * (buttons and the T, O, H keys), and a start state from the address's fragment
 * (`#leaf=<entry id>`, `#q=<search>`, `#filter=<name>`).
 */

export const PAGE_CSS = `
:root { color-scheme: light dark; --bg: #fbfbfa; --fg: #1d1d1f; --muted: #6b6b70; --line: #e2e2e6; --user: #eef4ff; --assistant: #ffffff; --tool: #f6f6f8; --err: #b42318; --accent: #3a5bd9; --side: #f1f1f3; --add: #1a7f37; --del: #cf222e; --hit: #fff3b0;
  --kw: #8250df; --str: #0a3069; --num: #0550ae; --com: #6e7781; --fn: #8a4600; --ty: #116329; }
@media (prefers-color-scheme: dark) { :root { --bg: #151517; --fg: #e8e8ea; --muted: #9a9aa2; --line: #2c2c31; --user: #1c2333; --assistant: #1b1b1e; --tool: #202024; --err: #ff7b72; --accent: #8aa4ff; --side: #111113; --add: #3fb950; --del: #f85149; --hit: #5a4a00;
  --kw: #d2a8ff; --str: #a5d6ff; --num: #79c0ff; --com: #8b949e; --fn: #ffa657; --ty: #7ee787; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; display: flex; }
#sidebar { position: sticky; top: 0; height: 100vh; width: 340px; flex: none; display: flex; flex-direction: column; background: var(--side); border-right: 1px solid var(--line); padding: 12px 8px 6px; }
#search { width: 100%; font: inherit; font-size: 0.9em; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
.filters { margin: 8px 0; display: flex; flex-wrap: wrap; gap: 4px; }
.filters button.active { background: var(--accent); color: #fff; border-color: var(--accent); }
#tree { flex: 1; overflow: auto; font: 12px/1.6 ui-monospace, SFMono-Regular, Menlo, monospace; }
.node { padding-left: calc(var(--depth) * 12px + 4px); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer; color: var(--muted); border-radius: 3px; }
.node:hover, .node:focus { background: var(--line); outline: none; }
.node.on-path { color: var(--fg); }
.node.leaf { font-weight: 700; }
.node.k-user { color: var(--accent); }
.node.match { background: var(--hit); }
.node.filtered, .node.search-miss { display: none; }
#tree-count { color: var(--muted); font-size: 0.8em; padding-top: 4px; }
#page { flex: 1; min-width: 0; max-width: 1000px; margin: 0 auto; padding: 24px 20px 64px; }
h1 { font-size: 1.4em; margin: 0 0 8px; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 12px; color: var(--muted); font-size: 0.9em; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
.keys { color: var(--muted); font-size: 0.8em; margin: 4px 0 10px; }
.msg { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; margin: 12px 0; background: var(--assistant); }
.msg.user { background: var(--user); }
.msg.summary, .msg.custom, .msg.hidden { background: var(--tool); }
.msg.event { border: none; padding: 0 14px; margin: 4px 0; background: none; color: var(--muted); font-size: 0.85em; }
.msg.hidden { display: none; }
body.show-hidden .msg.hidden:not([hidden]) { display: block; }
.msg.target { outline: 2px solid var(--accent); }
.msg.match { box-shadow: 0 0 0 2px var(--hit); }
.head { font-size: 0.85em; color: var(--muted); margin-bottom: 6px; }
.head .role { font-weight: 600; color: var(--fg); }
.label { background: var(--accent); color: #fff; border-radius: 4px; padding: 0 6px; font-size: 0.85em; }
time { margin-left: 6px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.md { overflow-wrap: anywhere; }
.md > :first-child { margin-top: 0; } .md > :last-child { margin-bottom: 0; }
.md h2, .md h3, .md h4, .md h5, .md h6 { margin: 0.8em 0 0.4em; line-height: 1.25; }
.md code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--tool); border-radius: 3px; padding: 0 3px; }
.md table { border-collapse: collapse; margin: 8px 0; }
.md th, .md td { border: 1px solid var(--line); padding: 3px 8px; }
.md blockquote { margin: 6px 0; padding-left: 10px; border-left: 3px solid var(--line); color: var(--muted); }
.code-block { margin: 8px 0; border: 1px solid var(--line); border-radius: 6px; background: var(--tool); }
.code-lang { font-size: 0.75em; color: var(--muted); padding: 2px 8px; border-bottom: 1px solid var(--line); }
.code-block pre { margin: 0; padding: 8px; }
.code-block code { background: none; padding: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
.tok-syntaxKeyword { color: var(--kw); } .tok-syntaxString { color: var(--str); } .tok-syntaxNumber { color: var(--num); } .tok-syntaxComment { color: var(--com); font-style: italic; } .tok-syntaxFunction { color: var(--fn); } .tok-syntaxType { color: var(--ty); }
.tok-toolDiffAdded, .diff-add { color: var(--add); } .tok-toolDiffRemoved, .diff-del { color: var(--del); } .diff-hunk, .tok-accent { color: var(--accent); } .diff-ctx { color: var(--muted); }
.tool { border-left: 3px solid var(--accent); padding: 4px 10px; margin: 8px 0; background: var(--tool); border-radius: 4px; }
.tool.failed { border-left-color: var(--err); }
.tool-head { font-size: 0.9em; } .tool-name { font-weight: 700; } .path { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.output { max-height: 480px; overflow: auto; }
body.collapse-tools .tool .result, body.collapse-tools .tool .written, body.collapse-tools .tool .args { display: none; }
body.hide-thinking .thinking { display: none; }
.result.error .output, .error-note { color: var(--err); }
details > summary { cursor: pointer; color: var(--muted); font-size: 0.9em; }
.thinking .md { color: var(--muted); font-style: italic; }
.tools-list .tool-def { margin: 4px 0 4px 12px; font-size: 0.9em; }
.note, .event-text { color: var(--muted); font-size: 0.85em; margin: 6px 0; }
img { max-width: 100%; border-radius: 4px; }
button, #download { font: inherit; font-size: 0.8em; padding: 2px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; text-decoration: none; }
button.on { background: var(--accent); color: #fff; }
footer { margin-top: 32px; color: var(--muted); font-size: 0.8em; }
@media (max-width: 800px) { body { display: block; } #sidebar { position: static; width: auto; height: 40vh; } }
`;

export const PAGE_SCRIPT = `
(function () {
  var body = document.body;
  var nodes = Array.prototype.slice.call(document.querySelectorAll("#tree .node"));
  var sections = Array.prototype.slice.call(document.querySelectorAll("main .msg"));
  var byId = {}, kids = {}, sectionOf = {};
  nodes.forEach(function (n) {
    var id = n.getAttribute("data-id"), p = n.getAttribute("data-parent") || "";
    byId[id] = n;
    (kids[p] = kids[p] || []).push(id);
  });
  sections.forEach(function (s) { sectionOf[s.getAttribute("data-id")] = s; });

  function markReady() {
    var shown = sections.filter(function (s) { return !s.hidden && !/\\b(event|hidden)\\b/.test(s.className); }).length;
    document.documentElement.setAttribute("data-ready", String(shown));
  }

  // The branch through an entry: its ancestors, itself, then the latest child at each step down.
  function showBranch(id, scroll) {
    if (!byId[id]) return;
    var on = {}, cur = id, leaf = id;
    while (cur) { on[cur] = true; cur = byId[cur] && byId[cur].getAttribute("data-parent"); }
    cur = id;
    while (kids[cur] && kids[cur].length) { cur = kids[cur][kids[cur].length - 1]; on[cur] = true; leaf = cur; }
    sections.forEach(function (s) { s.hidden = !on[s.getAttribute("data-id")]; s.classList.toggle("target", s.getAttribute("data-id") === id); });
    nodes.forEach(function (n) { var i = n.getAttribute("data-id"); n.classList.toggle("on-path", !!on[i]); n.classList.toggle("leaf", i === leaf); });
    body.setAttribute("data-branch", id);
    markReady();
    if (scroll) {
      var t = id;
      while (t && !sectionOf[t]) t = byId[t].getAttribute("data-parent");
      if (t && sectionOf[t].scrollIntoView) sectionOf[t].scrollIntoView({ block: "start" });
    }
  }

  var filter = "default";
  function passes(n) {
    var k = n.getAttribute("data-kind");
    if (filter === "all") return true;
    if (filter === "user") return k === "user";
    if (filter === "labeled") return n.hasAttribute("data-labeled");
    if (filter === "no-tools") return k !== "tool" && k !== "tools" && k !== "event" && k !== "hidden";
    return k !== "event" && k !== "hidden";
  }
  var search = document.getElementById("search");
  function applyTree() {
    var q = (search.value || "").trim().toLowerCase();
    var shown = 0;
    nodes.forEach(function (n) {
      var id = n.getAttribute("data-id");
      var text = (n.textContent + " " + (sectionOf[id] ? sectionOf[id].textContent : "")).toLowerCase();
      var hit = !q || text.indexOf(q) >= 0;
      n.classList.toggle("filtered", !passes(n));
      n.classList.toggle("search-miss", !hit);
      n.classList.toggle("match", !!q && hit);
      if (sectionOf[id]) sectionOf[id].classList.toggle("match", !!q && hit);
      if (passes(n) && hit) shown++;
    });
    document.getElementById("tree-count").textContent = shown + " / " + nodes.length + " entries";
    body.setAttribute("data-matches", String(q ? shown : 0));
  }
  search.addEventListener("input", applyTree);
  Array.prototype.forEach.call(document.querySelectorAll(".filters button"), function (b) {
    b.addEventListener("click", function () { setFilter(b.getAttribute("data-filter")); });
  });
  function setFilter(f) {
    filter = f;
    Array.prototype.forEach.call(document.querySelectorAll(".filters button"), function (b) { b.classList.toggle("active", b.getAttribute("data-filter") === f); });
    body.setAttribute("data-filter", f);
    applyTree();
  }
  nodes.forEach(function (n) {
    n.addEventListener("click", function () { showBranch(n.getAttribute("data-id"), true); });
    n.addEventListener("keydown", function (ev) { if (ev.key === "Enter") showBranch(n.getAttribute("data-id"), true); });
  });

  function toggle(cls, button) {
    var on = body.classList.toggle(cls);
    document.getElementById(button).classList.toggle("on", on);
  }
  document.getElementById("toggle-thinking").addEventListener("click", function () { toggle("hide-thinking", "toggle-thinking"); });
  document.getElementById("toggle-tools").addEventListener("click", function () { toggle("collapse-tools", "toggle-tools"); });
  document.getElementById("toggle-hidden").addEventListener("click", function () { toggle("show-hidden", "toggle-hidden"); });
  document.addEventListener("keydown", function (ev) {
    if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "TEXTAREA") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var k = ev.key.toLowerCase();
    if (k === "t") toggle("hide-thinking", "toggle-thinking");
    else if (k === "o") toggle("collapse-tools", "toggle-tools");
    else if (k === "h") toggle("show-hidden", "toggle-hidden");
  });

  // Start state from the fragment: #leaf=<id>&q=<text>&filter=<name>
  var params = {};
  (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i > 0) params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
  });
  if (params.filter) setFilter(params.filter);
  if (params.q) search.value = params.q;
  applyTree();
  if (params.leaf) showBranch(params.leaf, true);
  markReady();
})();
`;
