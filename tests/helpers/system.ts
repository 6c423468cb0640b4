/**
 * System programs some tests need (installed by scripts/system-deps.sh, which `npm test` runs).
 * A test that needs a missing one fails naming the Debian package and the install command; it
 * never skips silently.
 */
import { execFileSync } from "node:child_process";

export function hasProgram(bin: string, args: string[] = ["--version"]): boolean {
  try {
    execFileSync(bin, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Throws (failing the test or hook that calls it) when `bin` cannot be run. */
export function requireProgram(bin: string, debianPackage: string, args: string[] = ["--version"]): void {
  if (hasProgram(bin, args)) return;
  throw new Error(
    `this test needs \`${bin}\` (Debian package ${debianPackage}), which is not installed: ` +
      `run \`bash scripts/system-deps.sh\` as root, or \`sudo apt-get install -y ${debianPackage}\``,
  );
}

/** Polls `test` until it returns a truthy value; throws after `timeoutMs` naming `what`. */
export async function waitUntil<T>(test: () => T | Promise<T>, what: string, timeoutMs = 60_000, intervalMs = 25): Promise<NonNullable<T>> {
  const t0 = Date.now();
  for (;;) {
    const v = await test();
    if (v) return v as NonNullable<T>;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
