/**
 * `--scale` (issue 20): how the streaming and session figures grow with size. Cases for ours
 * only (the references' growth is not the question): a JSON answer of 1,000 → 50,000 chunks and
 * a session of 1,000 → 100,000 entries loaded over RPC (get_state, then get_messages).
 * scaleSection() turns their results into the table of docs/performance.md.
 */
import { join } from "node:path";
import { makeSessionFile } from "./generate.mjs";

export const SCALE_CHUNKS = [1000, 5000, 20000, 50000];
export const SCALE_ENTRIES = [1000, 10000, 100000];

export function scaleCases({ runOnce, rpcSession }) {
  const chunkCases = SCALE_CHUNKS.map((n) => ({
    name: `scale: json, ${n}-chunk answer`,
    oursOnly: true,
    script: { default: { text: "word ", repeat: n, chunkSize: 5 } },
    run: async (cli, ctx) => {
      const r = await runOnce(cli, ["--mode", "json", "--no-session", "long answer"], ctx);
      if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr.slice(-300)}`);
      return { "wall ms": r.wall, "peak RSS MiB": r.rssKiB / 1024 };
    },
  }));
  const entryCases = SCALE_ENTRIES.map((n) => ({
    name: `scale: rpc, ${n}-entry session`,
    oursOnly: true,
    rpc: true,
    setup: (ctx) => {
      ctx.scaleFiles ??= {};
      ctx.scaleFiles[n] ??= makeSessionFile(join(ctx.root, `scale-${n}.jsonl`), ctx.cwd, n);
    },
    run: async (cli, ctx) => {
      const s = rpcSession(cli, { ...ctx, extraArgs: ["--session", ctx.scaleFiles[n]] });
      s.send({ id: "1", type: "get_state" });
      const t1 = await s.wait((r) => r.type === "response" && r.id === "1", 600000);
      const t0 = performance.now();
      s.send({ id: "m", type: "get_messages" });
      const t2 = await s.wait((r) => r.type === "response" && r.id === "m", 600000);
      const rss = await s.close();
      return { "get_state ms": t1 - s.t0, "get_messages ms": t2 - t0, "peak RSS MiB": rss / 1024 };
    },
  }));
  return [...chunkCases, ...entryCases];
}

/** Markdown lines: one row per size, each figure with its growth per unit against the smallest size. */
export function scaleSection(results, median, fmt) {
  const get = (name, metric) => {
    const v = results.find((r) => r.name === name)?.per.get("ours")?.get(metric);
    return v?.length ? median(v) : undefined;
  };
  const rows = (sizes, nameOf, metrics, unit) => {
    const base = sizes[0];
    const out = [`| ${unit} | ${metrics.join(" | ")} |`, `|---|${metrics.map(() => "---").join("|")}|`];
    for (const n of sizes) {
      const cells = metrics.map((m) => {
        const v = get(nameOf(n), m);
        const v0 = get(nameOf(base), m);
        if (v === undefined) return "not measured";
        return n === base || v0 === undefined ? fmt(v) : `${fmt(v)} (×${(v / v0).toFixed(1)} for ×${n / base})`;
      });
      out.push(`| ${n.toLocaleString("en-US")} | ${cells.join(" | ")} |`);
    }
    return out;
  };
  if (!results.some((r) => r.name.startsWith("scale: "))) return [];
  return [
    "## Scale (`--scale`, ours only)",
    "",
    ...rows(SCALE_CHUNKS, (n) => `scale: json, ${n}-chunk answer`, ["wall ms", "peak RSS MiB"], "chunks (JSON mode)"),
    "",
    ...rows(SCALE_ENTRIES, (n) => `scale: rpc, ${n}-entry session`, ["get_state ms", "get_messages ms", "peak RSS MiB"], "session entries (RPC)"),
    "",
  ];
}
