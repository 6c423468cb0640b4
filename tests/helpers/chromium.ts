/**
 * Headless Chromium for tests: render a local HTML file and return the DOM after its scripts
 * ran (Debian's `chromium`; scripts/system-deps.sh, run by `npm test`, installs it when missing).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export function findChromium(): string {
  const found = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) => existsSync(p));
  if (!found) throw new Error("this test needs headless Chromium (Debian package chromium), which is not installed: run `bash scripts/system-deps.sh` as root, or `sudo apt-get install -y chromium`");
  return found;
}

/** `chromium --headless --dump-dom file://…`: the serialised DOM after load (a path, or a file: URL with a fragment). */
export function dumpDom(htmlFile: string, timeoutMs = 30000): Promise<string> {
  const bin = findChromium();
  const profile = mkdtempSync(join(tmpdir(), "pi-chromium-"));
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    `--user-data-dir=${profile}`,
    "--dump-dom",
    htmlFile.startsWith("file:") ? htmlFile : pathToFileURL(htmlFile).href,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
    };
    child.on("error", (e) => {
      done();
      reject(e);
    });
    child.on("close", (code, signal) => {
      done();
      const dom = Buffer.concat(out).toString("utf8");
      if (!dom.includes("<html")) reject(new Error(`chromium produced no DOM (exit ${code ?? signal}): ${Buffer.concat(err).toString("utf8").slice(-2000)}`));
      else resolve(dom);
    });
  });
}

/** `chromium --headless --screenshot`: a PNG of the page (after its scripts ran) at `width`×`height`. */
export function screenshot(url: string, pngFile: string, width = 1400, height = 1000, timeoutMs = 60000): Promise<void> {
  const bin = findChromium();
  const profile = mkdtempSync(join(tmpdir(), "pi-chromium-"));
  const args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--hide-scrollbars", `--user-data-dir=${profile}`, `--window-size=${width},${height}`, `--screenshot=${pngFile}`, url];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
    const err: Buffer[] = [];
    child.stderr.on("data", (c) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      if (existsSync(pngFile)) resolve();
      else reject(new Error(`chromium wrote no screenshot (exit ${code ?? signal}): ${Buffer.concat(err).toString("utf8").slice(-2000)}`));
    });
  });
}
