/**
 * ACP session ids are our session ids. This finds the file of a session the client names
 * (sessions seen in this process, then the folder's session store) and lists the store for
 * session/list.
 */
import { listSessionsInDir } from "../../core/stores/index.js";
import type { AgentSession, AgentSessionRuntime } from "../../core/engine/index.js";

export interface AcpSessionInfo {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt?: string;
}

export class AcpSessions {
  private readonly files = new Map<string, string>();
  private freshClaimed = false;

  constructor(private readonly runtime: AgentSessionRuntime) {}

  /** The session the process started with serves the first session/new when it is still empty. */
  claimFresh(): boolean {
    if (this.freshClaimed) return false;
    this.freshClaimed = true;
    return this.runtime.session.messages.length === 0;
  }

  remember(s: AgentSession): void {
    if (s.sessionFile) this.files.set(s.sessionId, s.sessionFile);
  }

  private storeDir(): string | undefined {
    const sm = this.runtime.sessionManager as { isPersisted?(): boolean; getSessionDir?(): string };
    return sm.isPersisted?.() && sm.getSessionDir ? sm.getSessionDir() : undefined;
  }

  async find(id: string): Promise<string | undefined> {
    const known = this.files.get(id);
    if (known) return known;
    const dir = this.storeDir();
    if (!dir) return undefined;
    const hit = (await listSessionsInDir(dir)).find((s) => s.id === id);
    return hit?.path;
  }

  async list(cwd?: string): Promise<AcpSessionInfo[]> {
    const dir = this.storeDir();
    const cur = this.runtime.session;
    const out: AcpSessionInfo[] = [];
    if (dir) {
      const infos = await listSessionsInDir(dir);
      infos.sort((a, b) => b.modified.getTime() - a.modified.getTime());
      for (const s of infos) {
        const scwd = s.cwd || this.runtime.cwd;
        if (cwd && scwd !== cwd) continue;
        const title = s.name ?? (s.firstMessage && s.firstMessage !== "(no messages)" ? s.firstMessage.slice(0, 80) : undefined);
        out.push({ sessionId: s.id, cwd: scwd, ...(title ? { title } : {}), updatedAt: s.modified.toISOString() });
      }
    }
    if (!out.some((s) => s.sessionId === cur.sessionId) && cur.messages.length && (!cwd || cwd === this.runtime.cwd)) {
      out.unshift({ sessionId: cur.sessionId, cwd: this.runtime.cwd, ...(cur.sessionName ? { title: cur.sessionName } : {}), updatedAt: new Date().toISOString() });
    }
    return out;
  }
}
