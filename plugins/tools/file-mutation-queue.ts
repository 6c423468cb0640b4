/**
 * Serialises changes to one file: an edit and a write of the same path (or of two paths that
 * resolve to the same real file) run one after the other; different files run concurrently.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";

const tails = new Map<string, Promise<void>>();

function queueKey(filePath: string): string {
  const abs = resolve(filePath);
  try {
    return realpathSync.native(abs);
  } catch {
    return abs; // not created yet
  }
}

export async function withFileMutationQueue<T>(filePath: string, fn: () => Promise<T>): Promise<T> {
  const key = queueKey(filePath);
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}
