/**
 * The mode registry's resolution: which registered mode runs this process. Modes are plugins
 * (modes/print, modes/rpc, modes/tui, a third party's); the CLI and the SDK name none of them.
 *
 * 1. `--mode <value>`: the mode whose `modeFlag` lists the value (default: its name).
 * 2. Otherwise every mode's `claims()` is asked; the highest `priority` among claimants wins.
 * 3. The `kernel_mode_select` hook may still answer another registered mode's name.
 * 4. The chosen mode's `prepare()` runs once (its "ui" service, its output), before the session.
 */
import type { Kernel, ModeClaimInput, ModeDefinition } from "./kernel.js";

export class ModeSelectError extends Error {}

/** The `--mode` values the installed modes accept, in registration order. */
export function modeFlagValues(kernel: Kernel): string[] {
  return kernel.modes.list().flatMap((e) => e.value.modeFlag ?? [e.value.name]);
}

/** The mode a `--mode` value names, or undefined. */
export function modeForFlag(kernel: Kernel, value: string): ModeDefinition | undefined {
  return kernel.modes.list().find((e) => (e.value.modeFlag ?? [e.value.name]).includes(value))?.value;
}

/** Check a `--mode` value; throws a ModeSelectError listing the values that work. */
export function requireModeForFlag(kernel: Kernel, value: string): ModeDefinition {
  const mode = modeForFlag(kernel, value);
  if (mode) return mode;
  const values = modeFlagValues(kernel);
  const expected = values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}` : (values[0] ?? "none installed");
  throw new ModeSelectError(`unknown --mode "${value}" (expected ${expected})`);
}

/** Resolve the mode of a run (steps 1–3 above). */
export function resolveMode(kernel: Kernel, input: ModeClaimInput & { modeFlag?: string }): ModeDefinition {
  let chosen: ModeDefinition | undefined;
  if (input.modeFlag !== undefined) chosen = requireModeForFlag(kernel, input.modeFlag);
  else {
    let best: { mode: ModeDefinition; priority: number } | undefined;
    for (const { value: mode } of kernel.modes.list()) {
      if (!mode.claims?.(input)) continue;
      const priority = mode.priority ?? 0;
      if (!best || priority > best.priority) best = { mode, priority };
    }
    chosen = best?.mode;
  }
  if (!chosen) throw new ModeSelectError(`no installed mode claims this run (installed: ${kernel.modes.names().join(", ") || "none"})`);
  const answer = kernel.hooks.kernel_mode_select.call({ argv: input.flags, requested: chosen.name, stdinIsTTY: input.stdinIsTTY, stdoutIsTTY: input.stdoutIsTTY });
  if (answer && answer !== chosen.name) {
    const other = kernel.modes.get(answer);
    if (!other) throw new ModeSelectError(`the ${answer} mode is not installed in this build of ${kernel.app.name}`);
    chosen = other;
  }
  return chosen;
}

const prepared = new WeakMap<Kernel, Set<ModeDefinition>>();

/** Step 4: let the chosen mode get ready (once per kernel). */
export function prepareMode(kernel: Kernel, mode: ModeDefinition): void {
  chosen.set(kernel, mode);
  let done = prepared.get(kernel);
  if (!done) prepared.set(kernel, (done = new Set()));
  if (done.has(mode)) return;
  done.add(mode);
  mode.prepare?.(kernel);
}

const chosen = new WeakMap<Kernel, ModeDefinition>();

/** The session mode name ("print", "json", "rpc", "tui", …) of the mode chosen for this run, before its session exists. */
export function chosenSessionMode(kernel: Kernel): string | undefined {
  const m = chosen.get(kernel);
  return m ? sessionTraitsOf(m).mode : undefined;
}

/** What a session records and how it behaves for a mode (its own name unless it says otherwise). */
export function sessionTraitsOf(mode: ModeDefinition): { mode: string; hasUI: boolean; inputSource: NonNullable<ModeDefinition["input"]> } {
  return { mode: mode.sessionMode ?? mode.name, hasUI: !!mode.hasUI, inputSource: mode.input ?? "sdk" };
}
