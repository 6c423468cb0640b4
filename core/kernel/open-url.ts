/**
 * Opens an address in the user's browser (`open`, `start` or `xdg-open`), detached; silent when
 * there is no browser: callers always show the address too.
 */
export async function openInBrowser(url: string): Promise<void> {
  const { spawn } = await import("node:child_process");
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "cmd" : "xdg-open";
  const args = process.platform === "win32" ? ["/c", "start", "", url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    /* no browser: the address is on screen */
  }
}
