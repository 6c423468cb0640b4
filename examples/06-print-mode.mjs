/**
 * A mode runner: hand a runtime to the print mode, which sends the prompts, prints the last
 * answer on stdout and disposes the runtime (runPrintMode / runRpcMode / runInteractiveMode).
 * These are the only SDK calls that take the terminal over; createAgentSession* never does.
 *
 *   node examples/06-print-mode.mjs "Say hello"
 */
import { createAgentSessionRuntime, runPrintMode, SessionManager } from "pi-kernel";

const runtime = await createAgentSessionRuntime({ sessionManager: SessionManager.inMemory() });
process.exitCode = await runPrintMode(runtime, {
  mode: "text", // or "json": every event as a JSON line
  initialMessage: process.argv[2] ?? "Say hello",
});
