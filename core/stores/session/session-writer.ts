/**
 * The write side of a session file: what is not yet on disk, and how it gets there.
 *
 * Entries are appended line by line. A file whose header is not on disk yet starts with the
 * header; a migrated old-version file is stored whole (atomically) once before appending; a
 * short or failed write keeps the lines that did not reach the file and retries them on the
 * next append. The same failure cause is reported once; the recovery is reported as info.
 * SessionManager owns the entries and decides when to write (the lazy first-write rule).
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Diagnostic } from "../../kernel/types.js";
import type { FileEntry } from "./session-entries.js";
import { appendToFile, describeError, serializeLine, writeFileAtomic } from "./session-file.js";

export interface WriterState {
  /** Header/entries not yet on disk, in order. */
  pending: FileEntry[];
  /** The header is on disk: new entries are appended at once. */
  fileStarted: boolean;
  /** The file does not end with "\n" (torn or short write): the next append starts a new line. */
  needsNewline: boolean;
  /** A migrated old-version file still has to be stored (atomically) before appending. */
  needsRewrite: boolean;
}

export class SessionWriter implements WriterState {
  pending: FileEntry[] = [];
  fileStarted = false;
  needsNewline = false;
  needsRewrite = false;
  private lastWriteError: string | undefined;

  constructor(private readonly report: (d: Diagnostic) => void) {}

  /** Start over with this state (a new, loaded or branched session); forgets the last failure. */
  reset(state: WriterState): void {
    this.pending = state.pending;
    this.fileStarted = state.fileStarted;
    this.needsNewline = state.needsNewline;
    this.needsRewrite = state.needsRewrite;
    this.lastWriteError = undefined;
  }

  /**
   * Write what is pending to `file` (for a pending rewrite: `whole()`, the header and every
   * entry). Returns false when a write failed (reported). Never throws.
   */
  flush(file: string, whole: () => FileEntry[]): boolean {
    if (this.needsRewrite) {
      try {
        writeFileAtomic(file, whole().map(serializeLine).join(""));
      } catch (error) {
        this.failed(file, `could not store the migrated session: ${describeError(error)}`, describeError(error));
        return false;
      }
      this.needsRewrite = false;
      this.pending = [];
      this.needsNewline = false;
      this.fileStarted = true;
      this.succeeded(file);
      return true;
    }
    if (this.pending.length === 0) return true;
    if (!this.fileStarted) {
      try {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 }); // transcripts are private: the folders too
      } catch (error) {
        this.failed(file, `could not create the session folder: ${describeError(error)}`, describeError(error));
        return false;
      }
    }
    const prefix = this.needsNewline ? "\n" : "";
    const lines = this.pending.map(serializeLine);
    const result = appendToFile(file, Buffer.from(prefix + lines.join(""), "utf8"));
    if (!result.error) {
      if (this.pending[0]?.type === "session") this.fileStarted = true;
      this.pending = [];
      this.needsNewline = false;
      this.succeeded(file);
      return true;
    }
    // Account for a short write: keep only the lines that did not reach the file whole.
    let left = result.bytesWritten;
    if (prefix && left >= 1) {
      left -= 1;
      this.needsNewline = false;
    }
    let done = 0;
    for (const line of lines) {
      const n = Buffer.byteLength(line);
      if (left < n) break;
      left -= n;
      done++;
    }
    if (left > 0) this.needsNewline = true;
    if (done > 0) {
      if (this.pending[0]?.type === "session") this.fileStarted = true;
      this.pending = this.pending.slice(done);
    }
    this.failed(
      file,
      `could not write the session (${this.pending.length} entries kept in memory, retried on the next append): ${describeError(result.error)}`,
      describeError(result.error),
    );
    return false;
  }

  /** Report a write failure; the same cause failing again is reported once. */
  private failed(file: string, message: string, cause: string): void {
    if (this.lastWriteError === cause) return;
    this.lastWriteError = cause;
    this.report({ level: "error", source: file, message });
  }

  private succeeded(file: string): void {
    if (this.lastWriteError === undefined) return;
    this.lastWriteError = undefined;
    this.report({ level: "info", source: file, message: "session writes resumed; pending entries written" });
  }
}
