/**
 * The retry plugin answers provider_error for transient failures; the run controller reports
 * auto_retry_start / auto_retry_end and runs the turn again. (Moved from core/engine/agent/loop.test.ts
 * when retry became a plugin; the assertions are unchanged.)
 */
import { describe, it, expect } from "@jest/globals";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import retryPlugin from "./index.js";

describe("retry plugin", () => {
  it("retries retryable provider errors with backoff and events", async () => {
    const t = await createTestKernel({ plugins: [retryPlugin], steps: [{ error: "500 internal server error" }, { error: "503 overloaded" }, { text: "finally" }] });
    await t.session.prompt("go");
    const retry = t.events.filter((e) => e.type.startsWith("auto_retry")) as any[];
    expect(retry.map((e) => [e.type, e.attempt])).toEqual([["auto_retry_start", 1], ["auto_retry_start", 2], ["auto_retry_end", 2]]);
    expect(retry[2].success).toBe(true);
    expect(retry[1].delayMs).toBeGreaterThan(retry[0].delayMs - 1);
    expect(t.session.getLastAssistantText()).toBe("finally");
    // failed attempts left the context
    expect((t.session.messages as any[]).filter((m) => m.role === "assistant")).toHaveLength(1);
    t.cleanup();
  });

  it("exhausted retries end with the provider's error", async () => {
    const t = await createTestKernel({
      plugins: [retryPlugin],
      settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 } } as any,
      steps: [{ error: "500 a" }, { error: "500 b" }, { error: "500 c" }],
    });
    await t.session.prompt("go");
    const end = t.events.find((e) => e.type === "auto_retry_end") as any;
    expect(end).toMatchObject({ success: false, attempt: 2, finalError: "500 c" });
    expect((t.session.messages.at(-1) as any).stopReason).toBe("error");
    t.cleanup();
  });

  it("a non-retryable error is not retried", async () => {
    const t = await createTestKernel({ plugins: [retryPlugin], steps: [{ error: "400 invalid request" }, { text: "unused" }] });
    await t.session.prompt("go");
    expect(t.events.some((e) => e.type === "auto_retry_start")).toBe(false);
    expect((t.session.messages.at(-1) as any).errorMessage).toBe("400 invalid request");
    t.cleanup();
  });

  it("without the plugin a retryable error stands (nobody answers provider_error)", async () => {
    const t = await createTestKernel({ steps: [{ error: "500 internal server error" }, { text: "unused" }] });
    await t.session.prompt("go");
    expect(t.events.some((e) => e.type === "auto_retry_start")).toBe(false);
    expect((t.session.messages.at(-1) as any).errorMessage).toBe("500 internal server error");
    t.cleanup();
  });

  it("autoRetryEnabled = false on the session turns it off for that session", async () => {
    const t = await createTestKernel({ plugins: [retryPlugin], steps: [{ error: "503 overloaded" }, { text: "unused" }] });
    t.session.autoRetryEnabled = false;
    await t.session.prompt("go");
    expect(t.events.some((e) => e.type === "auto_retry_start")).toBe(false);
    expect((t.session.messages.at(-1) as any).stopReason).toBe("error");
    t.cleanup();
  });
});
