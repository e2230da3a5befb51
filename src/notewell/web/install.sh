#!/usr/bin/env bash
# Notewell installer: registers the server with a client, then smoke-tests the connection.
# Served by GET /install.sh?client=CLIENT with BASE and CLIENT filled in. Run it as
#   curl -fsSL "$BASE/install.sh?client=$CLIENT" | NOTEWELL_TOKEN='nw_...' bash
# The token is never in the URL or this script: it comes from NOTEWELL_TOKEN.
set -uo pipefail
BASE=@BASE@
CLIENT=@CLIENT@
URL="$BASE/mcp"
NAME=notewell

say() { printf '%s\n' "$*"; }
fail() { printf 'notewell install: %s\n' "$*" >&2; exit 1; }

if [ -z "${NOTEWELL_TOKEN:-}" ]; then
  fail "NOTEWELL_TOKEN is not set. Mint a token at $BASE/settings/tokens, then run: curl -fsSL '$BASE/install.sh?client=$CLIENT' | NOTEWELL_TOKEN='nw_...' bash"
fi
if ! [[ "$NOTEWELL_TOKEN" =~ ^nw_[0-9a-f]{12}_[A-Za-z0-9_-]{43,}$ ]]; then
  fail "NOTEWELL_TOKEN does not look like a Notewell token (nw_<id>_<secret>); copy it again from the page that showed it."
fi
command -v curl >/dev/null 2>&1 || fail "curl is needed; install it and run this again."

# 1. Register the server with the client.
case "$CLIENT" in
  claude-code)
    if command -v claude >/dev/null 2>&1; then
      claude mcp remove "$NAME" --scope user >/dev/null 2>&1 || true
      claude mcp add --transport http --scope user "$NAME" "$URL" --header "Authorization: Bearer $NOTEWELL_TOKEN" \
        || fail "claude mcp add failed (see above)"
      say "Registered $URL with Claude Code as '$NAME'."
    else
      say "claude (Claude Code) is not on PATH: install it, then run"
      say "  claude mcp add --transport http $NAME $URL --header \"Authorization: Bearer \$NOTEWELL_TOKEN\""
    fi ;;
  vscode)
    if command -v code >/dev/null 2>&1; then
      code --add-mcp "{\"name\":\"$NAME\",\"type\":\"http\",\"url\":\"$URL\",\"headers\":{\"Authorization\":\"Bearer $NOTEWELL_TOKEN\"}}" \
        || fail "code --add-mcp failed (see above)"
      say "Registered $URL with VS Code as '$NAME'."
    else
      say "code (VS Code) is not on PATH: add the server in .vscode/mcp.json as the wizard shows."
    fi ;;
  codex)
    if command -v codex >/dev/null 2>&1; then
      codex mcp add "$NAME" --url "$URL" --bearer-token-env-var NOTEWELL_TOKEN || fail "codex mcp add failed (see above)"
      say "Registered $URL with Codex as '$NAME'; keep NOTEWELL_TOKEN set in your shell's profile."
    else
      say "codex (Codex CLI) is not on PATH: install it, then run"
      say "  codex mcp add $NAME --url $URL --bearer-token-env-var NOTEWELL_TOKEN"
    fi ;;
  cursor)
    say "Cursor has no command to add a server: put the entry the wizard shows in ~/.cursor/mcp.json." ;;
  *)
    say "Endpoint: $URL (Streamable HTTP; send Authorization: Bearer <token>)." ;;
esac

# 2. Smoke-test: initialize, then one read-only tool call; a diagnosis per HTTP status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
session=""

post() {  # post BODY: prints the HTTP status (000: no connection); the body in $tmp/body, the headers in $tmp/headers
  local args=(-sS -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' --max-time 30 -X POST "$URL"
              -H "Authorization: Bearer $NOTEWELL_TOKEN" -H 'Content-Type: application/json'
              -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25')
  [ -n "$session" ] && args+=(-H "Mcp-Session-Id: $session")
  curl "${args[@]}" --data "$1" 2>"$tmp/err" || true
}

diagnose() {  # diagnose STATUS STEP
  case "$1" in
    000) fail "$2: cannot connect to $URL ($(tr -d '\n' <"$tmp/err")). Is the server running, and is this its address?" ;;
    401) fail "$2: 401 Unauthorized: the token is not valid (unknown, expired or revoked, or its user is deactivated). Mint a new one at $BASE/settings/tokens." ;;
    403) fail "$2: 403 Forbidden: the server refused this origin or this token: $(head -c 300 "$tmp/body")" ;;
    421) fail "$2: 421 Misdirected Request: the server does not accept the host name in $URL. Start it with --allowed-host <that name>." ;;
    404) fail "$2: 404 Not Found: no MCP endpoint at $URL. Check the address." ;;
    *) fail "$2: HTTP $1 from $URL: $(head -c 300 "$tmp/body")" ;;
  esac
}

status=$(post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"notewell-installer","version":"1"}}}')
[ "$status" = 200 ] || diagnose "$status" "initialize"
grep -q '"serverInfo"' "$tmp/body" || fail "initialize: the answer is not an MCP server's: $(head -c 300 "$tmp/body")"
session=$(tr -d '\r' <"$tmp/headers" | awk 'tolower($1) == "mcp-session-id:" {print $2}')
status=$(post '{"jsonrpc":"2.0","method":"notifications/initialized"}')
case "$status" in 2??) ;; *) diagnose "$status" "notifications/initialized" ;; esac
status=$(post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
[ "$status" = 200 ] || diagnose "$status" "tools/list"
tool=""
for candidate in listProjects brain_list_projects search_memory; do
  if grep -q "\"name\":\"$candidate\"" "$tmp/body"; then tool=$candidate; break; fi
done
case "$tool" in
  "") fail "tools/list: this token has no read-only tool to call (listProjects, search_memory); mint one with knowledge:read or memory:read." ;;
  search_memory) arguments='{"query":"notewell"}' ;;
  *) arguments='{}' ;;
esac
status=$(post "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":$arguments}}")
[ "$status" = 200 ] || diagnose "$status" "tools/call $tool"
if grep -q '"isError":true' "$tmp/body" || grep -q '"error":{' "$tmp/body"; then
  fail "tools/call $tool: the server answered with an error: $(head -c 300 "$tmp/body")"
fi
say "Smoke test passed: initialize and $tool answered at $URL."
