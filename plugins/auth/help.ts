export const AUTH_HELP = `Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Credentials live in auth.json in the agent folder (written with mode 0600).

Commands:
  login <provider>        Sign in with the provider's account flow, or save an API key
  logout <provider>       Remove stored credentials (environment and models.json are untouched)
  print-api-key           Print the API key requests to the provider would use
  print-bearer-token      Print the OAuth access token (refreshed when expired)
  check                   Print ready, not_ready or invalid; exit 0, 1 or 2

Options:
  --provider <provider>   The provider to resolve
  --model <model>         Resolve the provider from a model (provider/id or id)
  --api-key               login: save an API key (read from the terminal without echo, or from stdin)
  --no-browser            login: print the sign-in address instead of opening a browser
  --min-expiry <duration> print-bearer-token: refresh unless the token lasts this long (ms, s, m, h)
  --json                  check: print the result as JSON
  --credentials           check: also print the credential when ready
  --no-refresh            check: do not refresh an expired OAuth token
`;
