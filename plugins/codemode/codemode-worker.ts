/**
 * The part of codemode that runs a script: a QuickJS runtime inside a worker thread, so a script
 * that never yields (`while (true) {}`) cannot freeze the agent. The main thread (codemode.ts)
 * stays free to notice an abort, a deadline or SIGTERM, and then terminates the worker.
 *
 * The worker is started from source text (`codemodeWorkerSource()`: the function below, turned
 * back into text), so it works the same from the TypeScript sources and from the bundle. It
 * receives the script and the callable tools in `workerData`, and talks to the main thread with
 * messages: `out` (a text or console item), `call` (a tool call; answered by `result`), and at
 * the end `done` or `error`.
 */
import { createRequire } from "node:module";

export type WorkerMessage =
  | { type: "out"; kind: "text" | "console"; text: string }
  | { type: "call"; id: number; name: string; args: unknown }
  | { type: "done" }
  | { type: "error"; message: string; exit?: boolean };

export interface WorkerInput {
  corePath: string;
  variantPath: string;
  /** QuickJS's WebAssembly, compiled once in the main thread (a worker then only instantiates it). */
  wasmModule?: object;
  code: string;
  bootstrap: string;
  /** [identifier, tool name] pairs and {name, description} entries, as JSON. */
  namesJson: string;
  allJson: string;
  memoryLimit: number;
  deadline?: number;
  timeoutMs?: number;
  maxOutputItems: number;
  maxOutputChars: number;
}

/** The eval'd worker's own `require` (named apart so a bundler leaves the calls alone). */
declare const workerRequire: NodeJS.Require;

