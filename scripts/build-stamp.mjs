#!/usr/bin/env node
/**
 * The build stamp: a hash of everything the bundle (dist/bundle/) is made from — the sources in
 * core/, plugins/, modes/, sdk/ (tests left out), the build scripts, package.json and the
 * installed dependencies (node_modules/.package-lock.json). scripts/bundle.mjs writes it (dist/.bundle-stamp)
 * after bundling; `node scripts/build-stamp.mjs --bundle-if-stale` (what `npm run demo` runs) bundles
 * only when the stamp differs, so a demo on unchanged sources starts at once.
 */
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const STAMP = join(root, "dist", ".bundle-stamp");
const SOURCE_DIRS = ["core", "plugins", "modes", "sdk"];
const FILES = ["package.json", "node_modules/.package-lock.json", "scripts/bundle.mjs", "scripts/model-catalog.mjs", "scripts/build-stamp.mjs"];

/** The hash of the bundle's inputs (file names and contents). */
export function sourceHash() {
  const h = createHash("sha256");
  const add = (rel) => {
    const p = join(root, rel);
    h.update(rel + "\0");
    h.update(existsSync(p) ? readFileSync(p) : "(missing)");
    h.update("\0");
  };
  const walk = (rel) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(r);
      else if (e.isFile() && !/\.test\.ts$/.test(e.name)) add(r);
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  for (const f of FILES) add(f);
  return h.digest("hex");
}

export function writeStamp(hash) {
  writeFileSync(STAMP, hash + "\n");
}

export function bundleIsCurrent(hash = sourceHash()) {
  return existsSync(join(root, "dist", "bundle", "cli.js")) && existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === hash;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--bundle-if-stale") {
  const t0 = Date.now();
  if (bundleIsCurrent()) {
    console.log(`dist/bundle is current (sources unchanged since its build; checked in ${Date.now() - t0} ms): no rebuild`);
  } else {
    console.log("dist/bundle is missing or older than the sources: bundling (scripts/bundle.mjs)…");
    const r = spawnSync(process.execPath, [join(root, "scripts", "bundle.mjs")], { stdio: "inherit" });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}
