/**
 * The files and folders in a project that pi, its plugins and git read at start-up and that can
 * make them run code: the loaders take their names from here, and the sandbox keeps the same
 * list read-only inside a writable workspace, so one list decides both.
 */

/** The project settings files in the order the settings loader searches them (`.pi/settings.json`, `.pirc.json`, `pi.config.ts`). */
export function projectSettingsPlaces(configDir: string, name: string): string[] {
  return [`${configDir}/settings.json`, `.${name}rc.json`, `${name}.config.ts`];
}

/** The project's MCP server list shared with other agents (servers in it are started as programs). */
export const PROJECT_MCP_JSON = ".mcp.json";

/** The folder holding Claude-Code-compatible settings with hooks (shell commands run on events). */
export const CLAUDE_SETTINGS_DIR = ".claude";

/** git's folder (hooks, config with `core.fsmonitor`, `commondir`): run by the person's next git command. */
export const GIT_DIR = ".git";

/**
 * Every path, relative to the project folder, whose contents pi or git may run the next time
 * they start there: the project config folder (extensions, settings), the settings files the
 * loader searches, `.mcp.json`, `.claude/` and `.git`.
 */
export function projectStartupPaths(configDir: string, name: string): Array<{ path: string; kind: "dir" | "file" }> {
  const places = projectSettingsPlaces(configDir, name).filter((p) => !p.startsWith(`${configDir}/`));
  return [
    { path: configDir, kind: "dir" },
    ...places.map((path) => ({ path, kind: "file" as const })),
    { path: PROJECT_MCP_JSON, kind: "file" },
    { path: CLAUDE_SETTINGS_DIR, kind: "dir" },
    { path: GIT_DIR, kind: "dir" },
  ];
}
