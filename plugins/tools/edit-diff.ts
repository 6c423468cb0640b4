/**
 * The matching and diffing behind the edit tool.
 *
 * Each edit's oldText is looked for exactly first; failing that, in a normalised view of the
 * file (line endings, trailing whitespace, NFKC, typographic quotes, dashes and spaces) that
 * remembers where every normalised character came from. Either way the match is a range of the
 * original text, so only that range is replaced: the rest of the file keeps its bytes, its
 * line endings and its BOM, and the new text gets the file's line ending.
 */

export interface Edit {
  oldText: string;
  newText: string;
}

export function stripBom(text: string): { bom: string; text: string } {
  return text.charCodeAt(0) === 0xfeff ? { bom: "\uFEFF", text: text.slice(1) } : { bom: "", text };
}

/** The line ending of the first line that has one ("\n" when there is none). */
export function detectLineEnding(text: string): "\r\n" | "\n" {
  const lf = text.indexOf("\n");
  return lf > 0 && text.charCodeAt(lf - 1) === 13 ? "\r\n" : "\n";
}

export function normalizeToLF(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

export function restoreLineEndings(text: string, ending: "\r\n" | "\n"): string {
  return ending === "\r\n" ? text.replace(/\n/g, "\r\n") : text;
}

// ---- the normalised view ----------------------------------------------------------------------

const QUOTES_SINGLE = /[\u2018\u2019\u201A\u201B]/g;
const QUOTES_DOUBLE = /[\u201C\u201D\u201E\u201F]/g;
const DASHES = /[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g;
const SPACES = /[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g;
const CLUSTER = /[\s\S]\p{M}*/gu;
const WS = /\s/;

function normalizeCluster(c: string): string {
  return c.normalize("NFKC").replace(QUOTES_SINGLE, "'").replace(QUOTES_DOUBLE, '"').replace(DASHES, "-").replace(SPACES, " ");
}

export interface NormalizedView {
  text: string;
  /** For each character of `text`, where its source starts in the original. */
  starts: number[];
  /** …and where its source ends (exclusive). */
  ends: number[];
}

/**
 * Normalise `raw` for tolerant matching: CRLF/CR → LF, trailing whitespace of each line
 * dropped, each character (with its combining marks) NFKC-normalised, typographic quotes,
 * dashes and spaces made ASCII. With `withMap`, records each character's source range.
 */
export function buildNormalizedView(raw: string, withMap = true): NormalizedView {
  let text = "";
  const starts: number[] = [];
  const ends: number[] = [];
  const len = raw.length;
  let ls = 0;
  while (ls <= len) {
    let le = ls;
    while (le < len && raw.charCodeAt(le) !== 10 && raw.charCodeAt(le) !== 13) le++;
    // le: index of the line break (or len). Break length: \r\n = 2, \r or \n = 1.
    const brk = le >= len ? 0 : raw.charCodeAt(le) === 13 && raw.charCodeAt(le + 1) === 10 ? 2 : 1;
    let te = le;
    while (te > ls && WS.test(raw[te - 1]!)) te--;
    const line = raw.slice(ls, te);
    if (/^[\x00-\x7f]*$/.test(line)) {
      text += line;
      if (withMap) for (let i = ls; i < te; i++) {
        starts.push(i);
        ends.push(i + 1);
      }
    } else {
      CLUSTER.lastIndex = 0;
      for (let m = CLUSTER.exec(line); m; m = CLUSTER.exec(line)) {
        const n = normalizeCluster(m[0]);
        text += n;
        if (withMap) {
          const s = ls + m.index;
          const e = s + m[0].length;
          for (let k = 0; k < n.length; k++) {
            starts.push(s);
            ends.push(e);
          }
        }
      }
    }
    if (brk === 0) break;
    text += "\n";
    if (withMap) {
      starts.push(te);
      ends.push(le + brk);
    }
    ls = le + brk;
  }
  return { text, starts, ends };
}

export function normalizeForFuzzyMatch(text: string): string {
  return buildNormalizedView(text, false).text;
}

// ---- applying edits ---------------------------------------------------------------------------

function occurrences(haystack: string, needle: string): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) {
    if (first < 0) first = i;
    count++;
  }
  return { count, first };
}

function which(i: number, total: number): string {
  return total === 1 ? "oldText" : `edits[${i}].oldText`;
}

export interface EditMatch {
  index: number;
  /** Range in the original text. */
  start: number;
  end: number;
  fuzzy: boolean;
}

/**
 * Locate every edit in `raw` (the file's text, BOM removed). Throws a message naming the edit
 * when one is empty, missing, ambiguous or overlaps another.
 */
export function locateEdits(raw: string, edits: readonly Edit[], path: string): EditMatch[] {
  const total = edits.length;
  const eol = detectLineEnding(raw);
  let view: NormalizedView | undefined;
  const found: EditMatch[] = [];
  edits.forEach((edit, i) => {
    if (typeof edit?.oldText !== "string" || typeof edit?.newText !== "string")
      throw new Error(`edits[${i}] needs oldText and newText strings (${path})`);
    const old = normalizeToLF(edit.oldText);
    if (old.length === 0) throw new Error(`${which(i, total)} must not be empty (${path}).`);
    // 1. exact, in the file's own line endings
    const candidates = eol === "\r\n" && old.includes("\n") ? [restoreLineEndings(old, "\r\n"), edit.oldText] : [edit.oldText];
    for (const c of candidates) {
      const { count, first } = occurrences(raw, c);
      if (count > 1)
        throw new Error(
          `Found ${count} occurrences of ${total === 1 ? "the text" : `edits[${i}].oldText`} in ${path}. ${which(i, total)} must match exactly one place: include more of the surrounding lines to make it unique.`,
        );
      if (count === 1) {
        found.push({ index: i, start: first, end: first + c.length, fuzzy: false });
        return;
      }
    }
    // 2. normalised
    view ??= buildNormalizedView(raw);
    const needle = normalizeForFuzzyMatch(old);
    const { count, first } = needle ? occurrences(view.text, needle) : { count: 0, first: -1 };
    if (count === 0)
      throw new Error(
        `Could not find ${total === 1 ? "the text to replace" : `edits[${i}].oldText`} in ${path}. ${which(i, total)} must match the file exactly, whitespace and line breaks included; read the file again to copy it.`,
      );
    if (count > 1)
      throw new Error(
        `Found ${count} occurrences of ${total === 1 ? "the text" : `edits[${i}].oldText`} in ${path}. ${which(i, total)} must match exactly one place: include more of the surrounding lines to make it unique.`,
      );
    found.push({ index: i, start: view.starts[first]!, end: view.ends[first + needle.length - 1]!, fuzzy: true });
  });
  const sorted = [...found].sort((a, b) => a.start - b.start);
  for (let k = 1; k < sorted.length; k++) {
    if (sorted[k]!.start < sorted[k - 1]!.end)
      throw new Error(
        `edits[${sorted[k - 1]!.index}] and edits[${sorted[k]!.index}] overlap in ${path}. Combine them into one edit, or make them cover separate parts of the file.`,
      );
  }
  return sorted;
}

/**
 * Apply `edits` to `raw` (BOM removed). New text is given the file's line ending. Returns the
 * new text; throws when nothing would change.
 */
export function applyEdits(raw: string, edits: readonly Edit[], path: string): { content: string; matches: EditMatch[] } {
  const matches = locateEdits(raw, edits, path);
  const eol = detectLineEnding(raw);
  let out = raw;
  for (let k = matches.length - 1; k >= 0; k--) {
    const m = matches[k]!;
    const replacement = restoreLineEndings(normalizeToLF(edits[m.index]!.newText), eol);
    out = out.slice(0, m.start) + replacement + out.slice(m.end);
  }
  if (out === raw) {
    throw new Error(
      edits.length === 1
        ? `No changes made to ${path}: newText produces exactly the text that is already there.`
        : `No changes made to ${path}: the edits produce exactly the text that is already there.`,
    );
  }
  return { content: out, matches };
}

// ---- diff -------------------------------------------------------------------------------------

export interface DiffPart {
  kind: "equal" | "removed" | "added";
  lines: string[];
}

/** Above this many differences the middle of the two texts is shown as one replacement. */
const MAX_EDIT_DISTANCE = 4000;

/** Myers' O(ND) diff of two sequences of line ids: the list of operations, in order. */
function myers(a: Int32Array, b: Int32Array): Array<0 | 1 | 2> | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && d <= MAX_EDIT_DISTANCE; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return undefined;
  // Walk back through the trace. 0 = equal, 1 = removed (from a), 2 = added (from b).
  const ops: Array<0 | 1 | 2> = [];
  let x = n;
  let y = m;
  for (let d = found; d >= 0; d--) {
    const t = trace[d]!;
    const base = d + 1;
    const k = x - y;
    const prevK = k === -d || (k !== d && t[base + k - 1]! < t[base + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : t[base + prevK]!;
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(0);
      x--;
      y--;
    }
    if (d > 0) {
      ops.push(x === prevX ? 2 : 1);
      x = prevX;
      y = prevY;
    }
  }
  return ops.reverse();
}

/** Line diff of two texts: equal / removed / added runs; in a change, removals come first. */
export function diffLines(before: string, after: string): DiffPart[] {
  const a = before.split("\n");
  const b = after.split("\n");
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);

  const parts: DiffPart[] = [];
  const push = (kind: DiffPart["kind"], line: string) => {
    const last = parts[parts.length - 1];
    if (last && last.kind === kind) last.lines.push(line);
    else parts.push({ kind, lines: [line] });
  };
  for (let i = 0; i < pre; i++) push("equal", a[i]!);

  const ids = new Map<string, number>();
  const id = (s: string) => {
    let v = ids.get(s);
    if (v === undefined) ids.set(s, (v = ids.size));
    return v;
  };
  const ops = midA.length && midB.length ? myers(Int32Array.from(midA, id), Int32Array.from(midB, id)) : undefined;
  if (ops) {
    let i = 0;
    let j = 0;
    let removed: string[] = [];
    let added: string[] = [];
    const flushChange = () => {
      for (const l of removed) push("removed", l);
      for (const l of added) push("added", l);
      removed = [];
      added = [];
    };
    for (const op of ops) {
      if (op === 0) {
        flushChange();
        push("equal", midA[i++]!);
        j++;
      } else if (op === 1) removed.push(midA[i++]!);
      else added.push(midB[j++]!);
    }
    flushChange();
  } else {
    for (const l of midA) push("removed", l);
    for (const l of midB) push("added", l);
  }
  for (let i = a.length - suf; i < a.length; i++) push("equal", a[i]!);
  return parts;
}

