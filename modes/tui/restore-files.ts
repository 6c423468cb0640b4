/**
 * /tree and /fork offer to bring the project's files back to the chosen point, through the
 * kernel's "checkpoints" service (when it is loaded and on). The question comes only when the
 * point's file state differs from the files now; it names the files that would change, and
 * files changed outside the agent are kept unless the user says to overwrite them.
 */
import type { TreeHost } from "./host.js";

interface FileChange {
  path: string;
  status: string;
}
interface Plan {
  changes: FileChange[];
  external: string[];
}
/** The parts of the checkpoints service this module uses (it is typed by the plugin; modes/ does not import plugins). */
interface CheckpointsLike {
  settings(): { enabled: boolean };
  planEntry(session: unknown, entryId: string): Promise<Plan | undefined>;
  restore(session: unknown, plan: Plan, mode: "code", opts: { overwriteExternal?: boolean }): Promise<{ restored: string[]; kept: string[] }>;
}

/** What to do with the files after the move: nothing, or restore this plan. Undefined: the user cancelled. */
export type FileChoice = { plan?: Plan; overwriteExternal?: boolean };

function checkpoints(app: TreeHost): CheckpointsLike | undefined {
  const svc = (app.kernel.service as (name: string) => unknown)("checkpoints") as CheckpointsLike | undefined;
  return svc && typeof svc.planEntry === "function" && svc.settings().enabled ? svc : undefined;
}

function describe(plan: Plan, limit = 12): string {
  const ext = new Set(plan.external);
  const lines = plan.changes.slice(0, limit).map((c) => `${c.status === "A" ? "create" : c.status === "D" ? "delete" : "change"} ${c.path}${ext.has(c.path) ? "  (changed outside the agent)" : ""}`);
  if (plan.changes.length > limit) lines.push(`… and ${plan.changes.length - limit} more`);
  return lines.join("\n");
}

/** Ask, before moving to `entryId`, whether its files come back too. */
export async function chooseFiles(app: TreeHost, entryId: string): Promise<FileChoice | undefined> {
  const svc = checkpoints(app);
  if (!svc) return {};
  let plan: Plan | undefined;
  try {
    plan = await svc.planEntry(app.session, entryId);
  } catch (e) {
    app.addNotice(`checkpoints: ${(e as Error).message}; the files stay as they are`, "warning");
    return {};
  }
  if (!plan) return {};
  const choice = await app.select(`The files differ at this point:\n${describe(plan)}`, [
    { label: "Keep the files as they are", value: "keep" as const },
    { label: "Restore files too", value: "restore" as const },
  ]);
  if (choice === undefined) return undefined;
  if (choice === "keep") return {};
  let overwriteExternal = false;
  if (plan.external.length) {
    const answer = await app.select(`Changed outside the agent since its last checkpoint:\n${plan.external.join("\n")}`, [
      { label: `Keep my changes to ${plan.external.length} file(s) changed outside the agent`, value: "keep" as const },
      { label: "Overwrite them too", value: "overwrite" as const },
    ]);
    if (answer === undefined) return undefined;
    overwriteExternal = answer === "overwrite";
  }
  return { plan, overwriteExternal };
}

/** After the move: restore the chosen files into the session now current. */
export async function applyFiles(app: TreeHost, choice: FileChoice): Promise<void> {
  const svc = checkpoints(app);
  if (!svc || !choice.plan) return;
  try {
    const r = await svc.restore(app.session, choice.plan, "code", { overwriteExternal: choice.overwriteExternal });
    const kept = r.kept.length ? `; kept ${r.kept.length} file(s) changed outside the agent: ${r.kept.join(", ")}` : "";
    app.addNotice(`${r.restored.length} file(s) restored${kept}. /rewind lists the point to undo it.`, "success");
  } catch (e) {
    app.addNotice(`checkpoints: ${(e as Error).message}`, "error");
  }
}
