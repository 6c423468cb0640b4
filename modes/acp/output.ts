/**
 * The output side of ACP mode, opened when the mode is chosen (before the session is built):
 * the stdout guard takes stdout over (only protocol lines reach it; console.log and stray writes
 * go to stderr), kernel diagnostics go to stderr, and the "ui" service is the ACP UI (dialogs
 * answer their defaults until the server attaches the connection).
 * Small on purpose: imported at start-up by the plugin's index.
 */
import { type Kernel, formatDiagnostic } from "../../core/kernel/index.js";
import { StdoutGuard } from "../../core/stores/index.js";
import { createAcpUi, type AcpUi } from "./ui.js";

export interface AcpOutput {
  guard: StdoutGuard;
  ui: AcpUi;
  close(): Promise<void>;
}

const outputs = new WeakMap<Kernel, AcpOutput>();

export function openAcpOutput(kernel: Kernel): AcpOutput {
  const existing = outputs.get(kernel);
  if (existing) return existing;
  const guard = new StdoutGuard();
  guard.takeover();
  const unDiag = kernel.diagnostics.subscribe((d) => {
    if (d.level !== "info") process.stderr.write(formatDiagnostic(d) + "\n");
  });
  const ui = createAcpUi((d) => kernel.diagnostics.report(d));
  const unUi = kernel.provide("ui", ui, "mode-acp");
  let closing: Promise<void> | undefined;
  const out: AcpOutput = {
    guard,
    ui,
    close() {
      closing ??= (async () => {
        ui.cancelAll();
        unDiag();
        unUi();
        await guard.flush();
        guard.release();
        outputs.delete(kernel);
      })();
      return closing;
    },
  };
  outputs.set(kernel, out);
  return out;
}
