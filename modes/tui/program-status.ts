/**
 * OSC 7501 program status (the terminal shows whether the agent is working, waiting for the
 * user, done or failed): `working` during runs and compaction, `blocked` while a dialog waits,
 * then `done`, `error` (with the first line of the error) or `idle`. Only the session name,
 * dialog titles and error lines are reported, never prompts or answers.
 *
 * Sent only where the terminal takes it, found out as pi 1.6 does: at start the protocol's support
 * query (OSC 7501;?) goes out followed by a device-attributes query (DA, CSI c); a terminal that
 * supports the protocol answers the first before the second, one that does not answers only the
 * DA (tmux and screen answer DA themselves and do not forward the query). The replies are taken
 * out of the input before anything reads them as keys. PI_PROGRAM_STATUS=1 reports without asking,
 * PI_PROGRAM_STATUS=0 never reports. The sequence is formatted by pi-tui's formatProgramStatus (1.x).
 */
import type { AgentSessionEvent } from "../../core/kernel/index.js";

type State = "working" | "blocked" | "done" | "error" | "idle" | "clear";
export interface ProgramStatus {
  state: State;
  message?: string;
  kind?: string;
  app?: string;
}

export const PROGRAM_STATUS_QUERY = "\x1b]7501;?\x1b\\";
const STATUS_REPLY = /\x1b\]7501;\?[^\x07\x1b]*(?:\x07|\x1b\\)/;

const firstLine = (s: unknown) => String(s ?? "").split(/\r?\n/, 1)[0]!.trim() || "Error";

export class ProgramStatusReporter {
  private running = false;
  private compacting = false;
  private outcome: ProgramStatus = { state: "done" };
  private resting: ProgramStatus = { state: "idle" };
  private blocked: string[] = [];
  private last = "";
  private format: ((s: ProgramStatus) => string) | undefined;

  /** The terminal confirmed support (or PI_PROGRAM_STATUS=1). */
  supported: boolean;
  /** The support query is out and the DA reply that ends it has not come back. */
  probing = false;
  private readonly override: string | undefined;

  constructor(
    private readonly write: (seq: string) => void,
    private readonly app: string,
    private readonly sessionName: () => string | undefined,
    override = process.env.PI_PROGRAM_STATUS,
  ) {
    this.override = override;
    this.supported = override === "1";
    if (override === "0") return;
    import("@earendil-works/pi-tui")
      .then((m) => {
        this.format = (m as unknown as { formatProgramStatus?: (s: ProgramStatus) => string }).formatProgramStatus;
        this.report();
      })
      .catch(() => undefined);
  }

  /** Reports go out (now or once the terminal confirms support). */
  get enabled(): boolean {
    return this.supported || this.probing;
  }

  /**
   * The support query to send (not with PI_PROGRAM_STATUS=1 or 0): "" when no query goes out.
   * The caller sends it before the device-attributes query whose reply ends the probe (endProbe).
   */
  probeQuery(): string {
    if (this.override === "1" || this.override === "0" || this.probing) return "";
    this.probing = true;
    return PROGRAM_STATUS_QUERY;
  }

  /** The device-attributes reply came: a terminal that takes the protocol has answered by now. */
  endProbe(): void {
    if (!this.probing) return;
    this.probing = false;
    this.report();
  }

  /**
   * Terminal input while the query is out: the reply to it is taken out. Returns the input left
   * for the keyboard.
   */
  takeReplies(data: string): string {
    if (!this.probing || !data.includes("\x1b")) return data;
    const status = STATUS_REPLY.exec(data);
    if (!status) return data;
    this.supported = true;
    return data.slice(0, status.index) + data.slice(status.index + status[0].length);
  }

  onEvent(e: AgentSessionEvent): void {
    if (!this.enabled) return;
    const ev = e as { type: string; message?: { role?: string; stopReason?: string; errorMessage?: string }; aborted?: boolean; errorMessage?: string; reason?: string };
    switch (ev.type) {
      case "agent_start":
        this.running = true;
        this.outcome = { state: "done" };
        break;
      case "message_end":
        if (ev.message?.role !== "assistant") return;
        this.outcome = ev.message.stopReason === "error" ? { state: "error", message: firstLine(ev.message.errorMessage) } : { state: "done" };
        break;
      case "compaction_start":
        this.compacting = true;
        break;
      case "compaction_end":
        this.compacting = false;
        if (ev.errorMessage) (this.running ? (this.outcome = { state: "error", message: firstLine(ev.errorMessage) }) : (this.resting = { state: "error", message: firstLine(ev.errorMessage) }));
        break;
      case "agent_settled":
      case "agent_end":
        this.running = false;
        this.resting = ev.aborted ? { state: "idle" } : this.outcome;
        break;
      default:
        return;
    }
    this.report();
  }

  /** A dialog opened (title) or closed (undefined). */
  setBlocked(title: string | undefined, open: boolean): void {
    if (!this.enabled) return;
    if (open) this.blocked.push(firstLine(title));
    else this.blocked.pop();
    this.report();
  }

  current(): ProgramStatus {
    if (this.blocked.length) return { state: "blocked", kind: "dialog", message: this.blocked.at(-1) };
    if (this.compacting) return { state: "working", message: "Compacting context" };
    const s = this.running ? { state: "working" as const } : this.resting;
    return s.state === "working" || s.state === "done" ? { ...s, message: this.sessionName() } : s;
  }

  report(status: ProgramStatus = this.current()): void {
    if (!this.supported || !this.format) return;
    const full = { ...status, app: this.app };
    const key = JSON.stringify(full);
    if (key === this.last) return;
    this.last = key;
    try {
      this.write(this.format(full));
    } catch {
      /* output gone */
    }
  }

  /** Leaving: the terminal forgets the status. */
  clear(): void {
    this.report({ state: "clear" });
  }
}
