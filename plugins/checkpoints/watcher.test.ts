import { describe, it, expect, afterEach } from "@jest/globals";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointStore, DEFAULTS } from "./store.js";

const roots: string[] = [];
const stores: CheckpointStore[] = [];
afterEach(() => {
  while (stores.length) stores.pop()!.close();
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});

/** A project with a watched store whose git calls are counted. */
async function watchedProject() {
  const root = mkdtempSync(join(tmpdir(), "pi-cp-watch-"));
  roots.push(root);
  const cwd = join(root, "p");
  mkdirSync(join(cwd, "src", "deep"), { recursive: true });
  mkdirSync(join(cwd, "build"));
  writeFileSync(join(cwd, ".gitignore"), "build/\n*.log\n");
  writeFileSync(join(cwd, "src", "a.ts"), "a1\n");
  writeFileSync(join(cwd, "src", "deep", "b.ts"), "b1\n");
  writeFileSync(join(cwd, "run.sh"), "#!/bin/sh\n");
  const store = new CheckpointStore(cwd, join(root, "store"), DEFAULTS);
  stores.push(store);
  const calls: string[] = [];
  const git = store.git.bind(store);
  store.git = (args, opts) => {
    calls.push(args[0]!);
    return git(args, opts);
  };
  await store.snapshot("first");
  while (store.watchState === "starting") await new Promise((r) => setTimeout(r, 5));
  expect(store.watchState).toBe("ready");
  await store.snapshot("baseline"); // the first scan with the watches in place
  calls.length = 0;
  return { root, cwd, store, calls };
}

/** Another process changes the project (as bash or the user would). */
function sh(cwd: string, script: string): void {
  execFileSync("sh", ["-c", script], { cwd });
}

async function files(store: CheckpointStore, tree: string): Promise<string[]> {
  return (await store.git(["ls-tree", "-r", "--name-only", tree])).split("\n").filter(Boolean);
}

describe("the watcher between two whole-project captures", () => {
  it("needs no git process when nothing changed, and every kind of outside change is captured and restorable", async () => {
    const { cwd, store, calls } = await watchedProject();
    const base = await store.snapshot("unchanged");
    expect(calls).toEqual([]);

    const steps: Array<[string, (tree: string) => Promise<void>]> = [
      ["echo a2 > src/a.ts", async (t) => expect(await store.git(["show", `${t}:src/a.ts`])).toBe("a2\n")],
      ["rm src/deep/b.ts", async (t) => expect(await files(store, t)).not.toContain("src/deep/b.ts")],
      ["mv src/a.ts src/renamed.ts", async (t) => expect(await files(store, t)).toEqual(expect.arrayContaining(["src/renamed.ts"]))],
      ["chmod +x run.sh", async (t) => expect(await store.git(["ls-tree", t, "run.sh"])).toMatch(/^100755 /)],
      ["mkdir -p fresh/inner && echo n > fresh/inner/new.ts", async (t) => expect(await files(store, t)).toContain("fresh/inner/new.ts")],
      // The new folder is watched now: a file added to it later is seen too.
      ["echo m > fresh/inner/later.ts", async (t) => expect(await files(store, t)).toContain("fresh/inner/later.ts")],
      ["mv fresh moved", async (t) => expect(await files(store, t)).toEqual(expect.arrayContaining(["moved/inner/new.ts", "moved/inner/later.ts"]))],
      ["echo x > moved/inner/after-move.ts", async (t) => expect(await files(store, t)).toContain("moved/inner/after-move.ts")],
    ];
    let previous = base.tree;
    for (const [script, check] of steps) {
      sh(cwd, script);
      calls.length = 0;
      const snap = await store.snapshot(script);
      expect(calls).toContain("ls-files"); // a reported change means git looks (at the reported paths)
      expect(snap.tree).not.toBe(previous);
      await check(snap.tree);
      // And nothing more until the next change.
      calls.length = 0;
      expect((await store.snapshot("again")).tree).toBe(snap.tree);
      expect(calls).toEqual([]);
      previous = snap.tree;
    }

    // Ignored files change without a new tree; restoring the first tree gives the first files back exactly.
    sh(cwd, "echo out > build/o.js; echo log > x.log");
    expect((await store.snapshot("ignored")).tree).toBe(previous);
    await store.restore(base.tree, await store.diff(previous, base.tree));
    expect(readFileSync(join(cwd, "src", "a.ts"), "utf8")).toBe("a1\n");
    expect(readFileSync(join(cwd, "src", "deep", "b.ts"), "utf8")).toBe("b1\n");
    expect(existsSync(join(cwd, "moved"))).toBe(false);
    expect(existsSync(join(cwd, "src", "renamed.ts"))).toBe(false);
    expect(statSync(join(cwd, "run.sh")).mode & 0o111).toBe(0);
    expect((await store.snapshot("restored")).tree).toBe(base.tree);
  });

  it("a write/edit capture takes its file out of what was reported; another file changed meanwhile still makes the next capture scan", async () => {
    const { cwd, store, calls } = await watchedProject();
    writeFileSync(join(cwd, "src", "a.ts"), "written\n");
    await store.snapshot("after write", ["src/a.ts"]);
    calls.length = 0;
    await store.snapshot("before bash");
    expect(calls).toEqual([]);

    writeFileSync(join(cwd, "src", "a.ts"), "written again\n");
    writeFileSync(join(cwd, "src", "deep", "b.ts"), "by someone else\n");
    await store.snapshot("after write", ["src/a.ts"]);
    calls.length = 0;
    const snap = await store.snapshot("before bash");
    expect(calls).toContain("ls-files");
    expect(await store.git(["show", `${snap.tree}:src/deep/b.ts`])).toBe("by someone else\n");
  });
});

