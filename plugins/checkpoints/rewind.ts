/**
 * /rewind: pick a point of the current branch and restore code and conversation, code only or
 * conversation only. Before writing it shows the files that change; files changed outside the
 * agent since its last checkpoint are kept unless the user says to overwrite them. Without a
 * UI the command takes its choices as arguments: `/rewind list`, `/rewind <n> [both|code|conversation] [--overwrite]`.
 */
import type { CheckpointsService, RestoreMode, RestorePlan, SessionLike } from "./service.js";
import type { RewindPoint } from "./points.js";

interface UiLike {
  select(title: string, options: string[]): Promise<string | undefined>;
  confirm(title: string, message: string): Promise<boolean>;
  notify(message: string, type?: "info" | "warning" | "error"): void;
  setEditorText?(text: string): void;
}

const MODES: Array<[RestoreMode, string]> = [
  ["both", "Restore code and conversation"],
  ["code", "Restore code only"],
  ["conversation", "Restore conversation only"],
];

export function describePoint(p: RewindPoint): string {
  const time = p.timestamp ? new Date(p.timestamp).toISOString().slice(11, 19) + " " : "";
  const files = p.tree ? "" : " (no file checkpoint)";
  return `${p.index}. ${time}${p.kind === "prompt" ? `before "${p.label}"` : p.label}${files}`;
}

export function describeChanges(plan: RestorePlan, limit = 12): string {
  if (!plan.changes.length) return "No file changes: the files already match this point.";
  const ext = new Set(plan.external);
  const lines = plan.changes.slice(0, limit).map((c) => `${c.status === "A" ? "create" : c.status === "D" ? "delete" : "change"} ${c.path}${ext.has(c.path) ? "  (changed outside the agent)" : ""}`);
  if (plan.changes.length > limit) lines.push(`… and ${plan.changes.length - limit} more`);
  return lines.join("\n");
}

export async function runRewind(service: CheckpointsService, session: SessionLike, args: string, ui: UiLike | undefined, hasUI: boolean): Promise<void> {
  const say = (text: string, type: "info" | "warning" | "error" = "info") => {
    if (hasUI && ui) ui.notify(text, type);
    else process.stderr.write(text + "\n");
  };
  const points = service.list(session);
  const words = args.trim().split(/\s+/).filter(Boolean);
  if (words[0] === "list" || (!hasUI && !words.length)) {
    say(points.length ? points.map(describePoint).join("\n") : "No rewind points on this branch yet.");
    return;
  }
  if (!points.length) return say("No rewind points on this branch yet.", "warning");

  let point: RewindPoint | undefined;
  let mode: RestoreMode | undefined;
  let overwrite = words.includes("--overwrite");
  if (words.length) {
    point = points.find((p) => String(p.index) === words[0]);
    if (!point) return say(`/rewind: no point ${words[0]} on this branch (points 1-${points.length}; /rewind list shows them)`, "error");
    const m = words[1] && !words[1].startsWith("--") ? words[1] : "both";
    if (m !== "both" && m !== "code" && m !== "conversation") return say(`/rewind: unknown mode "${m}" (both, code or conversation)`, "error");
    mode = m;
  } else {
    const labels = [...points].reverse().map(describePoint);
    const chosen = await ui!.select("Rewind to", labels);
    if (!chosen) return;
    point = points.find((p) => describePoint(p) === chosen);
    if (!point) return;
    const choice = await ui!.select(`Rewind to ${describePoint(point)}`, (point.tree ? MODES : MODES.filter(([m]) => m === "conversation")).map(([, l]) => l));
    mode = MODES.find(([, l]) => l === choice)?.[0];
    if (!mode) return;
  }
  if (mode !== "conversation" && !point.tree) return say(`/rewind: point ${point.index} has no file checkpoint; only the conversation can go back there`, "error");

  const plan = await service.plan(session, point.entryId);
  if (mode !== "conversation") {
    const summary = describeChanges(plan);
    if (hasUI && words.length === 0) {
      if (plan.changes.length && !(await ui!.confirm("Restore these files?", summary))) return;
      if (plan.external.length) {
        const keep = `Keep my changes to ${plan.external.length} file(s) changed outside the agent`;
        const over = "Overwrite them too";
        const answer = await ui!.select(`Changed outside the agent since its last checkpoint:\n${plan.external.join("\n")}`, [keep, over, "Cancel"]);
        if (!answer || answer === "Cancel") return;
        overwrite = answer === over;
      }
    } else {
      say(summary);
    }
  }
  let result;
  try {
    result = await service.restore(session, plan, mode, { overwriteExternal: overwrite });
  } catch (e) {
    return say(`/rewind: ${(e as Error).message}`, "error");
  }
  if (result.cancelled) return say("/rewind: cancelled (the tree navigation was refused)", "warning");
  if (result.editorText && hasUI) ui?.setEditorText?.(result.editorText);
  const parts: string[] = [];
  if (mode !== "conversation") parts.push(`${result.restored.length} file(s) restored`);
  if (mode !== "code") parts.push("conversation rewound");
  if (result.kept.length) parts.push(`kept ${result.kept.length} file(s) changed outside the agent: ${result.kept.join(", ")}`);
  say(`Rewound to point ${point.index}: ${parts.join("; ")}. /rewind again lists the point to undo it.`);
}
