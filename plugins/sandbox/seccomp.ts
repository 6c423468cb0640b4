/**
 * A classic-BPF seccomp program (the format bwrap's `--seccomp FD` loads) that makes
 * `socket(AF_UNIX, …)` fail with EACCES (and io_uring_setup, whose socket and connect operations
 * would go around that check; programs fall back to plain system calls). With the network off, this keeps a sandboxed command
 * from connecting to any path Unix socket it can see (a tmux server, an ssh-agent, docker's or
 * systemd's socket in a folder nobody thought to hide); `socketpair()` (pipes between a program
 * and its children) is a different system call and keeps working.
 *
 * Written for x86-64 (also refusing the x32 and i386 entry points: i386's socketcall() is refused
 * whole, since its arguments cannot be inspected) and aarch64 (with arm32's socket()). Other
 * architectures get no program (the caller says so).
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_EACCES = 0x00050000 | 13;
const AF_UNIX = 1;
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16;
/** io_uring_setup (the same number on every architecture here): io_uring can create and connect sockets without socket(2). */
const IO_URING_SETUP = 425;

interface ArchTable {
  arch: number;
  socket: number[];
  /** System calls refused whatever their arguments (i386 socketcall). */
  refuse: number[];
}

const TABLES: Record<string, ArchTable[]> = {
  // AUDIT_ARCH_X86_64; x32 numbers are the x86-64 ones with bit 30 set. AUDIT_ARCH_I386: socket 359, socketcall 102.
  x64: [
    { arch: 0xc000003e, socket: [41, 0x40000000 | 41], refuse: [IO_URING_SETUP, 0x40000000 | IO_URING_SETUP] },
    { arch: 0x40000003, socket: [359], refuse: [102, IO_URING_SETUP] },
  ],
  // AUDIT_ARCH_AARCH64 socket 198; AUDIT_ARCH_ARM socket 281.
  arm64: [
    { arch: 0xc00000b7, socket: [198], refuse: [IO_URING_SETUP] },
    { arch: 0x40000028, socket: [281], refuse: [IO_URING_SETUP] },
  ],
};

type Insn = [code: number, jt: number, jf: number, k: number];

/** The program for `arch` (Node's process.arch), or undefined when none is written for it. */
export function seccompDenyUnixSockets(arch: string): Buffer | undefined {
  const tables = TABLES[arch];
  if (!tables) return undefined;
  // Layout, per architecture block: ld arch; jeq arch ? next : (next block); ld nr;
  // jeq refuse… → DENY; jeq socket… → CHECK; ret ALLOW. Then CHECK: ld arg0; jeq AF_UNIX → DENY : ALLOW.
  // An unknown architecture (a foreign entry point) is refused.
  const blocks: Insn[][] = [];
  for (const t of tables) {
    const body: Insn[] = [[BPF_LD_W_ABS, 0, 0, OFF_NR]];
    for (const nr of t.refuse) body.push([BPF_JEQ_K, -1 /* DENY */, 0, nr]);
    for (const nr of t.socket) body.push([BPF_JEQ_K, -2 /* CHECK */, 0, nr]);
    body.push([BPF_RET_K, 0, 0, RET_ALLOW]);
    blocks.push([[BPF_LD_W_ABS, 0, 0, OFF_ARCH], [BPF_JEQ_K, 0, body.length /* skip to next block */, t.arch], ...body]);
  }
  const prog: Insn[] = blocks.flat();
  prog.push([BPF_RET_K, 0, 0, RET_EACCES]); // no known architecture
  const check = prog.length;
  prog.push([BPF_LD_W_ABS, 0, 0, OFF_ARG0_LOW], [BPF_JEQ_K, 0, 1, AF_UNIX]);
  const deny = prog.length;
  prog.push([BPF_RET_K, 0, 0, RET_EACCES], [BPF_RET_K, 0, 0, RET_ALLOW]);
  // Resolve the symbolic jump targets (jumps are relative to the next instruction).
  const out = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    const target = (v: number) => (v === -1 ? deny - i - 1 : v === -2 ? check - i - 1 : v);
    const t = target(jt);
    const f = target(jf);
    if (t < 0 || t > 255 || f < 0 || f > 255) throw new Error("seccomp program too long");
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(t, i * 8 + 2);
    out.writeUInt8(f, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
