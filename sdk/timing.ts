/**
 * PI_TIMING=1: where start-up time goes (module loads, each plugin's setup, each extension's
 * load), printed to stderr once the mode is about to start.
 */
export class Timing {
  private readonly start = performance.now();
  private last = this.start;
  private readonly rows: Array<{ label: string; ms: number }> = [];

  constructor(readonly enabled: boolean) {
    if (enabled) {
      // Time from process start to the first line of our code: Node start-up and module loading.
      this.rows.push({ label: "node start + module loading", ms: this.start });
    }
  }
  /** Time since the previous mark. */
  mark(label: string): void {
    if (!this.enabled) return;
    const now = performance.now();
    this.rows.push({ label, ms: now - this.last });
    this.last = now;
  }
  /** A measured span (a plugin's setup, an extension's load). */
  record(label: string, ms: number): void {
    if (this.enabled) this.rows.push({ label: `  ${label}`, ms });
  }
  report(write: (s: string) => void): void {
    if (!this.enabled) return;
    const total = performance.now();
    const lines = ["PI_TIMING (ms):"];
    for (const r of this.rows) lines.push(`  ${r.ms.toFixed(1).padStart(8)}  ${r.label}`);
    lines.push(`  ${total.toFixed(1).padStart(8)}  total since process start`);
    write(lines.join("\n"));
    this.rows.length = 0;
  }
}
