/**
 * The host for pi-tui components (`@earendil-works/pi-tui`, the same module instance extensions
 * import under either scope: the extension loader aliases `@mariozechner/pi-tui` to it too). A component renders to lines for a width; here its lines are
 * measured and cut with pi-tui's own helpers (visibleWidth, truncateToWidth: ANSI styling and
 * wide characters count as pi-tui counts them), stripped of what blessed cannot draw (pi-tui's
 * cursor marker and other APC/OSC sequences; SGR styling stays) and never wider than the
 * region. Focus follows pi-tui's Focusable contract (`focused` is set while the component has
 * the keyboard and cleared when it closes); keys arrive as the raw terminal sequences pi-tui's
 * matchesKey() reads.
 *
 * pi-tui loads on first need (it costs ~100 ms), started when the TUI starts: until then our own
 * measurement (text.ts, which counts the same East Asian widths) stands in.
 */
import { CURSOR_MARK, fitLine } from "./text.js";

interface PiTuiUtils {
  visibleWidth(s: string): number;
  truncateToWidth(s: string, width: number, ellipsis?: string, pad?: boolean): string;
}

let utils: PiTuiUtils | undefined;
let loading: Promise<PiTuiUtils | undefined> | undefined;

/** Load pi-tui's measuring helpers; resolves undefined when it is not installed. */
export function loadPiTui(): Promise<PiTuiUtils | undefined> {
  loading ??= import("@earendil-works/pi-tui")
    .then((m) => (utils = m as unknown as PiTuiUtils))
    .catch(() => undefined);
  return loading;
}

/** pi-tui's module once loaded (undefined before). */
export function piTuiModule(): unknown {
  return utils;
}

/** True once pi-tui's helpers measure component lines. */
export function piTuiLoaded(): boolean {
  return utils !== undefined;
}

const PI_TUI_CURSOR = "\x1b_pi:c\x07";
// APC, OSC (hyperlinks, titles), DCS/PM/SOS strings.
const STRING_SEQ = /\x1b[_\]P^X][^\x07\x1b]*(?:\x07|\x1b\\)?/g;
// CSI sequences other than SGR (cursor moves, erases) would move blessed's cursor.
const NON_SGR_CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;

const ZWJ_SEQUENCE = /(\p{Extended_Pictographic}[\u{fe0f}\u{1f3fb}-\u{1f3ff}]?)(?:\u200d\p{Extended_Pictographic}[\u{fe0f}\u{1f3fb}-\u{1f3ff}]?)+/gu;

/** One component line made safe for a blessed region `width` columns wide. */
export function fitComponentLine(line: unknown, width: number): string {
  let s = String(line ?? "");
  // pi-tui's cursor marker becomes ours (the renderer places the terminal's cursor there).
  if (s.includes(PI_TUI_CURSOR)) s = s.replaceAll(PI_TUI_CURSOR, CURSOR_MARK);
  if (s.includes("\x1b")) s = s.replace(STRING_SEQ, "").replace(NON_SGR_CSI, (m) => (m.endsWith("m") ? m : ""));
  // blessed draws code points, not grapheme clusters: a ZWJ sequence (👨‍👩‍👧‍👦) would come out as
  // one emoji per member, wider than the 2 columns the component laid it out in. Keep its first.
  if (s.includes("\u200d")) s = s.replace(ZWJ_SEQUENCE, "$1");
  const u = utils;
  if (!u) return fitLine(s, width);
  // pi-tui measures; our sanitize drops the control characters blessed would draw as garbage.
  const clean = fitLine(s, Number.MAX_SAFE_INTEGER);
  if (u.visibleWidth(clean) <= width) return clean;
  const cut = u.truncateToWidth(clean, width, "");
  // truncateToWidth may leave a wide character's half: measure again and fall back to ours.
  return u.visibleWidth(cut) <= width ? cut : fitLine(clean, width);
}

/** Render a component (or strings, or an array of either) to lines no wider than `width`. */
export function renderComponent(c: unknown, width: number): string[] {
  if (c === undefined || c === null || c === false) return [];
  if (typeof c === "string") return c.split("\n").map((l) => fitComponentLine(l, width));
  if (Array.isArray(c)) return c.flatMap((x) => renderComponent(x, width));
  const r = (c as { render?: unknown }).render;
  if (typeof r !== "function") return [];
  const out = r.call(c, Math.max(1, width)) as unknown;
  const list = Array.isArray(out) ? out : out === undefined || out === null ? [] : [String(out)];
  const lines: string[] = [];
  for (const l of list) for (const part of String(l ?? "").split("\n")) lines.push(fitComponentLine(part, width));
  return lines;
}

