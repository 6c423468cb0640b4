import { describe, it, expect, afterEach } from "@jest/globals";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointStore, DEFAULTS } from "./store.js";
import type { EntryLike } from "./points.js";
import type { Kernel } from "../../core/kernel/index.js";
import { createCheckpointsService, type SessionLike } from "./service.js";

const roots: string[] = [];
afterEach(() => {
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});

/** A store whose git calls are counted. */
function project() {
  const root = mkdtempSync(join(tmpdir(), "pi-cp-cost-"));
  roots.push(root);
  const cwd = join(root, "p");
  mkdirSync(join(cwd, "src"), { recursive: true });
  const store = new CheckpointStore(cwd, join(root, "store"), DEFAULTS);
  const calls: string[] = [];
  const git = store.git.bind(store);
  store.git = (args, opts) => {
    calls.push(args[0]!);
    return git(args, opts);
  };
  return { root, cwd, store, calls };
}

/** File times are coarse: go on once the clock is clearly past `path`'s last change. */
async function pastChangeOf(path: string): Promise<void> {
  const changed = statSync(path).ctimeMs;
  while (Date.now() < changed + 100) await new Promise((r) => setImmediate(r));
}

describe("a write/edit capture without git", () => {
  it("a target unchanged since the store took it in needs no git; a changed, new or deleted one does", async () => {
    const { cwd, store, calls } = project();
    writeFileSync(join(cwd, "src", "a.ts"), "a\n");
    await pastChangeOf(join(cwd, "src", "a.ts"));
    const first = await store.snapshot("first");
    calls.length = 0;
    // Unchanged: the same tree, no git process.
    expect((await store.snapshot("before", ["src/a.ts"])).tree).toBe(first.tree);
    // A file that does not exist in a folder that did not change: nothing to capture either.
    expect((await store.snapshot("before", ["src/new.ts"])).tree).toBe(first.tree);
    expect(calls).toEqual([]);
    // Changed (even at once, within the clock's tick): captured.
    writeFileSync(join(cwd, "src", "a.ts"), "b\n");
    const changed = await store.snapshot("after", ["src/a.ts"]);
    expect(changed.tree).not.toBe(first.tree);
    expect(calls).toContain("update-index");
    // Created in that folder: its folder changed, so git looks.
    writeFileSync(join(cwd, "src", "new.ts"), "new\n");
    const created = await store.snapshot("after", ["src/new.ts"]);
    expect((await store.git(["ls-tree", "-r", "--name-only", created.tree])).split("\n")).toContain("src/new.ts");
    // Deleted by someone else before the call: captured as gone.
    unlinkSync(join(cwd, "src", "new.ts"));
    const deleted = await store.snapshot("before", ["src/new.ts"]);
    expect((await store.git(["ls-tree", "-r", "--name-only", deleted.tree])).split("\n")).not.toContain("src/new.ts");
  });
});

describe("a lock left in the store", () => {
  it("is removed when its writer is dead, and kept (the capture fails, naming it) while the writer lives", async () => {
    const { root, cwd, store } = project();
    writeFileSync(join(cwd, "a.txt"), "1\n");
    await store.snapshot("first");
    const dir = join(root, "store");
    const lock = join(dir, "index.lock");

    const dead = spawnSync("true").pid;
    writeFileSync(join(dir, "writers", String(dead)), "1");
    writeFileSync(lock, "");
    writeFileSync(join(cwd, "a.txt"), "2\n");
    await store.snapshot("second");
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(join(dir, "writers", String(dead)))).toBe(false);

    const live = spawn("sleep", ["600"]);
    try {
      writeFileSync(join(dir, "writers", String(live.pid)), "1");
      writeFileSync(lock, "");
      writeFileSync(join(cwd, "a.txt"), "3\n");
      await expect(store.snapshot("third")).rejects.toThrow(/the store is locked \(.*index\.lock\)/);
      expect(existsSync(lock)).toBe(true);
    } finally {
      live.kill("SIGKILL");
    }
  });
});

