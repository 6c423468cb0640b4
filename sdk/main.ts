/**
 * createCli(): builds a complete CLI (argv → kernel + plugins → mode) from a list of plugins.
 * `pi` is one such CLI; teams ship their own with their own name, config folder and inline
 * extensions.
 */
import { redactProcessStderr } from "../core/kernel/redact.js";
import { existsSync, mkdirSync } from "node:fs";
import { defineApp, resolveAgentDir, type AppConfig } from "../core/kernel/config.js";
import { formatDiagnostic, type Kernel, type ModeContext } from "../core/kernel/kernel.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import type { Diagnostic, ImageContent } from "../core/kernel/types.js";
import { CORE_FLAGS, likelySubcommandTypo, parseArgs, renderHelp, unknownFlagMessage, type CoreFlag, type ParsedArgs } from "./args.js";
import { Timing } from "./timing.js";
import { createSessionRuntime, SessionSetupError } from "./session-setup.js";
import { processFileArgs, readPipedStdin } from "./file-args.js";
import { PluginStartError, setupKernel } from "./kernel-setup.js";
import { ModeSelectError, prepareMode, requireModeForFlag, resolveMode } from "../core/kernel/modes.js";
import { BUILTIN_EXTENSION_NAMES, resolveBuiltinExtensions } from "../core/kernel/builtin-extensions.js";
import { chooseTheme } from "./theme-choice.js";
import { writeRealStdout } from "../core/stores/io/stdout-guard.js";

export interface CliOptions {
  name: string;
  version: string;
  /** Project config folder (default `.<name>`); the agent dir is `~/<configDir>/agent` or `$<NAME>_CODING_AGENT_DIR`. */
  configDir?: string;
  /** Kernel plugins (manifests); the built-ins for `pi`. */
  plugins: PluginManifest[];
  /** pi extension factories to load inline (need the extensions plugin). */
  extensionFactories?: Array<(pi: any) => unknown>;
  /** Override the environment variable naming the agent dir. */
  agentDirEnv?: string;
}