describe("a whole-project capture after a few reported changes", () => {
  it("looks only at the reported paths, and scans the whole project when an ignore file changed", async () => {
    const { cwd, store } = await watchedProject();
    const lsFiles: string[][] = [];
    const git = store.git.bind(store);
    store.git = (args, opts) => {
      if (args[0] === "ls-files") lsFiles.push(args);
      return git(args, opts);
    };
    sh(cwd, "echo a2 > src/a.ts && mkdir -p made/sub && echo n > made/sub/n.ts && rm src/deep/b.ts");
    const snap = await store.snapshot("after bash");
    expect(lsFiles).toHaveLength(1);
    expect(lsFiles[0]).toContain("--");
    expect(lsFiles[0]!.slice(lsFiles[0]!.indexOf("--") + 1).sort()).toEqual([":(literal)made", ":(literal)src/a.ts", ":(literal)src/deep/b.ts"]);
    expect(await files(store, snap.tree)).toEqual([".gitignore", "made/sub/n.ts", "run.sh", "src/a.ts"]);
    expect(await store.git(["show", `${snap.tree}:src/a.ts`])).toBe("a2\n");

    // A folder moved: both of its names are looked at.
    lsFiles.length = 0;
    sh(cwd, "mv made kept");
    expect(await files(store, (await store.snapshot("moved")).tree)).toEqual([".gitignore", "kept/sub/n.ts", "run.sh", "src/a.ts"]);
    expect(lsFiles).toHaveLength(1);

    // A restore's plan scans whatever the watcher says.
    lsFiles.length = 0;
    await store.snapshot("plan", undefined, { scan: true });
    expect(lsFiles).toHaveLength(1);
    expect(lsFiles[0]).not.toContain("--");

    // The ignore file changed: files that did not change come in, so the whole project is scanned.
    sh(cwd, "echo out > build/o.js && printf '*.log\\n' > .gitignore");
    lsFiles.length = 0;
    const widened = await store.snapshot("ignore file");
    expect(lsFiles[0]).not.toContain("--");
    expect(await files(store, widened.tree)).toContain("build/o.js");
  });
});

