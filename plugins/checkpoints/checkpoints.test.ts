import { describe, it, expect, afterEach } from "@jest/globals";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, readlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointStore, DEFAULTS, initBareRepository, readCheckpointRefs, storeDirFor } from "./store.js";
import { rewindPoints, stateAt, type EntryLike } from "./points.js";

const roots: string[] = [];
afterEach(() => {
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});
function project(opts: Partial<typeof DEFAULTS> = {}) {
  const root = mkdtempSync(join(tmpdir(), "pi-cp-unit-"));
  roots.push(root);
  const cwd = join(root, "p");
  mkdirSync(cwd);
  return { cwd, store: new CheckpointStore(cwd, join(root, "store"), { ...DEFAULTS, ...opts }), root };
}

describe("checkpoint store", () => {
  it("captures what .gitignore does not exclude, under the size limit; the same files give the same tree", async () => {
    const { cwd, store } = project({ maxFileSizeBytes: 100 });
    writeFileSync(join(cwd, ".gitignore"), "out/\n");
    writeFileSync(join(cwd, "a.txt"), "a\n");
    writeFileSync(join(cwd, "big.bin"), Buffer.alloc(200));
    mkdirSync(join(cwd, "out"));
    writeFileSync(join(cwd, "out", "x"), "x");
    const s1 = await store.snapshot("one");
    expect(s1.ref).toMatch(/^refs\/checkpoints\//);
    expect(s1.skipped).toEqual(["big.bin"]);
    const files = (await store.git(["ls-tree", "-r", "--name-only", s1.tree])).trim().split("\n");
    expect(files.sort()).toEqual([".gitignore", "a.txt"]);
    const s2 = await store.snapshot("two");
    expect(s2.tree).toBe(s1.tree);
    expect(s2.ref).toBeUndefined();
    // a tracked file that grows over the limit leaves the checkpoint
    writeFileSync(join(cwd, "a.txt"), Buffer.alloc(300));
    const s3 = await store.snapshot("three");
    expect((await store.git(["ls-tree", "-r", "--name-only", s3.tree])).trim()).toBe(".gitignore");
  });

  it("lays out its store without git init: git takes it as a bare repository, and a store made by git init works the same", async () => {
    const { cwd, store, root } = project();
    writeFileSync(join(cwd, "a.txt"), "a\n");
    const s1 = await store.snapshot("one");
    await store.flush();
    const dir = join(root, "store");
    const git = (...args: string[]) => execFileSync("git", [`--git-dir=${dir}`, ...args], { encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } }).trim();
    expect(git("rev-parse", "--is-bare-repository")).toBe("true");
    expect(git("fsck", "--no-progress", "--strict")).toBe("");
    expect(git("for-each-ref", "--format=%(objectname)", "refs/checkpoints/")).toBe(s1.tree);
    expect(existsSync(join(dir, "hooks"))).toBe(false);
    expect(readdirSync(dir).some((n) => n.endsWith(".tmp"))).toBe(false);
    // laid out again over a store in use (a second process at the same moment): nothing is lost
    initBareRepository(dir);
    expect(git("for-each-ref", "--format=%(objectname)", "refs/checkpoints/")).toBe(s1.tree);
    expect(git("cat-file", "-t", s1.tree)).toBe("tree");
    // a store an earlier version made with git init is used as it is
    const old = project();
    execFileSync("git", ["init", "-q", "--bare", join(old.root, "store")]);
    writeFileSync(join(old.cwd, "a.txt"), "a\n");
    expect((await old.store.snapshot("one")).tree).toBe(s1.tree);
  });

  it("a store that cannot be laid out: a clear error naming it, and nothing captured", async () => {
    const { cwd, store, root } = project();
    writeFileSync(join(cwd, "a.txt"), "a\n");
    mkdirSync(join(root, "store"));
    writeFileSync(join(root, "store", "objects"), "a file where the object folder goes");
    await expect(store.snapshot("one")).rejects.toThrow(new RegExp(`^cannot create the checkpoint store ${join(root, "store")}: `));
    expect(existsSync(join(root, "store", "HEAD"))).toBe(false);
  });

  it("restores contents, deletions, the exec bit and symlinks, and lists the changes first", async () => {
    const { cwd, store } = project();
    writeFileSync(join(cwd, "keep.sh"), "#!/bin/sh\n");
    chmodSync(join(cwd, "keep.sh"), 0o755);
    mkdirSync(join(cwd, "d"));
    writeFileSync(join(cwd, "d", "old.txt"), "old\n");
    symlinkSync("d/old.txt", join(cwd, "link"));
    const before = await store.snapshot("before");
    chmodSync(join(cwd, "keep.sh"), 0o644);
    rmSync(join(cwd, "d"), { recursive: true });
    rmSync(join(cwd, "link"));
    mkdirSync(join(cwd, "n"));
    writeFileSync(join(cwd, "n", "new.txt"), "new\n");
    const after = await store.snapshot("after");
    const changes = await store.diff(after.tree, before.tree);
    expect(changes.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: "d/old.txt", status: "A" },
      { path: "keep.sh", status: "M" },
      { path: "link", status: "A" },
      { path: "n/new.txt", status: "D" },
    ]);
    await store.restore(before.tree, changes);
    expect(readFileSync(join(cwd, "d", "old.txt"), "utf8")).toBe("old\n");
    expect(statSync(join(cwd, "keep.sh")).mode & 0o777).toBe(0o755);
    expect(readlinkSync(join(cwd, "link"))).toBe("d/old.txt");
    expect(existsSync(join(cwd, "n"))).toBe(false); // the emptied folder goes too
    // The store's index is split; the restore's throwaway index is not, and a replaced shared part is gone.
    const sharedParts = () => readdirSync(store.dir).filter((f) => f.startsWith("sharedindex."));
    expect(sharedParts()).toHaveLength(1);
    expect(readdirSync(store.dir).filter((f) => f.startsWith("restore-index"))).toEqual([]);
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(cwd, `extra${i}.txt`), `${i}\n`);
      await store.snapshot("more");
    }
    expect(sharedParts()).toHaveLength(1);
    expect((await store.snapshot("again")).tree).toBe((await store.snapshot("same")).tree);
  });

  it("keeps the refs of at most maxCount checkpoints, the newest", async () => {
    const { cwd, store } = project({ maxCount: 2 });
    const trees: string[] = [];
    for (let i = 0; i < 4; i++) {
      writeFileSync(join(cwd, "f.txt"), `v${i}\n`);
      trees.push((await store.snapshot(`s${i}`)).tree);
    }
    expect(await store.prune()).toBe(2);
    const refs = (await store.git(["for-each-ref", "--format=%(objectname)", "refs/checkpoints/"])).trim().split("\n");
    expect(refs).toEqual(trees.slice(2));
    expect(await store.hasTree(trees[3]!)).toBe(true);
  });

  it("reads its refs as git lists them, loose and packed; a prune with nothing due runs no git", async () => {
    const { cwd, store, root } = project({ maxCount: 10 });
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(cwd, "f.txt"), `v${i}\n`);
      await store.snapshot(`s${i}`);
    }
    await store.flush();
    const listed = async () => (await store.git(["for-each-ref", "--format=%(refname)", "refs/checkpoints/"])).trim().split("\n").sort();
    expect(readCheckpointRefs(join(root, "store"))!.sort()).toEqual(await listed());
    await store.git(["pack-refs", "--all"]);
    writeFileSync(join(cwd, "f.txt"), "v3\n");
    await store.snapshot("s3");
    await store.flush();
    const all = await listed();
    expect(all).toHaveLength(4);
    expect(readCheckpointRefs(join(root, "store"))!.sort()).toEqual(all);
    const calls: string[] = [];
    const git = store.git.bind(store);
    store.git = (args, opts) => {
      calls.push(args[0]!);
      return git(args, opts);
    };
    expect(await store.prune()).toBe(0);
    expect(calls).toEqual([]);
  });

  it("never touches the project's own git repository", async () => {
    const { cwd, store } = project();
    execFileSync("git", ["init", "-q"], { cwd });
    writeFileSync(join(cwd, "a.txt"), "a\n");
    const index = join(cwd, ".git", "index");
    await store.snapshot("one");
    expect(existsSync(index)).toBe(false);
    expect(execFileSync("git", ["status", "--porcelain"], { cwd, encoding: "utf8" })).toBe("?? a.txt\n");
  });

  it("refuses a folder with more new files than maxFiles, and the home folder", async () => {
    const { cwd, store } = project({ maxFiles: 3 });
    for (let i = 0; i < 5; i++) writeFileSync(join(cwd, `f${i}`), "x");
    await expect(store.snapshot("x")).rejects.toThrow(/5 files to capture, more than checkpoints\.maxFiles \(3\)/);
    const home = new CheckpointStore(homedir(), join(cwd, "..", "home-store"), DEFAULTS);
    await expect(home.snapshot("x")).rejects.toThrow(/home folder or the file system's root/);
  });

  it("a folder far over maxFiles: its listing is cut (not read to the end), and the error says so", async () => {
    const { cwd, store } = project({ maxFiles: 10 });
    // Enough paths that git writes its listing in more than one piece.
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(cwd, `dir-with-a-long-name-${d}`));
      for (let i = 0; i < 200; i++) writeFileSync(join(cwd, `dir-with-a-long-name-${d}`, `file-with-a-long-name-${i}.txt`), "x");
    }
    const err = await store.snapshot("x").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^over 20 files to capture, more than checkpoints\.maxFiles \(10\); is .* a project\?/);
    // Nothing was captured: the store has no tree and the next capture tries again.
    await expect(store.snapshot("again")).rejects.toThrow(/more than checkpoints\.maxFiles/);
  });

  it("without git: a clear error naming it", async () => {
    const saved = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const { store } = project();
      await expect(store.snapshot("x")).rejects.toThrow(/git is not installed/);
    } finally {
      process.env.PATH = saved;
    }
  });

  it("a project folder removed meanwhile: the error names the folder, not a missing git", async () => {
    const { cwd, store } = project();
    writeFileSync(join(cwd, "a.txt"), "a\n");
    await store.snapshot("first");
    rmSync(cwd, { recursive: true });
    await expect(store.snapshot("after")).rejects.toThrow(`the project folder ${cwd} no longer exists`);
  });

  it("one store folder per project, under the agent dir", () => {
    expect(storeDirFor("/agent", "/a/b")).toMatch(/^\/agent\/checkpoints\/[0-9a-f]{16}$/);
    expect(storeDirFor("/agent", "/a/b")).not.toBe(storeDirFor("/agent", "/a/c"));
  });
});