/** The worker's body. Self-contained: it becomes source text (see codemodeWorkerSource). */
function codemodeWorkerMain(): void {
  const { parentPort, workerData } = workerRequire("node:worker_threads");
  const input = workerData as WorkerInput;
  const post = (m: WorkerMessage) => parentPort.postMessage(m);
  const describe = (err: unknown): string => {
    if (err && typeof err === "object") {
      const e = err as { name?: unknown; message?: unknown };
      if (typeof e.message === "string") return `${typeof e.name === "string" ? e.name + ": " : ""}${e.message}`;
    }
    return typeof err === "string" ? err : JSON.stringify(err);
  };
  const waiting = new Map<number, (r: { text: string; isError: boolean }) => void>();
  parentPort.on("message", (m: { type: string; id: number; text: string; isError: boolean }) => {
    if (m.type !== "result") return;
    const resolve = waiting.get(m.id);
    waiting.delete(m.id);
    resolve?.({ text: m.text, isError: m.isError });
  });

  const run = async (): Promise<WorkerMessage> => {
    const core = workerRequire(input.corePath);
    const base = workerRequire(input.variantPath);
    // QuickJS's own messages (an assertion when a runtime is freed) must not reach the terminal.
    const quiet = core.newVariant(base.default ?? base, {
      emscriptenModule: { print: () => undefined, printErr: () => undefined },
      ...(input.wasmModule ? { wasmModule: input.wasmModule } : {}),
    });
    const QuickJS = await core.newQuickJSWASMModuleFromVariant(quiet);
    const rt = QuickJS.newRuntime();
    rt.setMemoryLimit(input.memoryLimit);
    rt.setMaxStackSize(256 * 1024); // below V8's own stack for the WASM frames, so QuickJS reports an overflow itself
    rt.setInterruptHandler(() => input.deadline !== undefined && Date.now() > input.deadline);
    const vm = rt.newContext();
    const pending = new Set<Promise<void>>();
    let outChars = 0;
    let outItems = 0;
    let outputError: string | undefined;
    let nextId = 0;
    const timeout = () => ({ type: "error" as const, message: `the script passed its timeout_ms of ${input.timeoutMs} ms` });
    const out = vm.newFunction("out", (kindH: unknown, textH: unknown) => {
      const kind = vm.getString(kindH);
      const s = vm.getString(textH);
      outChars += s.length;
      if (++outItems > input.maxOutputItems || outChars > input.maxOutputChars) {
        outputError ??= `the output passed ${input.maxOutputItems} items or ${input.maxOutputChars} characters; write large data to a file with a tool instead`;
        throw new Error(outputError);
      }
      post({ type: "out", kind: kind === "console" ? "console" : "text", text: s });
      return vm.undefined;
    });
    const search = vm.newFunction("search", (qH: unknown, optsH: unknown) => {
      const query = vm.getString(qH);
      const opts = vm.getString(optsH);
      const deferred = vm.newPromise();
      const id = ++nextId;
      post({ type: "call", id, name: "\u0000search", args: { query, opts } });
      const job = new Promise<void>((res) => {
        waiting.set(id, (r) => {
          const s = vm.newString(r.text);
          deferred.resolve(s);
          s.dispose();
          deferred.dispose();
          res();
        });
      });
      pending.add(job);
      void job.finally(() => pending.delete(job));
      return deferred.handle;
    });
    const call = vm.newFunction("call", (nameH: unknown, argsH: unknown) => {
      const name = vm.getString(nameH);
      const args = JSON.parse(vm.getString(argsH));
      const deferred = vm.newPromise();
      const id = ++nextId;
      post({ type: "call", id, name, args });
      const job = new Promise<void>((res) => {
        waiting.set(id, (r) => {
          if (r.isError) {
            const err = vm.newError(r.text || `${name} failed`);
            deferred.reject(err);
            err.dispose();
          } else {
            const s = vm.newString(r.text);
            deferred.resolve(s);
            s.dispose();
          }
          deferred.dispose();
          res();
        });
      });
      pending.add(job);
      void job.finally(() => pending.delete(job));
      return deferred.handle;
    });
    const names = vm.newString(input.namesJson);
    const all = vm.newString(input.allJson);
    const boot = vm.unwrapResult(vm.evalCode(input.bootstrap, "bootstrap.js"));
    const finish = vm.unwrapResult(vm.callFunction(boot, vm.undefined, call, out, search, names, all));
    for (const h of [out, search, call, names, all, boot]) h.dispose();
    const evaluated = vm.evalCode(`(async () => {\n${input.code}\n})()`, "script.js");
    if (evaluated.error) {
      const err = vm.dump(evaluated.error);
      return input.deadline !== undefined && Date.now() > input.deadline ? timeout() : { type: "error", message: describe(err) };
    }
    const promise = evaluated.value;
    for (;;) {
      const jobs = rt.executePendingJobs();
      if (jobs.error) {
        const err = vm.dump(jobs.error);
        return input.deadline !== undefined && Date.now() > input.deadline ? timeout() : { type: "error", message: describe(err) };
      }
      if (outputError) return { type: "error", message: outputError };
      const state = vm.getPromiseState(promise);
      if (state.type === "fulfilled") {
        const r = vm.callFunction(finish, vm.undefined, state.value);
        if (r.error) return { type: "error", message: describe(vm.dump(r.error)) };
        return { type: "done" };
      }
      if (state.type === "rejected") {
        const err = vm.dump(state.error);
        if (err && typeof err === "object" && (err as { exit?: unknown }).exit === true) return { type: "done" };
        return { type: "error", message: describe(err) };
      }
      if (input.deadline !== undefined && Date.now() > input.deadline) return timeout();
      if (!pending.size) return { type: "error", message: "the script waits on a promise that can never settle (no tool call is pending, and there are no timers)" };
      await Promise.race([...pending]);
    }
  };
  // The runtime is not disposed: the worker ends right after, and its memory goes with it.
  run().then(post, (e: unknown) => post({ type: "error", message: `the sandbox stopped: ${describe(e)}` }));
}

let source: string | undefined;
/** The worker's source text (eval'd by `new Worker(src, { eval: true })`). */
export function codemodeWorkerSource(): string {
  source ??= `"use strict";\nconst workerRequire = require;\n(${codemodeWorkerMain.toString()})();\n`;
  return source;
}

/** Where the worker loads QuickJS from (absolute paths: an eval'd worker resolves nothing itself). */
export function quickjsPaths(): { corePath: string; variantPath: string } {
  const req = createRequire(import.meta.url);
  return { corePath: req.resolve("quickjs-emscripten-core"), variantPath: req.resolve("@jitl/quickjs-wasmfile-release-sync") };
}

let compiled: Promise<object | undefined> | undefined;
/** QuickJS's WebAssembly module, compiled on the first script and shared by every worker (undefined: each worker loads its own). */
export function quickjsWasmModule(variantPath: string): Promise<object | undefined> {
  compiled ??= (async () => {
    try {
      const { readFile } = await import("node:fs/promises");
      const { dirname, join } = await import("node:path");
      const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<object> } }).WebAssembly;
      return await wasm.compile(await readFile(join(dirname(variantPath), "emscripten-module.wasm")));
    } catch {
      return undefined;
    }
  })();
  return compiled;
}
