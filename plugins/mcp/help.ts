/** `pi mcp --help` (shared by the subcommand registration and cli.ts). */
export const MCP_USAGE = `Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp get <server> [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads <agent dir>/mcp.json and the settings' mcpServers, and in a trusted project .pi/mcp.json,
.mcp.json and .pi/settings.json.

Commands:
  add <server>            Add or replace a server (in <agent dir>/mcp.json)
  remove <server>         Remove a server (from mcp.json, or the settings' mcpServers)
  list                    Connect to every enabled server: state, tools, errors (exit 1 on a failure)
  get <server>            Show one server, connect to it and list its tools
  login <server>          Sign in with OAuth: prints the URL to open (opens a browser when there is one)
  logout <server>         Delete the stored OAuth credentials (<agent dir>/mcp-auth.json)

Options for add, remove, login and logout:
  -l, --local             Use the project's .pi/mcp.json instead of the global file
  --project               Use the project's .mcp.json (the file other agents share)

Options for add:
  --url <url>             Streamable HTTP server URL (instead of -- <command>)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable; "Name: value" works too)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer \${NAME}"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be \${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default) or dcr; cimd is not available in this build
  --exposure <mode>       codemode (default), deferred, direct or hidden
  --description <text>    What the server offers
  -t, --transport <T>     stdio, http or sse (sse: the legacy transport; ours)
  --json '{...}'          The whole server configuration as JSON (ours)
  <server> <command|url> [args...] without -- also works (ours); add replaces a server of the same name.

Other options:
  --json                  Print list / get as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)

Values may use \${VAR} and \${VAR:-default}; env and headers values may be a whole !command.`;
