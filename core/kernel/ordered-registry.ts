/**
 * A registry of unnamed entries kept in registration order: several may be registered by one
 * source, none replaces another, and whoever reads them walks them in that order (tool renderer
 * resolvers chain through it; the last entry renderer for a custom type is the one drawn).
 */

export interface OrderedEntry<T> {
  value: T;
  /** The plugin or extension that registered it. */
  source: string;
}

export class OrderedRegistry<T> {
  private readonly entries: OrderedEntry<T>[] = [];

  constructor(readonly kind: string) {}

  /** Append `value`; returns the function that removes this entry (and only it). */
  add(value: T, source: string): () => void {
    const entry: OrderedEntry<T> = { value, source };
    this.entries.push(entry);
    return () => {
      const i = this.entries.indexOf(entry);
      if (i >= 0) this.entries.splice(i, 1);
    };
  }

  /** The entries in registration order (a copy). */
  list(): OrderedEntry<T>[] {
    return [...this.entries];
  }
}
