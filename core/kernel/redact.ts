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
  private readonly ownValues = new Set<string>();
  private sorted: string[] | undefined;
  private sortedFor = -1;

  /**
   * `parent` (default: the process-wide set, PROCESS_SECRETS) is consulted too, so every
   * credential the CLI knows is redacted, not only the ones this session handed to a provider.
   */
  constructor(private readonly parent: SecretSet | null = PROCESS_SECRETS ?? null) {}

  /** This set's values and its parent's. */
  private get values(): Set<string> {
    if (!this.parent || !this.parent.size) return this.ownValues;
    return new Set([...this.parent.values, ...this.ownValues]);
  }

  private version(): number {
    return this.ownValues.size + (this.parent ? this.parent.size * 100003 : 0);
  }

  /** Remember a value (and, for "Bearer x" header values, the token x). */
  add(value: unknown): void {
    if (typeof value !== "string") return;
    const v = value.trim();
    if (v.length < MIN_SECRET_LENGTH || this.ownValues.has(v)) return;
    this.ownValues.add(v);
    this.sorted = undefined;
    const bearer = /^(?:bearer|basic|token)\s+(\S+)$/i.exec(v);
    if (bearer) this.add(bearer[1]);
  }

  get size(): number {
    return this.ownValues.size + (this.parent?.size ?? 0);
  }

  has(value: string): boolean {
    return this.values.has(value);
  }

  /** The text with every known secret replaced (longest first, so a key inside a header value goes too). */
  redactText(text: string): string {
    if (!this.size || !text) return text;
    if (this.sortedFor !== this.version()) this.sorted = undefined;
    this.sortedFor = this.version();
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
    if (!this.size || value === undefined || value === null) return value;
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

// ---- every credential the CLI knows (security hardening) -----------------------------
/** Secrets known to the whole process (auth.json, provider env variables, MCP tokens); every SecretSet includes them. */
export const PROCESS_SECRETS: SecretSet = new SecretSet(null);

/** Names of environment variables that hold credentials. */
export const SECRET_ENV_NAME = /(^|_)(API_KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|ACCESS_KEY_ID|PASSWORD|PASSWD|CREDENTIALS?|AUTH)$/i;

const SECRET_FIELD = /key|token|access|refresh|secret|password|auth|cookie|credential/i;

/**
 * Remember the secret-looking strings inside `value`: every string under a field whose name
 * looks like a credential (`key`, `access`, `refresh`, `Authorization`, `X-Api-Key`, …), or
 * every string when `all` (the values of an MCP server's headers and env).
 */
export function addProcessSecrets(value: unknown, all = false, depth = 0): void {
  if (depth > 6 || value === null || value === undefined) return;
  if (typeof value === "string") {
    if (all) PROCESS_SECRETS.add(value);
  } else if (Array.isArray(value)) for (const v of value) addProcessSecrets(v, all, depth + 1);
  else if (typeof value === "object") {
    for (const [k, v] of Object.entries(value)) addProcessSecrets(v, all || SECRET_FIELD.test(k), depth + 1);
  }
}

/** Remember the values of the credential-looking variables of `env`. */
export function addEnvSecrets(env: NodeJS.ProcessEnv): void {
  for (const [k, v] of Object.entries(env)) if (v && SECRET_ENV_NAME.test(k)) PROCESS_SECRETS.add(v);
}

/** A diagnostic with every known secret replaced in its message, source and error (a copy; the original is untouched). */
export function redactDiagnostic<T extends { message: string; source: string; error?: unknown }>(d: T): T {
  if (!PROCESS_SECRETS.size) return d;
  const message = PROCESS_SECRETS.redactText(d.message);
  const source = PROCESS_SECRETS.redactText(d.source);
  let error = d.error;
  if (error instanceof Error) {
    const m = PROCESS_SECRETS.redactText(error.message);
    const st = error.stack === undefined ? undefined : PROCESS_SECRETS.redactText(error.stack);
    if (m !== error.message || st !== error.stack) {
      const copy = new Error(m);
      copy.name = error.name;
      copy.stack = st;
      error = copy;
    }
  } else if (error !== undefined) error = PROCESS_SECRETS.redact(error);
  if (message === d.message && source === d.source && error === d.error) return d;
  return { ...d, message, source, error };
}

let stderrRedacted = false;
/**
 * Every write to this process's stderr (diagnostics, a provider error that echoes the key, an
 * extension's console.error) passes through the known secrets first. Idempotent.
 */
export function redactProcessStderr(stream: NodeJS.WriteStream = process.stderr): void {
  if (stderrRedacted) return;
  stderrRedacted = true;
  const write = stream.write;
  stream.write = function redactedWrite(this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    if (PROCESS_SECRETS.size) {
      if (typeof chunk === "string") chunk = PROCESS_SECRETS.redactText(chunk);
      else if (chunk instanceof Uint8Array) {
        const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8");
        const clean = PROCESS_SECRETS.redactText(text);
        if (clean !== text) chunk = clean;
      }
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof stream.write;
}
