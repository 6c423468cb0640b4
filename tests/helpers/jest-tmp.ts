/**
 * Jest setup (setupFilesAfterEnv): every temporary folder a test makes is removed even when the
 * test fails. `os.tmpdir()` follows TMPDIR, so each test file gets its own folder (for what its
 * module body and beforeAll hooks make, removed after the file) and each test a folder of its
 * own inside it (removed after the test, pass or fail). Helpers and tests keep calling
 * mkdtempSync(join(tmpdir(), …)) as usual.
 */
import { afterAll, afterEach, beforeEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";

const outer = process.env.TMPDIR;
const base = outer && outer.length > 0 ? outer : "/tmp";
mkdirSync(base, { recursive: true });
const fileDir = mkdtempSync(join(base, "pi-test-"));
process.env.TMPDIR = fileDir;
let testDir: string | undefined;

const remove = (dir: string) => {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
  } catch {
    /* a file still held open by a dying child: left for the OS */
  }
};

beforeEach(() => {
  testDir = mkdtempSync(join(fileDir, "t-"));
  process.env.TMPDIR = testDir;
});

afterEach(() => {
  process.env.TMPDIR = fileDir;
  if (testDir) remove(testDir);
  testDir = undefined;
});

afterAll(() => {
  if (outer === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = outer;
  remove(fileDir);
});
