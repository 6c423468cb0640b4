/**
 * RPC's output side provides "background-work": work a plugin hands it (a project's first
 * checkpoint capture) waits until the server starts it (its client quiet, or a prompt), then runs
 * at once; closing the output withdraws the service.
 */
import { afterAll, describe, it, expect } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kernel, SettingsManager, defineApp } from "../../core/kernel/index.js";
import { openRpcOutput } from "./output.js";

const dir = mkdtempSync(join(tmpdir(), "pi-rpc-output-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("RPC output: background work", () => {
  it("is held until startBackgroundWork(), in order, then run at once; withdrawn on close", async () => {
    const kernel = new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory() });
    const out = openRpcOutput(kernel);
    try {
      const ran: string[] = [];
      const background = kernel.service("background-work")!;
      expect(background).toBeDefined();
      background(() => ran.push("first capture"));
      background(() => ran.push("second"));
      expect(ran).toEqual([]);
      out.startBackgroundWork();
      expect(ran).toEqual(["first capture", "second"]);
      background(() => ran.push("later"));
      expect(ran).toEqual(["first capture", "second", "later"]);
      out.startBackgroundWork(); // nothing runs twice
      expect(ran).toEqual(["first capture", "second", "later"]);
    } finally {
      await out.close();
    }
    expect(kernel.service("background-work")).toBeUndefined();
  });
});
