/** `pi mcp --help` (shared by the subcommand registration and cli.ts). */
export const MCP_USAGE = `Usage:
  pi mcp list [--json]                          connect to every enabled server: state, tools, errors (exit 1 on a failure)
  pi mcp get <name> [--json]                    show a server, connect to it and list its tools
  pi mcp add [options] <name> <command|url> [args...]
      --project             add to the project's .mcp.json (default: the global settings)
      -t, --transport T     stdio | http | sse
      --env KEY=VALUE       environment variable for a stdio server (repeatable)
      -H, --header "K: V"   HTTP header for a url server (repeatable)
      --cwd DIR             working folder of a stdio server
      --json '{...}'        the server configuration as JSON instead of <command|url>
      --force               replace an existing server of that name
  pi mcp remove [--project] <name>
Values may use \${VAR} and \${VAR:-default}; they are expanded when the server starts.
Servers are read from the settings' mcpServers, <agent dir>/mcp.json and, in a trusted project,
.pi/settings.json, .mcp.json and .pi/mcp.json (docs/pi-1.6-compat.md).`;
