/**
 * `--use-theme <name>` / `<light>/<dark>` (pi 1.6): the TUI theme for this run only (a runtime
 * override of the `theme` setting, never saved). A light/dark pair picks by the terminal's
 * background as `COLORFGBG` reports it (`fg;bg`, background 7 or 15 = light), else dark.
 */
export function chooseTheme(value: string, env: NodeJS.ProcessEnv): string {
  const parts = value.split("/").map((s) => s.trim());
  if (parts.length !== 2 || !parts[0] || !parts[1]) return value.trim();
  const bg = (env.COLORFGBG ?? "").split(";").pop();
  return bg === "7" || bg === "15" ? parts[0] : parts[1];
}