const user = (id: string, text: string): EntryLike => ({ id, type: "message", message: { role: "user", content: [{ type: "text", text }] } });
describe("rewind points", () => {
  const cp = (id: string, tree: string, phase = "before"): EntryLike => ({ id, type: "custom", customType: "checkpoint", data: { tree, phase } });
  it("a prompt's point is the state before it; a restore's own before-state is a point", () => {
    const branch = [cp("c1", "t1"), user("u1", "first"), cp("c2", "t2", "after"), user("u2", "second"), cp("c3", "t3", "pre-restore"), cp("c4", "t1", "restore")];
    expect(rewindPoints(branch)).toEqual([
      { index: 1, entryId: "u1", kind: "prompt", label: "first", timestamp: undefined, tree: "t1" },
      { index: 2, entryId: "u2", kind: "prompt", label: "second", timestamp: undefined, tree: "t2" },
      { index: 3, entryId: "c3", kind: "restore", label: "(files before a restore)", timestamp: undefined, tree: "t3" },
    ]);
    expect(stateAt(branch)?.tree).toBe("t1");
    expect(stateAt([user("u", "x")])).toBeUndefined();
  });
});

describe("checkpoints service", () => {
  it("a file changed after the restore was planned (while the user read it) is kept, not overwritten", async () => {
    const { cwd, root } = project();
    const { createCheckpointsService } = await import("./service.js");
    const kernel = { agentDir: join(root, "agent"), settings: { get: () => ({}) } };
    const entries: EntryLike[] = [];
    const session = {
      cwd,
      sessionManager: {
        getBranch: () => entries,
        getEntry: (id: string) => entries.find((e) => e.id === id),
        appendCustomEntry: (customType: string, data?: unknown) => {
          entries.push({ id: `c${entries.length}`, type: "custom", customType, data });
          return `c${entries.length - 1}`;
        },
      },
      navigateTree: async () => ({ cancelled: false }),
    };
    const svc = createCheckpointsService(kernel as never, () => {});
    writeFileSync(join(cwd, "a.txt"), "1\n");
    writeFileSync(join(cwd, "b.txt"), "1\n");
    await svc.capture(session, "before");
    entries.push(user("u1", "change"));
    writeFileSync(join(cwd, "a.txt"), "2\n");
    writeFileSync(join(cwd, "b.txt"), "2\n");
    await svc.capture(session, "after", { tool: "bash" });
    const plan = await svc.plan(session, 1);
    expect(plan.changes.map((c) => c.path).sort()).toEqual(["a.txt", "b.txt"]);
    expect(plan.external).toEqual([]);
    writeFileSync(join(cwd, "b.txt"), "mine\n"); // while the dialog is open
    const r = await svc.restore(session, plan, "code");
    expect(r).toMatchObject({ restored: ["a.txt"], kept: ["b.txt"] });
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("1\n");
    expect(readFileSync(join(cwd, "b.txt"), "utf8")).toBe("mine\n");
  });

  it("a point named by an entry id made only of digits is that entry, not an index", async () => {
    const { cwd, root } = project();
    const { createCheckpointsService } = await import("./service.js");
    const kernel = { agentDir: join(root, "agent"), settings: { get: () => ({}) } };
    const entries: EntryLike[] = [];
    let next = 1;
    const session = {
      cwd,
      sessionManager: {
        getBranch: () => entries,
        getEntry: (id: string) => entries.find((e) => e.id === id),
        appendCustomEntry: (customType: string, data?: unknown) => {
          const id = String(28061436 + next++); // hex ids such as "28061437" happen
          entries.push({ id, type: "custom", customType, data });
          return id;
        },
      },
      navigateTree: async () => ({ cancelled: false }),
    };
    const svc = createCheckpointsService(kernel as never, () => {});
    writeFileSync(join(cwd, "a.txt"), "1\n");
    await svc.capture(session, "before");
    entries.push(user("u1", "first"));
    writeFileSync(join(cwd, "a.txt"), "2\n");
    await svc.capture(session, "after", { tool: "bash" });
    await svc.restore(session, await svc.plan(session, 1), "code"); // records a pre-restore point
    const points = svc.list(session);
    expect(points.map((p) => p.kind)).toEqual(["prompt", "restore"]);
    const undo = points[1]!;
    expect(undo.entryId).toMatch(/^\d+$/);
    expect((await svc.plan(session, undo.entryId)).point.index).toBe(2);
    expect((await svc.plan(session, "2")).point.entryId).toBe(undo.entryId);
    await expect(svc.plan(session, 3)).rejects.toThrow(/no rewind point 3 on this branch \(points 1-2\)/);
  });
});
