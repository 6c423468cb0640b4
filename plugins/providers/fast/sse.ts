/**
 * Server-sent-event decoding for the streaming fast path, in the two dialects whose results the
 * fast path must reproduce exactly:
 *
 * - "sdk": what the `openai` SDK's Stream does (pi-ai's openai-completions path): lines end at
 *   "\n", "\r\n" or "\r" (a "\r" at the end of a network chunk waits for the next byte), every
 *   line is decoded as UTF-8 on its own (so one leading BOM per line is dropped), an event is
 *   dispatched at an empty line, and a last event without its empty line at the end of the body.
 * - "pi": pi-ai's own decoder for Anthropic streams: the text is decoded as one stream, a "\r" at
 *   the end of a network chunk ends the line at once (a "\n" opening the next chunk is then an
 *   empty line), the raw lines of each event are kept (they appear in pi-ai's error messages),
 *   and the last event is dispatched at the end of the stream even without its empty line.
 *
 * Hand-written rather than `eventsource-parser` 3.1.1 (measured on a loaded 2-core machine:
 * import 19–45 ms; 5,000 chat-completion events fed in 64 KiB pieces 66 ms vs 70–95 ms here,
 * i.e. no gain) because both dialects deviate from the WHATWG algorithm that package follows
 * (an event with no data line, the trailing event, raw lines, the "\r" at a chunk's end), and
 * those deviations are part of what must come out identical.
 */

export type SseDialect = "sdk" | "pi";

/** One dispatched event. `raw` is only kept in the "pi" dialect (else empty). */
export type SseHandler = (event: string | null, data: string, raw: readonly string[]) => void;

const NO_RAW: readonly string[] = Object.freeze([]);

export class SseDecoder {
  private readonly decoder: InstanceType<typeof TextDecoder>;
  private pending = "";
  private event: string | null = null;
  private data: string[] = [];
  private raw: string[] = [];

  constructor(
    private readonly dialect: SseDialect,
    private readonly onEvent: SseHandler,
  ) {
    // "sdk" decodes every line on its own: keep BOMs here and drop one per line below.
    this.decoder = new TextDecoder("utf-8", { ignoreBOM: dialect === "sdk" });
  }

  /** Feed one network chunk. */
  push(bytes: Uint8Array): void {
    const text = this.decoder.decode(bytes, { stream: true });
    this.scan(this.pending ? this.pending + text : text, false);
  }

  /** The body ended. */
  end(): void {
    const rest = this.pending + this.decoder.decode();
    this.pending = "";
    if (this.dialect === "sdk") {
      // The SDK flushes a last unterminated line as a line, then an event still open (no blank line after it).
      if (rest.length) this.scan(rest + "\n", true);
      if (this.event || this.data.length) this.dispatch();
      return;
    }
    this.scan(rest, true);
    if (this.pending.length) this.line(this.pending);
    this.pending = "";
    if (this.event || this.data.length) this.dispatch();
  }

  private scan(s: string, final: boolean): void {
    let start = 0;
    const n = s.length;
    if (s.indexOf("\r") === -1) {
      let i: number;
      while ((i = s.indexOf("\n", start)) !== -1) {
        this.line(s.slice(start, i));
        start = i + 1;
      }
    } else {
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c === 10) {
          this.line(s.slice(start, i));
          start = i + 1;
        } else if (c === 13) {
          if (i + 1 < n) {
            this.line(s.slice(start, i));
            start = s.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
            if (start === i + 2) i++;
          } else if (this.dialect === "pi" || final) {
            this.line(s.slice(start, i));
            start = i + 1;
          } else break; // "sdk": wait for the next chunk to tell "\r\n" from "\r"
        }
      }
    }
    this.pending = start === 0 ? s : s.slice(start);
  }

  private line(line: string): void {
    // charCodeAt only where there is a character: on "" (every event ends at an empty line) it
    // reads out of bounds, which V8's optimized code of this function does not expect; it would
    // leave that code at the first empty line and compile the function again.
    if (line.length > 0 && this.dialect === "sdk" && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    if (line === "") {
      if (this.event || this.data.length) this.dispatch();
      return;
    }
    if (this.dialect === "pi") this.raw.push(line);
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(":");
    if (colon === -1) {
      if (line === "event") this.event = "";
      else if (line === "data") this.data.push("");
      return;
    }
    const field = line.slice(0, colon);
    let value = line.slice(colon + 1);
    if (value.length > 0 && value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
  }

  private dispatch(): void {
    const event = this.event;
    const data = this.data.length === 1 ? this.data[0]! : this.data.join("\n");
    const raw = this.dialect === "pi" ? this.raw : NO_RAW;
    this.event = null;
    this.data = [];
    if (this.dialect === "pi") this.raw = [];
    this.onEvent(event, data, raw);
  }
}