describe("when the watcher cannot be trusted", () => {
  it("a capture scans: the sync file cannot be written, so the watcher stops for good", async () => {
    const { root, cwd, store, calls } = await watchedProject();
    rmSync(join(root, "store", "watch"), { recursive: true });
    writeFileSync(join(cwd, "src", "a.ts"), "a2\n");
    const first = await store.snapshot("no sync");
    expect(calls).toContain("ls-files");
    expect(await store.git(["show", `${first.tree}:src/a.ts`])).toBe("a2\n");
    expect(store.watchState).toBe("stopped");
    // Even with nothing reported, a stopped watcher means a scan.
    calls.length = 0;
    await store.snapshot("no sync again");
    expect(calls).toContain("ls-files");

    chmodSync(join(cwd, "run.sh"), 0o755);
    calls.length = 0;
    const second = await store.snapshot("stopped");
    expect(store.watchState).toBe("stopped");
    expect(calls).toContain("ls-files");
    expect(await store.git(["ls-tree", second.tree, "run.sh"])).toMatch(/^100755 /);
  });

  it("a capture that fails after taking the watcher's report leaves the change for the next capture", async () => {
    const { root, cwd, store } = await watchedProject();
    const dir = join(root, "store");
    const live = spawn("sleep", ["600"]);
    try {
      // Another live writer holds the store's index: the capture finds the change but cannot stage it.
      writeFileSync(join(dir, "writers", String(live.pid)), "1");
      writeFileSync(join(dir, "index.lock"), "");
      writeFileSync(join(cwd, "src", "a.ts"), "a2\n");
      await expect(store.snapshot("locked")).rejects.toThrow(/the store is locked/);
    } finally {
      live.kill("SIGKILL");
    }
    rmSync(join(dir, "index.lock"));
    const snap = await store.snapshot("unlocked");
    expect(await store.git(["show", `${snap.tree}:src/a.ts`])).toBe("a2\n");
  }, 30_000);

  it("with watch: false there is no watcher and every whole-project capture scans", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-cp-watch-"));
    roots.push(root);
    const cwd = join(root, "p");
    mkdirSync(cwd);
    writeFileSync(join(cwd, "a.txt"), "1\n");
    const store = new CheckpointStore(cwd, join(root, "store"), { ...DEFAULTS, watch: false });
    stores.push(store);
    const calls: string[] = [];
    const git = store.git.bind(store);
    store.git = (args, opts) => {
      calls.push(args[0]!);
      return git(args, opts);
    };
    await store.snapshot("one");
    await store.snapshot("two");
    expect(store.watchState).toBe("off");
    expect(calls.filter((c) => c === "ls-files")).toHaveLength(2);
  });
});

describe("a project holding a symlink to a folder outside it", () => {
  it("watches no folder behind the link, and a change out there neither enters a capture nor is followed", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-cp-watch-link-"));
    roots.push(root);
    const outside = join(root, "outside");
    for (let i = 0; i < 30; i++) mkdirSync(join(outside, `d${i}`), { recursive: true });
    writeFileSync(join(outside, "secret.txt"), "s1\n");
    const cwd = join(root, "p");
    mkdirSync(join(cwd, "src"), { recursive: true });
    writeFileSync(join(cwd, "src", "a.ts"), "a1\n");
    symlinkSync(outside, join(cwd, "out"));
    const store = new CheckpointStore(cwd, join(root, "store"), DEFAULTS);
    stores.push(store);
    await store.snapshot("first");
    while (store.watchState === "starting") await new Promise((r) => setTimeout(r, 5));
    expect(store.watchState).toBe("ready");
    const watcher = (store as unknown as { watcher: { folderCount: number } }).watcher;
    expect(watcher.folderCount).toBe(2); // the project and src/, nothing behind out/
    const base = await store.snapshot("baseline");
    sh(outside, "echo s2 > secret.txt && mkdir d0/new");
    const after = await store.snapshot("after an outside change");
    expect(after.tree).toBe(base.tree);
    expect(await store.git(["ls-tree", after.tree, "out"])).toMatch(/^120000 blob /); // the link itself
  });
});
