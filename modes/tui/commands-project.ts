/**
 * /changelog (this package's CHANGELOG.md, newest first), /trust (save a trust decision for this
 * project in `<agentDir>/trust.json`) and /import (replace the current session with a copy of a
 * session file, keeping its id and working directory).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LinesBlock } from "./chat.js";
import type { CommandHost } from "./host.js";
import { renderMarkdownLines } from "./markdown.js";
import { titleRule } from "./layers.js";

/** CHANGELOG.md beside this package's package.json (found from the running file upwards). */
export function findChangelog(from = fileURLToPath(import.meta.url)): string | undefined {
  let d = dirname(from);
  for (;;) {
    if (existsSync(join(d, "package.json")) && existsSync(join(d, "CHANGELOG.md"))) return join(d, "CHANGELOG.md");
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** The `## ` sections of a changelog, newest (first in the file) first, without the title. */
export function changelogEntries(text: string): string[] {
  const parts = text.split(/^(?=## )/m);
  return parts.filter((p) => p.startsWith("## ")).map((p) => p.trim());
}

export function changelog(app: CommandHost): void {
  const file = findChangelog();
  const entries = file ? changelogEntries(readFileSync(file, "utf8")) : [];
  const md = entries.length ? entries.join("\n\n") : "No changelog entries found.";
  app.chat.add(
    new LinesBlock((width, ctx) => [titleRule("What's new", width, ctx.theme), ...renderMarkdownLines(md, Math.max(10, width - 2), ctx.theme, ctx.markdown).map((l) => ` ${l}`)]),
  );
  app.requestRender();
}

// ---- /trust -----------------------------------------------------------------------------------------

export async function trustCommand(app: CommandHost): Promise<void> {
  const trust = app.kernel.service("project-trust");
  if (!trust) return app.addNotice("Project trust is not available in this build", "warning");
  const { readTrustStore, writeTrustStore, storeDecision } = await import("../../plugins/trust/index.js");
  const cwd = resolve(app.kernel.cwd);
  const store = readTrustStore(app.kernel.agentDir);
  const nearest = nearestEntry(store, cwd);
  const saved = nearest ? `${nearest.value ? "trusted" : "not trusted"} (${nearest.path === cwd ? "this folder" : `from ${nearest.path}`})` : "none";
  const now = trust.isTrusted(cwd);
  const parent = dirname(cwd);
  type Choice = { trusted: boolean; updates: Record<string, boolean | null> };
  const items = [
    { label: "Trust", value: { trusted: true, updates: { [cwd]: true } } as Choice },
    ...(parent !== cwd ? [{ label: `Trust the parent folder (${parent})`, value: { trusted: true, updates: { [parent]: true, [cwd]: null } } as Choice }] : []),
    { label: "Do not trust", value: { trusted: false, updates: { [cwd]: false } } as Choice },
  ];
  const current = storeDecision(store, cwd);
  const picked = await app.select(`Project trust: ${cwd}\nSaved decision: ${saved} · this session: ${now ? "trusted" : "not trusted"}`, items, {
    initialIndex: current === false ? items.length - 1 : 0,
  });
  if (!picked) return;
  try {
    writeTrustStore(app.kernel.agentDir, picked.updates as Record<string, boolean>);
  } catch (e) {
    return app.addNotice(`Could not save the trust decision: ${(e as Error).message}`, "error");
  }
  const file = join(app.kernel.agentDir, "trust.json");
  if (picked.trusted && !now) {
    // Load the project's own code now (as the start-up prompt does) rather than at the next start.
    trust.trust(cwd, { persist: false });
    return app.addNotice(`Saved trust decision: trusted (${file}); the project's own code is loaded now`, "success");
  }
  if (!picked.trusted && now) {
    trust.decline?.(cwd, { persist: false });
    return app.addNotice(`Saved trust decision: not trusted (${file}); code already loaded stays until you restart`, "success");
  }
  app.addNotice(`Saved trust decision: ${picked.trusted ? "trusted" : "not trusted"} (${file})`, "success");
}

function nearestEntry(store: Record<string, boolean>, cwd: string): { path: string; value: boolean } | undefined {
  let d = cwd;
  for (;;) {
    if (d in store) return { path: d, value: store[d]! };
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

// ---- /import ----------------------------------------------------------------------------------------

export async function importSession(app: CommandHost, arg: string): Promise<void> {
  const path = arg.replace(/^(["'])(.*)\1$/, "$2").trim();
  if (!path) return app.addNotice("Usage: /import <path.jsonl>", "error");
  const full = resolve(app.kernel.cwd, path);
  if (!existsSync(full)) return app.addNotice(`Could not import the session: ${full} does not exist`, "error");
  if (!(await app.confirm("Import session", `Replace the current session with ${path}?`))) return app.addNotice("Import cancelled", "info");
  try {
    const r = await app.runtime.importSession(full);
    if (r?.cancelled) return app.addNotice("Import cancelled", "info");
  } catch (e) {
    return app.addNotice(`Could not import the session: ${(e as Error).message.replace(/^import: /, "")}`, "error");
  }
  app.addNotice(`Session imported from ${path}`, "success");
}
