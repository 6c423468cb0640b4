/**
 * YAML frontmatter of skills and prompt templates:
 *
 *   ---
 *   name: my-skill
 *   description: What it does
 *   ---
 *   body…
 *
 * The YAML is parsed with js-yaml when it can be loaded (it ships with cosmiconfig, a dependency
 * of this package). When it cannot, a small fallback parser reads the subset frontmatter uses:
 *   - `key: value` lines (values: plain, 'single' or "double" quoted; true/false/null; numbers
 *     stay strings except in js-yaml),
 *   - block scalars `key: |` (keep newlines) and `key: >` (fold lines), with indented lines below,
 *   - lists (`key:` then indented `- item` lines, or `key: [a, b]`),
 *   - one level of nested `key:` then indented `sub: value` lines (returned as an object).
 * It does not handle anchors, multi-document streams, flow maps or nesting deeper than one level.
 * A frontmatter that does not parse is an error naming the problem; the caller reports it.
 */
import { createRequire } from "node:module";

export interface Frontmatter {
  frontmatter: Record<string, unknown>;
  body: string;
}

type YamlLoad = (text: string) => unknown;
let yamlLoad: YamlLoad | null | undefined;

function loadYaml(): YamlLoad | null {
  if (yamlLoad !== undefined) return yamlLoad;
  try {
    const req = createRequire(import.meta.url);
    const mod = req("js-yaml") as { load?: YamlLoad };
    yamlLoad = typeof mod.load === "function" ? mod.load : null;
  } catch {
    yamlLoad = null;
  }
  return yamlLoad;
}

/** Force the fallback parser (tests) or go back to automatic choice (`undefined`). */
export function setYamlParserForTests(mode: "fallback" | undefined): void {
  yamlLoad = mode === "fallback" ? null : undefined;
}

/** Split `text` into frontmatter (parsed) and body. No frontmatter → `{frontmatter: {}, body: text}`. */
export function parseFrontmatter(text: string): Frontmatter {
  const normalized = text.replace(/\r\n?/g, "\n");
  if (!normalized.startsWith("---")) return { frontmatter: {}, body: normalized };
  const firstNl = normalized.indexOf("\n");
  if (firstNl === -1 || normalized.slice(3, firstNl).trim() !== "") return { frontmatter: {}, body: normalized };
  const end = normalized.indexOf("\n---", firstNl - 1);
  if (end === -1) return { frontmatter: {}, body: normalized };
  const yamlText = normalized.slice(firstNl + 1, end);
  let after = normalized.slice(end + 4);
  // Whatever follows the closing marker on its line is ignored.
  const lineEnd = after.indexOf("\n");
  after = lineEnd === -1 ? "" : after.slice(lineEnd + 1);
  const body = after.trim();
  if (!yamlText.trim()) return { frontmatter: {}, body };
  const load = loadYaml();
  const parsed = load ? load(yamlText) : parseSimpleYaml(yamlText);
  if (parsed === null || parsed === undefined) return { frontmatter: {}, body };
  if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("frontmatter is not a key: value mapping");
  return { frontmatter: parsed as Record<string, unknown>, body };
}

/** The body without its frontmatter (a frontmatter that does not parse is dropped all the same). */
export function stripFrontmatter(text: string): string {
  try {
    return parseFrontmatter(text).body;
  } catch {
    const normalized = text.replace(/\r\n?/g, "\n");
    const end = normalized.indexOf("\n---", 3);
    return end === -1 ? normalized : normalized.slice(end + 4).replace(/^[^\n]*\n?/, "").trim();
  }
}

// ---- fallback parser --------------------------------------------------------------------------

function unquote(raw: string): unknown {
  const v = raw.trim();
  if (v === "") return "";
  if (v.startsWith('"')) {
    if (!v.endsWith('"') || v.length < 2) throw new Error(`unterminated double-quoted value: ${v}`);
    return JSON.parse(v);
  }
  if (v.startsWith("'")) {
    if (!v.endsWith("'") || v.length < 2) throw new Error(`unterminated single-quoted value: ${v}`);
    return v.slice(1, -1).replace(/''/g, "'");
  }
  if (v === "true") return true;
  if (v === "false") return false;
  if (v === "null" || v === "~") return null;
  if (v.startsWith("[") && v.endsWith("]")) {
    const inner = v.slice(1, -1).trim();
    return inner ? inner.split(",").map((s) => unquote(s)) : [];
  }
  // A trailing comment on a plain value.
  const hash = v.search(/\s#/);
  return hash === -1 ? v : v.slice(0, hash).trimEnd();
}

const indentOf = (line: string) => line.length - line.trimStart().length;

export function parseSimpleYaml(text: string): Record<string, unknown> {
  const lines = text.split("\n");
  const out: Record<string, unknown> = {};
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim() || line.trimStart().startsWith("#")) {
      i++;
      continue;
    }
    if (indentOf(line) > 0) throw new Error(`unexpected indentation on line ${i + 1}: ${line.trim()}`);
    const m = /^([^:#][^:]*?)\s*:(?:\s+(.*)|\s*)$/.exec(line);
    if (!m) throw new Error(`line ${i + 1} is not "key: value": ${line}`);
    const key = m[1]!.trim();
    const rest = (m[2] ?? "").trim();
    i++;
    // Indented block below.
    const block: string[] = [];
    while (i < lines.length && (lines[i]!.trim() === "" || indentOf(lines[i]!) > 0)) block.push(lines[i++]!);
    while (block.length && !block[block.length - 1]!.trim()) block.pop();
    if (rest === "|" || rest === ">" || /^[|>][+-]?$/.test(rest)) {
      const minIndent = Math.min(...block.filter((l) => l.trim()).map(indentOf));
      const body = block.map((l) => l.slice(Number.isFinite(minIndent) ? minIndent : 0));
      out[key] = rest.startsWith("|") ? body.join("\n") : foldLines(body);
      if (!rest.endsWith("-") && out[key]) out[key] = `${out[key]}\n`;
      continue;
    }
    if (rest) {
      if (block.length) {
        // A plain scalar continued on indented lines folds into one line.
        out[key] = [rest, ...block.map((l) => l.trim())].filter(Boolean).join(" ");
      } else out[key] = unquote(rest);
      continue;
    }
    if (!block.length) {
      out[key] = null;
      continue;
    }
    const items = block.filter((l) => l.trim() && !l.trim().startsWith("#"));
    if (items.every((l) => l.trim().startsWith("- ") || l.trim() === "-")) {
      out[key] = items.map((l) => unquote(l.trim().slice(1)));
      continue;
    }
    const nested: Record<string, unknown> = {};
    for (const l of items) {
      const nm = /^\s+([^:#][^:]*?)\s*:(?:\s+(.*)|\s*)$/.exec(l);
      if (!nm) throw new Error(`cannot read "${l.trim()}" under "${key}"`);
      nested[nm[1]!.trim()] = unquote(nm[2] ?? "");
    }
    out[key] = nested;
  }
  return out;
}

function foldLines(lines: string[]): string {
  const paras: string[] = [];
  let cur: string[] = [];
  for (const l of lines) {
    if (!l.trim()) {
      paras.push(cur.join(" "));
      cur = [];
    } else cur.push(l.trim());
  }
  paras.push(cur.join(" "));
  return paras.join("\n");
}
