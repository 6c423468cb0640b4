/**
 * Terminal input for `pi auth login`: a secret read without echo from a terminal, or the whole of
 * stdin when it is piped (so scripts can store a key: `printf %s "$KEY" | pi auth login openai --api-key`);
 * and the OAuth callbacks pi-ai's login flows call (print the URL, ask for a pasted code).
 */
import { createInterface } from "node:readline";
import type { SubcommandContext } from "../../core/kernel/index.js";
import { openInBrowser } from "../../core/kernel/lazy.js";
import type { AuthStorage } from "../../core/stores/index.js";

export async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(Buffer.from(c as Buffer));
    return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0] ?? "";
  }
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let value = "";
    stdin.setRawMode(true);
    stdin.resume();
    const done = (v: string) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      resolve(v);
    };
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done(value);
        if (ch === "\u0003") return done("");
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

/** One answer from the terminal; Ctrl+C (or the end of input) cancels the sign-in at once. */
function ask(message: string, provider: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve, reject) => {
    let answered = false;
    const cancel = () => {
      if (answered) return;
      answered = true;
      rl.close();
      process.stderr.write("\n");
      reject(Object.assign(new Error(`signing in to ${provider} cancelled; nothing saved`), { code: 130 }));
    };
    rl.on("SIGINT", cancel);
    rl.on("close", cancel);
    rl.question(`${message} `, (a) => {
      answered = true;
      rl.close();
      resolve(a.trim());
    });
  });
}

export async function oauthLogin(auth: AuthStorage, provider: string, ctx: SubcommandContext, opts: { noBrowser: boolean }): Promise<void> {
  if (!process.stdin.isTTY) throw new Error(`signing in to ${provider} needs an interactive terminal (or save an API key: pi auth login ${provider} --api-key)`);
  await auth.login(provider, {
    onAuth: (info: { url: string; instructions?: string }) => {
      ctx.stderr(`Open this address to sign in to ${provider}:\n  ${info.url}${info.instructions ? `\n${info.instructions}` : ""}`);
      if (!opts.noBrowser) void openInBrowser(info.url);
    },
    onPrompt: (p: { message: string; placeholder?: string }) => ask(p.placeholder ? `${p.message} (${p.placeholder}):` : p.message, provider),
    onProgress: (m: string) => ctx.stderr(m),
    // A provider offering several sign-in methods (as pi 1.6's command): the browser sign-in (listed
    // first) unless --no-browser; then the one other method, or a numbered choice among several.
    onSelect: async (p: { message: string; options: { id: string; label: string }[] }) => {
      const [first, ...others] = p.options;
      if (!first || !opts.noBrowser || others.length === 0) return first?.id;
      if (others.length === 1) {
        ctx.stderr(`${p.message} ${others[0]!.label}`);
        return others[0]!.id;
      }
      ctx.stderr(p.message);
      others.forEach((o, i) => ctx.stderr(`  ${i + 1}. ${o.label}`));
      for (;;) {
        const answer = await ask(`Select 1-${others.length}:`, provider);
        const chosen = /^\d+$/.test(answer) ? others[Number(answer) - 1] : undefined;
        if (chosen) return chosen.id;
        ctx.stderr(`Enter a number from 1 to ${others.length}.`);
      }
    },
    onManualCodeInput: () => ask("Paste the redirect URL or code:", provider),
  });
}

