/**
 * Protocol I/O for the non-interactive modes: strict JSONL framing and the stdout guard
 * (protocol.md §1). Node built-ins only; cheap to import.
 */
export {
  serializeRecord,
  parseJsonLine,
  JsonlLineReader,
  attachJsonlReader,
  type ParseJsonLineResult,
} from "./jsonl.js";
export {
  StdoutGuard,
  isStdoutTTY,
  isStdinTTY,
  isTransientWriteError,
  type StdoutGuardOptions,
  type GuardOutput,
  type WritableLike,
} from "./stdout-guard.js";
