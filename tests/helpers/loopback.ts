/**
 * Small pieces the tests with loopback stand-ins share: listening on a free port of 127.0.0.1,
 * and reading a TUI list's selected row.
 */
import type { Server } from "node:http";

/** Listens on a free loopback port; resolves with the server's base URL. */
export function listen(s: Server): Promise<string> {
  return new Promise((r) => s.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(s.address() as { port: number }).port}`)));
}

/** The selected row of a TUI list (marked ❯), trimmed. */
export const selectedRow = (screen: string): string => /❯\s+(.*?)\s*$/m.exec(screen)?.[1] ?? "";
