/**
 * Forking the session at one of its user messages (/fork, the tree navigator's fork key): the
 * files to restore are asked first, then the new session gets the message text in the editor.
 */
import type { TreeHost } from "./host.js";

const notice = (app: Pick<TreeHost, "addNotice">, text: string, level: "info" | "warning" | "success") => app.addNotice(text, level);

/** Also before the session's first answer is saved (or with --no-session): the runtime forks from memory then, as pi 1.6 does. */
export async function forkAt(app: TreeHost, entryId: string, text: string): Promise<void> {
  const { chooseFiles, applyFiles } = await import("./restore-files.js");
  const files = await chooseFiles(app, entryId);
  if (!files) return;
  const r = (await app.runtime.fork(entryId, { position: "before" })) as { cancelled?: boolean; selectedText?: string } | undefined;
  if (r?.cancelled) return notice(app, "An extension cancelled the fork", "warning");
  app.editor.setText(r?.selectedText ?? text);
  notice(app, "Forked to new session", "success");
  await applyFiles(app, files);
}
