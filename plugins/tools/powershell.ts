/**
 * powershell: pi 1.6's PowerShell tool — the bash tool's behaviour (streamed output, the kept
 * tail and the full-output temp file, timeout, abort ending the process group, the sandbox's
 * command wrapper) with PowerShell as the shell. Not registered by default: a host or an
 * extension adds it (`pi.registerTool(createPowerShellToolDefinition(cwd))`).
 *
 * Which PowerShell: on Windows `pwsh.exe` on PATH, then `%ProgramFiles%\PowerShell\7\pwsh.exe`,
 * then `powershell.exe` on PATH, then `%SystemRoot%\System32\WindowsPowerShell\v1.0\powershell.exe`
 * (as 1.6). Elsewhere `pwsh` on PATH (PowerShell 7 runs on Linux and macOS; 1.6 refuses there).
 */
import { existsSync } from "node:fs";
import { win32 } from "node:path";
import type { ToolDefinition } from "../../core/kernel/index.js";
import {
  createLocalShellOperations,
  createShellToolDefinition,
  type BashOperations,
  type BashSpawnContext,
  type BashSpawnHook,
  type BashToolDetails,
  type BashToolInput,
  type ShellConfig,
  findOnPath,
} from "./bash.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from "./truncate.js";

export type PowerShellOperations = BashOperations;
export type PowerShellSpawnContext = BashSpawnContext;
export type PowerShellSpawnHook = BashSpawnHook;
export type PowerShellToolDetails = BashToolDetails;
export type PowerShellToolInput = BashToolInput;

export interface PowerShellToolOptions {
  /** Where commands run; default createLocalPowerShellOperations(). */
  operations?: PowerShellOperations;
  /** Adjusts command, cwd or environment just before the command runs. */
  spawnHook?: PowerShellSpawnHook;
}

/** Arguments before the command: no profile, no prompts, scripts allowed, then `-Command`. */
export const POWERSHELL_ARGS = ["-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"] as const;

/** The PowerShell executable and its arguments (see the file comment for the search order). */
export function getPowerShellConfig(): ShellConfig {
  let shell: string | undefined;
  if (process.platform === "win32") {
    shell = findOnPath("pwsh.exe");
    const programFiles = process.env.ProgramFiles;
    if (!shell && programFiles && existsSync(win32.join(programFiles, "PowerShell", "7", "pwsh.exe"))) shell = win32.join(programFiles, "PowerShell", "7", "pwsh.exe");
    shell ??= findOnPath("powershell.exe");
    const systemRoot = process.env.SystemRoot;
    const legacy = systemRoot && win32.join(systemRoot, "System32", "WindowsPowerShell", "v1.0", "powershell.exe");
    if (!shell && legacy && existsSync(legacy)) shell = legacy;
    if (!shell) throw new Error("No PowerShell found: install PowerShell 7 (pwsh.exe) or put powershell.exe on PATH.");
  } else {
    shell = findOnPath("pwsh");
    if (!shell) throw new Error("No PowerShell found: install PowerShell 7 and put pwsh on PATH.");
  }
  return { shell, args: [...POWERSHELL_ARGS] };
}

/** Console output as UTF-8 (Windows consoles default to a code page); harmless where it already is. */
const UTF8_PREFIX = "try { [Console]::OutputEncoding = [System.Text.Encoding]::UTF8 } catch {}\n";

/**
 * Windows PowerShell 5.1 turns a native program's redirected stderr into error records, so
 * `git fetch 2>&1` reports failure although git exited 0. After the command: exit 0 when the last
 * statement succeeded, or when it only failed on such a record of a program that exited 0; else 1.
 * The `;` line keeps an unfinished last line a parse error. PowerShell 7 needs none of this.
 */
const LEGACY_EXIT_SUFFIX =
  "\n;\nif ($?) { exit 0 }\n" + 'if ($LASTEXITCODE -eq 0 -and "$($Error[0].FullyQualifiedErrorId)" -like "NativeCommandError*") { exit 0 }\nexit 1';

/** Operations running commands with PowerShell (resolved per command, so installing it later works). */
export function createLocalPowerShellOperations(): PowerShellOperations {
  return {
    exec(command, cwd, options) {
      let config: ShellConfig;
      try {
        config = getPowerShellConfig();
      } catch (e) {
        return Promise.reject(e);
      }
      // A trailing backtick continues the line: a suffix would become part of the user's last statement.
      const legacy = win32.basename(config.shell).toLowerCase() === "powershell.exe" && !command.endsWith("`");
      const script = UTF8_PREFIX + command + (legacy ? LEGACY_EXIT_SUFFIX : "");
      return createLocalShellOperations(() => config).exec(script, cwd, options);
    },
  };
}

export function createPowerShellToolDefinition(cwd: string, options: PowerShellToolOptions = {}): ToolDefinition<PowerShellToolInput, PowerShellToolDetails | undefined> {
  return createShellToolDefinition(
    cwd,
    {
      name: "powershell",
      description:
        `Run a PowerShell command in the working directory; stdout and stderr are returned together. ` +
        `Long output keeps its last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB, and the complete output is saved to a temp file whose path is given. ` +
        `A timeout in seconds can be set.`,
      promptSnippet: "Run PowerShell commands",
      promptGuidelines: ["Set a timeout for commands that might not finish on their own (servers, watchers)."],
    },
    { spawnHook: options.spawnHook, operations: options.operations ?? createLocalPowerShellOperations() },
  );
}

export function createPowerShellTool(cwd: string, options?: PowerShellToolOptions): ToolDefinition<PowerShellToolInput, PowerShellToolDetails | undefined> {
  return createPowerShellToolDefinition(cwd, options);
}
