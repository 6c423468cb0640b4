import { describe, it, expect } from "@jest/globals";
import { isContextOverflow, isRetryableError } from "./provider-errors.js";

describe("provider error classes", () => {
  it("a garbled stream is transient, in the words of every reader that reports it", () => {
    for (const m of [
      "Error reading response: malformed server-sent event JSON.",
      "Could not parse message into JSON",
      `Unexpected token 'h', "this is not json" is not valid JSON`,
      "Unexpected end of JSON input",
    ])
      expect([m, isRetryableError(m)]).toEqual([m, true]);
  });

  it("rate limits and dropped connections are retried; a context overflow or a bad request is not", () => {
    expect(isRetryableError("429 Too Many Requests")).toBe(true);
    expect(isRetryableError("terminated: other side closed (UND_ERR_SOCKET)")).toBe(true);
    expect(isRetryableError("400 prompt is too long: 210000 tokens > 200000 maximum")).toBe(false);
    expect(isContextOverflow("400 prompt is too long: 210000 tokens > 200000 maximum")).toBe(true);
    expect(isRetryableError("401 invalid x-api-key")).toBe(false);
    expect(isRetryableError(undefined)).toBe(false);
  });
});