/**
 * A unified-style diff with line numbers, as pi's edit tool reports it: "+N text" for added
 * lines (new numbering), "-N text" for removed (old numbering), " N text" for context, and
 * " … ..." where unchanged lines are skipped. Also returns the first changed line (new file).
 * A newline that ends both texts ends their last line; it does not start one more, empty line.
 */
export function generateDiffString(before: string, after: string, contextLines = 4): { diff: string; firstChangedLine: number | undefined } {
  if (before.endsWith("\n") && after.endsWith("\n")) {
    before = before.slice(0, -1);
    after = after.slice(0, -1);
  }
  const parts = diffLines(before, after);
  const width = String(Math.max(before.split("\n").length, after.split("\n").length)).length;
  const num = (n: number) => String(n).padStart(width, " ");
  const gap = ` ${"".padStart(width, " ")} ...`;
  const out: string[] = [];
  let oldNo = 1;
  let newNo = 1;
  let firstChangedLine: number | undefined;
  parts.forEach((part, idx) => {
    const lines = part.lines;
    if (part.kind === "removed") {
      firstChangedLine ??= newNo;
      for (const l of lines) out.push(`-${num(oldNo++)} ${l}`);
      return;
    }
    if (part.kind === "added") {
      firstChangedLine ??= newNo;
      for (const l of lines) out.push(`+${num(newNo++)} ${l}`);
      return;
    }
    const afterChange = idx > 0;
    const beforeChange = idx < parts.length - 1;
    const context = (from: number, to: number) => {
      for (let i = from; i < to; i++) out.push(` ${num(oldNo + i)} ${lines[i]}`);
    };
    const n = lines.length;
    if (afterChange && beforeChange && n > contextLines * 2) {
      context(0, contextLines);
      out.push(gap);
      context(n - contextLines, n);
    } else if (afterChange && beforeChange) {
      context(0, n);
    } else if (afterChange) {
      context(0, Math.min(contextLines, n));
      if (n > contextLines) out.push(gap);
    } else if (beforeChange) {
      if (n > contextLines) out.push(gap);
      context(Math.max(0, n - contextLines), n);
    }
    oldNo += n;
    newNo += n;
  });
  return { diff: out.join("\n"), firstChangedLine };
}