describe("a tool call's after-state, recorded after its result", () => {
  it("is the state of the result entry: for the tree, the rewind points and the outside-change check", async () => {
    const { root, cwd } = project();
    const { createCheckpointsService } = await import("./service.js");
    const kernel = { agentDir: join(root, "agent"), settings: { get: () => ({}) } };
    const entries: EntryLike[] = [];
    let leaf: string | null = null;
    const add = (e: Omit<EntryLike, "parentId">) => {
      entries.push({ ...e, parentId: leaf });
      leaf = e.id;
      return e.id;
    };
    const branchTo = (id: string | null) => {
      const out: EntryLike[] = [];
      for (let e = entries.find((x) => x.id === id); e; e = entries.find((x) => x.id === e!.parentId)) out.unshift(e);
      return out;
    };
    const session = {
      cwd,
      sessionManager: {
        getBranch: (id?: string | null) => branchTo(id === undefined ? leaf : id),
        getEntry: (id: string) => entries.find((e) => e.id === id),
        getEntries: () => entries,
        appendCustomEntry: (customType: string, data?: unknown) => add({ id: `c${entries.length}`, type: "custom", customType, data }),
      },
      navigateTree: async (id: string) => {
        leaf = id;
        return { cancelled: false };
      },
    };
    const svc = createCheckpointsService(kernel as never, () => {});
    writeFileSync(join(cwd, "a.txt"), "1\n");
    await svc.capture(session, "before"); // (recorded before the prompt it starts)
    add({ id: "u1", type: "message", message: { role: "user", content: "change a" } });
    add({ id: "m1", type: "message", message: { role: "assistant", content: [] } });
    writeFileSync(join(cwd, "a.txt"), "2\n"); // the tool runs
    add({ id: "r1", type: "message", message: { role: "toolResult", toolCallId: "call-1" } as EntryLike["message"] });
    await svc.capture(session, "after", { tool: "write", toolCallId: "call-1" }, ["a.txt"]);
    expect(entries.at(-1)).toMatchObject({ parentId: "r1", data: { phase: "after", toolCallId: "call-1" } });

    // Back at the result (a /tree jump): the files match it, and a.txt is the agent's change, not an outside one.
    leaf = "r1";
    expect(await svc.planEntry(session, "r1")).toBeUndefined();
    const plan = await svc.plan(session, 1);
    expect(plan.changes.map((c) => c.path)).toEqual(["a.txt"]);
    expect(plan.external).toEqual([]);
    // A prompt typed there starts from the files after the call.
    add({ id: "u2", type: "message", message: { role: "user", content: "next" } });
    const after = entries.find((e) => e.parentId === "r1" && e.type === "custom")!;
    expect(svc.list(session).find((p) => p.entryId === "u2")?.tree).toBe((after.data as { tree: string }).tree);
  });
});

describe("a store's first whole-project capture", () => {
  it("puts the watches in place first, so it is the watcher's baseline: the session's next capture of an unchanged project runs no git scan", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-cp-baseline-"));
    roots.push(root);
    const cwd = join(root, "p");
    mkdirSync(join(cwd, "src"), { recursive: true });
    writeFileSync(join(cwd, "src", "a.ts"), "a\n");
    const kernel = { agentDir: join(root, "agent"), settings: { get: () => ({}) } } as unknown as Kernel;
    // (Pruning old checkpoints runs beside the captures, unwaited: it may still run when the folder is removed.)
    const warnings: string[] = [];
    const service = createCheckpointsService(kernel, (m) => void warnings.push(m));
    const entries: unknown[] = [];
    const session: SessionLike = {
      cwd,
      sessionManager: { getBranch: () => [], getEntry: () => undefined, appendCustomEntry: (_type, data) => String(entries.push(data)) },
      navigateTree: async () => ({ cancelled: false }),
    };
    // The session's start: the watches, then the first scan.
    await service.warm(cwd);
    const store = service.store(cwd);
    expect(store.watchState).toBe("ready");
    const calls: string[] = [];
    const git = store.git.bind(store);
    store.git = (args, opts) => {
      calls.push(args[0]!);
      return git(args, opts);
    };
    const data = await service.capture(session, "before");
    expect(data?.tree).toMatch(/^[0-9a-f]{40}$/);
    expect(entries).toHaveLength(1);
    expect(calls.filter((c) => c === "ls-files" || c === "update-index" || c === "write-tree")).toEqual([]);
    await service.settle();
    expect(warnings.filter((w) => !w.startsWith("pruning"))).toEqual([]);
    store.close();
  });
});
