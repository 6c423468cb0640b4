/**
 * Forking the session at one of its user messages (/fork, the tree navigator's fork key): the
 * files to restore are asked first, then the new session gets the message text in the editor.
 */
import { existsSync } from "node:fs";
import type { TreeHost } from "./host.js";

const notice = (app: Pick<TreeHost, "addNotice">, text: string, level: "info" | "warning" | "success") => app.addNotice(text, level);

export async function forkAt(app: TreeHost, entryId: string, text: string): Promise<void> {
  const file = app.session.sessionFile as string | undefined;
  if (!file || !existsSync(file)) return notice(app, "The session has not been saved yet (it is saved after the first answer); nothing to fork", "warning");
  const { chooseFiles, applyFiles } = await import("./restore-files.js");
  const files = await chooseFiles(app, entryId);
  if (!files) return;
  const r = await app.runtime.fork(file, entryId);
  if (r?.cancelled) return notice(app, "An extension cancelled the fork", "warning");
  app.editor.setText(text);
  notice(app, "Forked into a new session; edit the message and send it", "success");
  await applyFiles(app, files);
}