/** pi-tui's Focusable: tell a component whether it has the keyboard. */
export function setFocused(c: unknown, on: boolean): void {
  if (c && typeof c === "object" && "focused" in c) {
    try {
      (c as { focused: boolean }).focused = on;
    } catch {
      /* a read-only focused property */
    }
  }
}

/** Ask a component to drop its cached lines (theme change, resize). */
export function invalidate(c: unknown): void {
  try {
    (c as { invalidate?: () => void } | undefined)?.invalidate?.();
  } catch {
    /* a component failing here is reported when it renders */
  }
}

export function disposeComponent(c: unknown): void {
  try {
    (c as { dispose?: () => void } | undefined)?.dispose?.();
  } catch {
    /* a component's dispose failing must not break the UI */
  }
}

// ---- overlays ----------------------------------------------------------------------------------

export type SizeValue = number | `${number}%`;
export type OverlayAnchor = "center" | "top-left" | "top-right" | "bottom-left" | "bottom-right" | "top-center" | "bottom-center" | "left-center" | "right-center";

/** pi-tui's overlay options (the subset that places and sizes an overlay). */
export interface OverlayOptions {
  width?: SizeValue;
  minWidth?: number;
  maxHeight?: SizeValue;
  anchor?: OverlayAnchor;
  offsetX?: number;
  offsetY?: number;
  row?: SizeValue;
  col?: SizeValue;
  margin?: number | { top?: number; right?: number; bottom?: number; left?: number };
  visible?: (termWidth: number, termHeight: number) => boolean;
  nonCapturing?: boolean;
}

function size(v: unknown, total: number): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return Math.floor(v);
  if (typeof v === "string") {
    const m = /^(\d+(?:\.\d+)?)%$/.exec(v.trim());
    if (m) return Math.floor((total * parseFloat(m[1]!)) / 100);
  }
  return undefined;
}

/** The width an overlay gets before it renders (its height depends on what it renders). */
export function overlayWidth(o: OverlayOptions | undefined, W: number): number {
  const m = margins(o);
  const avail = Math.max(1, W - m.left - m.right);
  let w = size(o?.width, W) ?? Math.min(80, avail);
  if (o?.minWidth !== undefined) w = Math.max(w, o.minWidth);
  return Math.max(1, Math.min(w, avail));
}

function margins(o: OverlayOptions | undefined) {
  const m = typeof o?.margin === "number" ? { top: o.margin, right: o.margin, bottom: o.margin, left: o.margin } : (o?.margin ?? {});
  return { top: Math.max(0, m.top ?? 0), right: Math.max(0, m.right ?? 0), bottom: Math.max(0, m.bottom ?? 0), left: Math.max(0, m.left ?? 0) };
}

/** Where an overlay of `lines` rows goes on a W×H screen, and how many rows it keeps. */
export function overlayLayout(o: OverlayOptions | undefined, lines: number, W: number, H: number): { row: number; col: number; width: number; height: number } {
  const m = margins(o);
  const availW = Math.max(1, W - m.left - m.right);
  const availH = Math.max(1, H - m.top - m.bottom);
  const width = overlayWidth(o, W);
  const maxH = size(o?.maxHeight, H);
  const height = Math.max(1, Math.min(lines, maxH !== undefined ? Math.max(1, maxH) : lines, availH));
  const anchor = o?.anchor ?? "center";
  const vert = anchor.startsWith("top") ? "top" : anchor.startsWith("bottom") ? "bottom" : "center";
  const horiz = anchor.endsWith("left") ? "left" : anchor.endsWith("right") ? "right" : "center";
  const pct = (v: unknown, room: number, start: number): number | undefined => {
    if (typeof v === "number") return v;
    const p = typeof v === "string" ? /^(\d+(?:\.\d+)?)%$/.exec(v.trim()) : null;
    return p ? start + Math.floor(Math.max(0, room) * (parseFloat(p[1]!) / 100)) : undefined;
  };
  let row = pct(o?.row, availH - height, m.top) ?? (vert === "top" ? m.top : vert === "bottom" ? m.top + availH - height : m.top + Math.floor((availH - height) / 2));
  let col = pct(o?.col, availW - width, m.left) ?? (horiz === "left" ? m.left : horiz === "right" ? m.left + availW - width : m.left + Math.floor((availW - width) / 2));
  row += o?.offsetY ?? 0;
  col += o?.offsetX ?? 0;
  row = Math.max(m.top, Math.min(row, H - m.bottom - height));
  col = Math.max(m.left, Math.min(col, W - m.right - width));
  return { row: Math.max(0, row), col: Math.max(0, col), width, height };
}
