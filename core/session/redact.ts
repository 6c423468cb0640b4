/**
 * Keeping credentials out of session files and exports.
 *
 * The session remembers every secret it hands to a provider (API keys, header values) and
 * replaces each occurrence in what it stores with a marker. A tool that prints the key (`env`,
 * `cat ~/.pi/agent/auth.json`) still shows it to the model in this run, but the file — and every
 * export made from it — never holds the value.
 */

export const REDACTED = "[redacted]";
/** Shorter values are not treated as secrets (they would match ordinary words). */
export const MIN_SECRET_LENGTH = 8;

export class SecretSet {
  private readonly values = new Set<string>();
  private sorted: string[] | undefined;

  /** Remember a value (and, for "Bearer x" header values, the token x). */
  add(value: unknown): void {
    if (typeof value !== "string") return;
    const v = value.trim();
    if (v.length < MIN_SECRET_LENGTH || this.values.has(v)) return;
    this.values.add(v);
    this.sorted = undefined;
    const bearer = /^(?:bearer|basic|token)\s+(\S+)$/i.exec(v);
    if (bearer) this.add(bearer[1]);
  }

  get size(): number {
    return this.values.size;
  }

  has(value: string): boolean {
    return this.values.has(value);
  }

  /** The text with every known secret replaced (longest first, so a key inside a header value goes too). */
  redactText(text: string): string {
    if (!this.values.size || !text) return text;
    this.sorted ??= [...this.values].sort((a, b) => b.length - a.length);
    let out = text;
    for (const s of this.sorted) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /**
   * A copy of `value` with secrets replaced in every string inside it; `value` itself when it
   * holds none (the common case costs one JSON.stringify).
   */
  redact<T>(value: T): T {
    if (!this.values.size || value === undefined || value === null) return value;
    if (typeof value === "string") return this.redactText(value) as T;
    if (typeof value !== "object") return value;
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch {
      return value;
    }
    if (json === undefined) return value;
    let hit = false;
    for (const s of this.values) {
      // Secrets as they appear inside a JSON string literal.
      const enc = JSON.stringify(s).slice(1, -1);
      if (json.includes(enc)) {
        hit = true;
        break;
      }
    }
    if (!hit) return value;
    return deepRedact(value, (t) => this.redactText(t)) as T;
  }
}

function deepRedact(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => deepRedact(v, fn));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = deepRedact(v, fn);
    return out;
  }
  return value;
}
