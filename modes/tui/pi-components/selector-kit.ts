/**
 * What the pi 1.6 selector components share: classes built on first use (pi-tui loads then, not
 * when the package is imported), key matching by keybinding id on raw terminal input, the
 * active theme, and the sliding window of a list that shows at most `max` rows.
 */
import type { Component } from "@earendil-works/pi-tui";
import { getActiveTheme } from "../pi-theme.js";
import { lazyClass, piTui } from "./components.js";
import { keysOf, keyText } from "./hints.js";

export { keyText, lazyClass, piTui };
export const theme = () => getActiveTheme();

/** Whether raw terminal input is one of the keys of an action id ("tui.select.up", "app.models.save"). */
export function keyIs(data: string, id: string): boolean {
  const { matchesKey } = piTui();
  return keysOf(id).some((k) => matchesKey(data, k as never));
}

/** The first and past-the-last index of a `max`-row window over `count` rows, keeping `selected` in the middle. */
export function windowOf(selected: number, count: number, max: number): [number, number] {
  const start = Math.max(0, Math.min(selected - Math.floor(max / 2), count - max));
  return [start, Math.min(start + max, count)];
}

/** Up/down (wrapping) and page keys over a list of `count` rows: the new index, or undefined when `data` is none of them. */
export function moveSelection(data: string, selected: number, count: number, page: number, wrap = true): number | undefined {
  if (count === 0) return undefined;
  if (keyIs(data, "tui.select.up")) return selected === 0 ? (wrap ? count - 1 : 0) : selected - 1;
  if (keyIs(data, "tui.select.down")) return selected === count - 1 ? (wrap ? 0 : count - 1) : selected + 1;
  if (keyIs(data, "tui.select.pageUp")) return Math.max(0, selected - page);
  if (keyIs(data, "tui.select.pageDown")) return Math.min(count - 1, selected + page);
  return undefined;
}

/** One line cut to `width` columns (ANSI-aware). */
export function fit(line: string, width: number): string {
  return piTui().truncateToWidth(line, Math.max(0, width));
}

/** A one-line (cut to the width) text row. */
export function row(text: string): Component {
  return { render: (w: number) => [fit(text, w)], invalidate() {} };
}

/** Rows computed at render time (each cut to the width). */
export function rowsBox(fill: (width: number) => string[]): Component {
  return { render: (w: number) => fill(w).map((l) => fit(l, w)), invalidate() {} };
}
