/**
 * The V8 settings a CLI binary runs with, set at start (runBinary) before the CLI's own modules
 * are compiled.
 *
 * - `--max-opt=1`: functions are compiled by V8's baseline compiler (Sparkplug) and never by its
 *   optimising compilers (Maglev, TurboFan). A run of the CLI is short bursts of work between
 *   waits on the model and on tools; the optimising compiler spent its time (on background
 *   threads, whose freed memory glibc keeps) on code that had stopped being hot, and the pages of
 *   its own machine code in the Node binary. Measured on Node 22 (docs/performance.md): every
 *   agent case as fast or faster, peak RSS 6–12 MiB lower, and an RPC session of 50 tool turns
 *   stays flat (it grew by ~8 MiB, all of it optimising-compiler memory). The cost is in long
 *   CPU-bound JavaScript: a diff of a 20,000-line file takes ~1.4x as long.
 * - `--semi-space-growth-factor=1`: the young generation keeps its start size instead of growing
 *   when many new objects survive (loading a long session: the entries it keeps). It grew to
 *   16 MiB for a 10,000-entry session; now more, cheaper scavenges move them to the old space.
 *
 * `PI_V8_FLAGS` replaces the list (`PI_V8_FLAGS=` keeps V8's defaults). The flags are part of
 * what the compile cache is keyed by (Node names its folder by V8's flag hash), so the cache's
 * warm-up applies the same ones (sdk/compile-cache.ts). An SDK host's own process is never
 * touched: only a binary's start-up calls this.
 */
import { setFlagsFromString } from "node:v8";

export const BINARY_V8_FLAGS = "--max-opt=1 --semi-space-growth-factor=1";

/** Apply the binary's V8 flags (or `PI_V8_FLAGS`'s); returns the list applied ("" for none). */
export function applyBinaryV8Flags(env: NodeJS.ProcessEnv = process.env): string {
  const flags = (env.PI_V8_FLAGS ?? BINARY_V8_FLAGS).trim();
  if (flags) setFlagsFromString(flags);
  return flags;
}
