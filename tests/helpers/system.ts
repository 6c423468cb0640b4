/**
 * System programs some tests need (installed by scripts/system-deps.sh, which `npm test` runs).
 * A test that needs a missing one fails naming the Debian package and the install command; it
 * never skips silently.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, sep } from "node:path";

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

/**
 * A new folder that the sandbox's workspace-write level does not make writable: not under /tmp,
 * $TMPDIR or the OS temp folder (all writable there). The home folder first; when HOME itself is
 * under /tmp (a throwaway HOME), /var/tmp or /dev/shm.
 */
export function mkdtempOutsideTmp(prefix: string): string {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const writableRoots = ["/tmp", process.env.TMPDIR, tmpdir()].filter((p): p is string => !!p).map(real);
  const inside = (p: string) => writableRoots.some((root) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep));
  for (const base of [homedir(), "/var/tmp", "/dev/shm"]) {
    const b = real(base);
    if (inside(b)) continue;
    try {
      accessSync(b, constants.W_OK);
      return mkdtempSync(join(b, prefix));
    } catch {
      // not writable here: try the next
    }
  }
  throw new Error(`no writable folder outside ${writableRoots.join(", ")} (tried the home folder, /var/tmp, /dev/shm)`);
}
