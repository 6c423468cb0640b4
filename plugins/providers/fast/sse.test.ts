/**
 * The SSE decoder's line rules at the edges: empty lines (every event ends at one), a byte-order
 * mark per line in the "sdk" dialect, a field with an empty value, the one space after the colon.
 */
import { describe, it, expect } from "@jest/globals";
import { SseDecoder, type SseDialect } from "./sse.js";

function decode(dialect: SseDialect, body: string): Array<[string | null, string]> {
  const events: Array<[string | null, string]> = [];
  const d = new SseDecoder(dialect, (event, data) => events.push([event, data]));
  d.push(new TextEncoder().encode(body));
  d.end();
  return events;
}

describe("SseDecoder lines", () => {
  it("an empty line ends an event; empty lines with no event open dispatch nothing", () => {
    expect(decode("sdk", "\n\ndata: a\n\n\n\ndata: b\n\n")).toEqual([
      [null, "a"],
      [null, "b"],
    ]);
  });

  it('"sdk": one byte-order mark per line is dropped, so a line of only a mark is an empty line', () => {
    expect(decode("sdk", "\ufeffdata: a\n\ufeff\ndata: \ufeffb\n\n")).toEqual([
      [null, "a"],
      [null, "\ufeffb"],
    ]);
  });

  it("a field with an empty value, and only the first space after the colon is dropped", () => {
    expect(decode("sdk", "event:\ndata:\ndata:  two\n\n")).toEqual([["", "\n two"]]);
    expect(decode("pi", "event: e\ndata:\n\n")).toEqual([["e", ""]]);
  });
});
