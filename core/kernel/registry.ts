/**
 * Named registries on the kernel. Every name conflict produces a diagnostic, never silence.
 *
 * Policy: the first registration of a name wins, unless the new one says `override: true`
 * (an extension tool replacing a built-in) — then it replaces and the replacement is reported
 * as info. Entries remember their source (plugin name or extension path).
 */
import type { Diagnostic } from "./types.js";

export interface RegistryEntry<T> {
  name: string;
  value: T;
  source: string;
  /** Monotonic registration order; stable listings. */
  order: number;
}

export interface RegisterOptions {
  /** Replace an existing entry of that name instead of being refused. */
  override?: boolean;
}

let orderCounter = 0;

export class Registry<T> {
  private readonly entries = new Map<string, RegistryEntry<T>>();
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly kind: string,
    private readonly report: (d: Diagnostic) => void,
  ) {}

  /**
   * Add `value` under `name`. Returns an unregister function, or undefined when refused.
   */
  register(name: string, value: T, source: string, opts: RegisterOptions = {}): (() => void) | undefined {
    const existing = this.entries.get(name);
    if (existing) {
      if (!opts.override) {
        this.report({
          level: "warning",
          source,
          message: `${this.kind} "${name}" from ${source} conflicts with the one from ${existing.source}; keeping ${existing.source}'s`,
        });
        return undefined;
      }
      this.report({
        level: "info",
        source,
        message: `${this.kind} "${name}" from ${source} replaces the one from ${existing.source}`,
      });
    }
    const entry: RegistryEntry<T> = { name, value, source, order: ++orderCounter };
    this.entries.set(name, entry);
    this.changed();
    return () => {
      if (this.entries.get(name) === entry) {
        this.entries.delete(name);
        if (existing && opts.override) this.entries.set(name, existing);
        this.changed();
      }
    };
  }

  get(name: string): T | undefined {
    return this.entries.get(name)?.value;
  }

  entry(name: string): RegistryEntry<T> | undefined {
    return this.entries.get(name);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  list(): RegistryEntry<T>[] {
    return [...this.entries.values()].sort((a, b) => a.order - b.order);
  }

  names(): string[] {
    return this.list().map((e) => e.name);
  }

  /** Remove every entry that came from `source` (an extension being reloaded). */
  removeSource(source: string): void {
    let any = false;
    for (const [k, e] of this.entries) {
      if (e.source === source) {
        this.entries.delete(k);
        any = true;
      }
    }
    if (any) this.changed();
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed() {
    for (const l of this.listeners) l();
  }
}
