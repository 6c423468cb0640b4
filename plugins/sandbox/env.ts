/**
 * The environment a sandboxed command gets: the caller's, without credentials (every variable
 * the provider key table names, and credential-named ones such as `*_API_KEY`, `*_TOKEN`,
 * `*_SECRET`) and without the addresses of the host's sockets (tmux, screen, ssh-agent, gpg-agent,
 * D-Bus, X11, Wayland, terminal remote controls). `TMPDIR` points at the private /tmp.
 */
import { providerEnvNames } from "../../core/stores/index.js";
import { SECRET_ENV_NAME } from "../../core/kernel/index.js";

/** Variables that address a socket of the host (removed whatever their value). */
export const SOCKET_ENV: readonly string[] = Object.freeze([
  "TMUX",
  "TMUX_PANE",
  "TMUX_TMPDIR",
  "STY",
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "GPG_AGENT_INFO",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_SYSTEM_BUS_ADDRESS",
  "DISPLAY",
  "XAUTHORITY",
  "WAYLAND_DISPLAY",
  "XDG_RUNTIME_DIR",
  "KITTY_LISTEN_ON",
  "WEZTERM_UNIX_SOCKET",
  "NVIM",
  "NVIM_LISTEN_ADDRESS",
  "DOCKER_HOST",
  "CONTAINER_HOST",
]);

/** Ambient cloud credentials the provider table checks by hand (Bedrock's bearer token, container roles). */
const AMBIENT_CREDENTIALS = ["AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE"];

let providerNames: Set<string> | undefined;

function credentialNames(): Set<string> {
  if (!providerNames) {
    try {
      providerNames = new Set(providerEnvNames());
    } catch {
      // Without the generated table the name pattern below still applies.
      providerNames = new Set();
    }
  }
  return providerNames;
}

/** Is `name` a credential or a host socket address the sandbox keeps from commands? */
export function isWithheld(name: string): boolean {
  return SOCKET_ENV.includes(name) || AMBIENT_CREDENTIALS.includes(name) || SECRET_ENV_NAME.test(name) || credentialNames().has(name);
}

export function sandboxEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !isWithheld(k)) out[k] = v;
  out.TMPDIR = "/tmp";
  return out;
}