export interface CliIo {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface Cli {
  app: AppConfig;
  run(argv: string[], io?: CliIo): Promise<number>;
}

export function createCli(opts: CliOptions): Cli {
  const app = defineApp(opts.name, opts.version, opts.configDir);
  if (opts.agentDirEnv) app.agentDirEnv = opts.agentDirEnv;
  return {
    app,
    run: (argv, io) => runCli(app, opts, argv, io ?? {}),
  };
}

class UsageError extends Error {}

/**
 * pi 1.6's built-in extensions, which are built-in plugins here and always on unless their own
 * switch turns them off (`--no-mcp`): mcp = the MCP plugin; codemode and tool-search = the MCP
 * plugin's search tool (docs/pi-1.6-compat.md); llama.cpp = the llama.cpp plugin, which reads
 * the same settings itself.
 */
const BUILTIN_EXTENSIONS = new Set<string>(BUILTIN_EXTENSION_NAMES);

/** `builtin:mcp` off: as --no-mcp. The other names have no separate plugin here (docs/pi-1.6-compat.md). */
function applyBuiltinExtensions(kernel: Kernel, parsed: ParsedArgs, explicit: string[]): void {
  const s = kernel.settings;
  const trust = kernel.service("project-trust");
  const trusted = !!trust && trust.isTrusted(kernel.cwd) === true;
  const r = resolveBuiltinExtensions({ global: s.getGlobal().extensions, project: trusted ? s.getProject().extensions : undefined, noExtensions: parsed.flags["no-extensions"] === true, explicit });
  for (const p of r.problems) kernel.diagnostics.report({ level: "warning", source: "settings", message: `extensions: ${p}` });
  if (!r.enabled.has("mcp")) parsed.flags["no-mcp"] = true;
  // The session's tool selection leaves out the tools of built-in extensions turned off (codemode, tool-search).
  kernel.provide("builtin-extensions-enabled", r.enabled, "cli");
}

async function runCli(app: AppConfig, opts: CliOptions, argv: string[], io: CliIo): Promise<number> {
  const env = io.env ?? process.env;
  const timing = new Timing(env.PI_TIMING === "1" || env.PI_TIMING === "true");
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  // Whatever reaches this process's stderr has the credentials the CLI knows replaced.
  if (!io.stderr) redactProcessStderr();
  const err = (s: string) => stderr.write(s.endsWith("\n") ? s : s + "\n");
  // The CLI's own answers (help, listings, subcommands) reach stdout even when the stray-write
  // guard of a non-interactive mode is already on.
  const out = (s: string) => (io.stdout ? stdout.write(s) : writeRealStdout(s));
  const cwd = io.cwd ?? process.cwd();

  // Pass 1: the core flags only.
  let pass1: ParsedArgs;
  try {
    pass1 = parseArgs(argv, CORE_FLAGS);
  } catch (e) {
    err(`${app.name}: ${(e as Error).message}`);
    return 1;
  }
  timing.mark("parse pass 1");
  if (pass1.flags.version) {
    out(app.version + "\n");
    return 0;
  }
  // `-e builtin:<name>`: 1.6's built-in extensions are built-in plugins here.
  const builtinExt = ([] as unknown[]).concat(pass1.flags.extension ?? []).map(String).filter((x) => x.startsWith("builtin:"));
  if (builtinExt.length) {
    const unknownBuiltin = builtinExt.find((x) => !BUILTIN_EXTENSIONS.has(x.slice("builtin:".length)));
    if (unknownBuiltin) {
      err(`${app.name}: unknown built-in extension "${unknownBuiltin}" (known: ${[...BUILTIN_EXTENSIONS].map((n) => "builtin:" + n).join(", ")})`);
      return 2;
    }
    const rest = ([] as unknown[]).concat(pass1.flags.extension).map(String).filter((x) => !x.startsWith("builtin:"));
    pass1.flags.extension = rest;
    if (!rest.length) delete pass1.flags.extension;
  }
  if (pass1.flags.offline || /^(1|true|yes)$/i.test(env.PI_OFFLINE ?? "")) env.PI_OFFLINE = "1";
  // Process markers child processes inherit (pi 1.6): AI_AGENT=pi and PI_CODING_AGENT=true.
  env.AI_AGENT = app.name;
  env[app.agentDirEnv.replace(/_DIR$/, "")] = "true";

  const agentDir = resolveAgentDir(app, env);
  // The agent dir holds credentials and transcripts: created owner-only.
  try {
    if (!existsSync(agentDir)) mkdirSync(agentDir, { recursive: true, mode: 0o700 });
  } catch {
    /* reported by whatever needs it first */
  }
  // Until a mode takes over, diagnostics go to stderr as they happen.
  let unsubscribeDiag: () => void = () => undefined;
  function printDiagnostic(d: Diagnostic) {
    if (d.level === "info" && !pass1.flags.verbose) return;
    err(formatDiagnostic(d));
  }
  // The kernel is built by setupKernel(), shared with the SDK (sdk/kernel-setup.ts).
  let kernel: Kernel;
  try {
    ({ kernel } = await setupKernel({
      app,
      cwd,
      agentDir,
      argv: pass1,
      rawArgv: argv,
      plugins: opts.plugins,
      extensionFactories: opts.extensionFactories,
      timing,
      onKernel: (k) => {
        unsubscribeDiag = k.diagnostics.subscribe((d) => printDiagnostic(d), true);
      },
    }));
  } catch (e) {
    unsubscribeDiag();
    if (e instanceof PluginStartError) {
      err(`${app.name}: a built-in plugin failed to start: ${e.message}`);
      return 1;
    }
    throw e;
  }

  // Pass 2: with the flags plugins and extensions registered.
  const allFlags = kernel.flags.list().map((e) => ({ ...e.value, source: e.source }));
  const parsed = parseArgs(argv, allFlags);
  kernel.provide("argv", parsed, "cli");
  // (1.6 compat) built-in extensions on/off from the `extensions` setting, -ne and -e builtin:<name>.
  applyBuiltinExtensions(kernel, parsed, builtinExt.map((x) => x.slice("builtin:".length)));
  // (1.6 compat) --use-theme: the TUI's theme for this run, not saved.
  if (typeof parsed.flags["use-theme"] === "string" && parsed.flags["use-theme"].trim()) kernel.settings.setOverride("theme", chooseTheme(parsed.flags["use-theme"], env));
  // A subcommand reads its own options (`pi mcp add --env KEY=V -H "K: V" …`): they are
  // not warned about as unknown nor checked against the main flags' services.
  // The first word is a subcommand only before any `--`; an unknown
  // option is an error (exit 2) naming the closest known one, and a first word that is a near
  // miss of a registered subcommand is an error rather than a prompt. Both derive from the
  // registries, so flags and subcommands that plugins and extensions register are known.
  const dashDash = argv.indexOf("--");
  const firstWordIndex = argv.findIndex((a) => !a.startsWith("-"));
  const subcommandWord = firstWordIndex >= 0 && (dashDash < 0 || firstWordIndex < dashDash) ? argv[firstWordIndex] : undefined;
  const isSubcommand = !!subcommandWord && parsed.positionals[0] === subcommandWord && kernel.subcommands.has(subcommandWord);
  if (!isSubcommand && !parsed.flags.help) {
    if (parsed.unknown.length) {
      for (const u of parsed.unknown) err(`${app.name}: ${unknownFlagMessage(u, allFlags)}`);
      unsubscribeDiag();
      return 2;
    }
    const typo = subcommandWord && parsed.positionals[0] === subcommandWord ? likelySubcommandTypo(subcommandWord, kernel.subcommands.names()) : undefined;
    if (typo) {
      err(`${app.name}: unknown command "${subcommandWord}" (did you mean "${typo}"?). To send it to the model as a message, write: ${app.name} -- ${subcommandWord}`);
      unsubscribeDiag();
      return 2;
    }
  }

  try {
    // `pi <subcommand> --help`: the subcommand's own help.
    if (isSubcommand && argv.slice(firstWordIndex + 1).some((a) => a === "--help" || a === "-h")) {
      const sub = kernel.subcommands.get(subcommandWord!)!;
      const text = typeof sub.help === "function" ? sub.help() : sub.help;
      out(text ? (text.endsWith("\n") ? text : text + "\n") : `Usage:\n  ${app.name} ${sub.usage ?? sub.name}\n\n${sub.description}\n`);
      return 0;
    }
    if (parsed.flags.help) {
      out(
        await renderHelp({
          name: app.name,
          version: app.version,
          flags: allFlags,
          subcommands: uniqueSubcommands(kernel),
          envVar: app.agentDirEnv,
          providerEnv: (await import("../core/stores/models/builtin-catalog.js")).providerEnvVars(),
        }),
      );
      return 0;
    }

    // A flag with a fixed set of values names the ones it takes.
    for (const { name, value: flag } of isSubcommand ? [] : kernel.flags.list()) {
      const v = parsed.flags[name];
      if (flag.choices?.length && typeof v === "string" && !flag.choices.includes(v)) {
        throw new UsageError(`--${name} "${v}" is not one of ${flag.choices.join(", ")}`);
      }
    }

    // Flags whose feature is not installed.
    for (const f of isSubcommand ? [] : (CORE_FLAGS as CoreFlag[])) {
      if (f.requires && parsed.flags[f.name] !== undefined && parsed.flags[f.name] !== false && !kernel.hasService(f.requires)) {
        throw new UsageError(`--${f.name} is not available yet: no installed plugin provides "${f.requires}"`);
      }
    }

    // Subcommands: the first word, when a plugin registered it.
    if (isSubcommand) {
      const sub = kernel.subcommands.get(subcommandWord!)!;
      const code = await sub.run(argv.slice(firstWordIndex + 1), { kernel, cwd, stdout: out, stderr: err });
      return typeof code === "number" ? code : 0;
    }

    // Flags that answer and exit: each flag's own action (registered with the flag by its plugin).
    for (const { name, value: flag } of kernel.flags.list()) {
      const v = parsed.flags[name];
      if (!flag.action || v === undefined || v === false) continue;
      const text = await Promise.resolve(flag.action(v, { kernel, cwd, positionals: parsed.positionals })).catch((e: unknown) => {
        throw new UsageError(`--${name}: ${e instanceof Error ? e.message : String(e)}`);
      });
      out(text);
      return 0;
    }

    // Plugins check their flags and settings before a session starts (hook startup_check);
    // an answer `{ error }` ends the run with its message (exit 1).
    const refused = await kernel.hooks.startup_check.promise({ type: "startup_check", flags: parsed.flags });
    if (refused?.error) throw new UsageError(refused.error);

    const stdinIsTTY = !!(io.stdin ?? process.stdin).isTTY;
    const stdoutIsTTY = !!(stdout as { isTTY?: boolean }).isTTY;
    // `--mode text` is the default output mode (pi 1.6): in a terminal, without -p, the TUI.
    const textInTerminal = parsed.flags.mode === "text" && stdinIsTTY && stdoutIsTTY && !parsed.flags.print;
    const modeFlag = textInTerminal ? undefined : (parsed.flags.mode as string | undefined);
    // --mode names a registered mode (core/kernel/modes.ts); one that reads stdin itself owns it.
    const flagged = modeFlag !== undefined ? requireModeForFlag(kernel, modeFlag) : undefined;
    const ownsStdin = !!flagged?.ownsStdin;

    // Messages, @file arguments and piped stdin.
    let messages = [...parsed.positionals];
    let images: ImageContent[] = [];
    if (ownsStdin && messages.some((m) => m.startsWith("@"))) throw new UsageError(`@file arguments cannot be used with --mode ${modeFlag}`);
    const files = await processFileArgs(messages, cwd, (path) => {
      // Path rules apply to @file arguments as to the read tool.
      const gate = kernel.service("permission-gate") as { check(tool: string, input: Record<string, unknown>): { decision: string; reason?: string } } | undefined;
      const ev = gate?.check("read", { path });
      return ev?.decision === "deny" ? `blocked by the permission gate (${ev.reason})` : undefined;
    }, kernel.settings.get().images?.autoResize === false ? undefined : async (image) => (await import("../plugins/tools/images.js")).fitImageForModel(image));
    messages = files.messages;
    images = files.images;
    let pipedInput = false;
    if (!ownsStdin && !stdinIsTTY) {
      const text = await readPipedStdin(io.stdin ?? process.stdin);
      if (text) {
        pipedInput = true;
        if (messages.length) messages[0] = `${text}\n\n${messages[0]}`;
        else messages.unshift(text);
      }
    }
    if (files.prefix) {
      if (messages.length) messages[0] = files.prefix + messages[0];
      else messages.unshift(files.prefix.trimEnd());
    }

    // Which mode: the registry decides (--mode, else the claims by priority, then kernel_mode_select).
    const mode = resolveMode(kernel, { flags: parsed.flags, modeFlag, stdinIsTTY, stdoutIsTTY, pipedInput });
    prepareMode(kernel, mode);
    timing.mark("mode select");

    const runtime = await createSessionRuntime({ kernel, parsed, cwd, mode });
    timing.mark("session");
    timing.report(err);
    unsubscribeDiag();
    unsubscribeDiag = () => undefined;
    const ctx: ModeContext = { kernel, argv: parsed.flags, messages, images, runtime };
    return await mode.run(ctx);
  } catch (e) {
    if (e instanceof UsageError || e instanceof SessionSetupError || e instanceof ModeSelectError) {
      err(`${app.name}: ${e.message}`);
      return 1;
    }
    if (e instanceof Error && (e as { code?: string }).code === "PI_FILE_ARG") {
      err(`${app.name}: ${e.message}`);
      return 1;
    }
    // One line naming what failed; the stack only when PI_DEBUG asks for it.
    const message = e instanceof Error ? e.message.replace(/^Error: /, "") : String(e);
    err(`${app.name}: ${process.env.PI_DEBUG && e instanceof Error && e.stack ? e.stack : message.split("\n")[0]}`);
    return 1;
  } finally {
    unsubscribeDiag();
    // plugins' teardown steps, in reverse order; a failing one is printed with its plugin's name
    for (const d of await kernel.dispose()) err(formatDiagnostic(d));
  }
}

function uniqueSubcommands(kernel: Kernel) {
  const seen = new Set<unknown>();
  const out: Array<{ name: string; description: string; usage?: string }> = [];
  for (const e of kernel.subcommands.list()) {
    if (seen.has(e.value)) continue;
    seen.add(e.value);
    out.push({ name: e.value.name, description: e.value.description, usage: e.value.usage });
  }
  return out;
}
