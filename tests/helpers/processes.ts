/** Small helpers for tests that start processes and wait for their end. */
import { readFileSync } from "node:fs";

/** Alive and not a zombie (a killed child whose parent is gone may linger as a zombie until reaped). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The message of the error `p` rejects with; fails the test when it resolves. */
export async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected the command to fail");
}
