#!/usr/bin/env bash
# Notewell installer: registers the server with a client, smoke-tests the connection, then (when the token
# has the External Brain tools) marks the install with one real, closed session and suggests a first prompt.
# Served by GET /install.sh?client=CLIENT with BASE and CLIENT filled in. Run it as
#   curl -fsSL "$BASE/install.sh?client=$CLIENT" | NOTEWELL_TOKEN='nw_...' bash
# The token is never in the URL or this script: it comes from NOTEWELL_TOKEN.
set -uo pipefail
BASE=@BASE@
CLIENT=@CLIENT@
CLIENT_TYPE=@CLIENT_TYPE@
INSTALLER_VERSION=@VERSION@
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

# 1. Register the server with the client. A command printed for the user to run carries the token itself, in
# single quotes: NOTEWELL_TOKEN is set for this script only, not in the shell the user pastes into.
registered=""  # what was registered, or "" when it was not (and why, in not_registered)
not_registered=""
client_version=""
token_q="'$NOTEWELL_TOKEN'"  # the token is letters, digits, '_' and '-': single quotes keep it whole
version_of() { "$@" --version 2>/dev/null | head -n 1 | tr -cd 'A-Za-z0-9 ._()/+-' | head -c 80; }
case "$CLIENT" in
  claude-code)
    if command -v claude >/dev/null 2>&1; then
      client_version=$(version_of claude)
      claude mcp remove "$NAME" --scope user >/dev/null 2>&1 || true
      claude mcp add --transport http --scope user "$NAME" "$URL" --header "Authorization: Bearer $NOTEWELL_TOKEN" \
        || fail "claude mcp add failed (see above)"
      registered="Registered $URL with Claude Code as '$NAME'."
      say "$registered"
    else
      not_registered="claude (Claude Code) is not on PATH, so nothing was registered with it"
      say "claude (Claude Code) is not on PATH: install it, then run this command (it holds your token):"
      say "  claude mcp add --transport http --scope user $NAME $URL --header 'Authorization: Bearer $NOTEWELL_TOKEN'"
    fi ;;
  vscode)
    if command -v code >/dev/null 2>&1; then
      client_version=$(version_of code)
      code --add-mcp "{\"name\":\"$NAME\",\"type\":\"http\",\"url\":\"$URL\",\"headers\":{\"Authorization\":\"Bearer $NOTEWELL_TOKEN\"}}" \
        || fail "code --add-mcp failed (see above)"
      registered="Registered $URL with VS Code as '$NAME'."
      say "$registered"
    else
      not_registered="code (VS Code) is not on PATH, so nothing was registered with it"
      say "code (VS Code) is not on PATH: install it, then run this command (it holds your token):"
      say "  code --add-mcp '{\"name\":\"$NAME\",\"type\":\"http\",\"url\":\"$URL\",\"headers\":{\"Authorization\":\"Bearer $NOTEWELL_TOKEN\"}}'"
    fi ;;
  codex)
    if command -v codex >/dev/null 2>&1; then
      client_version=$(version_of codex)
      codex mcp add "$NAME" --url "$URL" --bearer-token-env-var NOTEWELL_TOKEN || fail "codex mcp add failed (see above)"
      registered="Registered $URL with Codex as '$NAME'; Codex reads the token from NOTEWELL_TOKEN: put export NOTEWELL_TOKEN=$token_q in your shell's profile."
      say "$registered"
    else
      not_registered="codex (Codex CLI) is not on PATH, so nothing was registered with it"
      say "codex (Codex CLI) is not on PATH: install it, then run"
      say "  codex mcp add $NAME --url $URL --bearer-token-env-var NOTEWELL_TOKEN"
      say "and put this line in your shell's profile (Codex reads the token from it):"
      say "  export NOTEWELL_TOKEN=$token_q"
    fi ;;
  cursor)
    not_registered="Cursor has no command to add a server: put the entry the wizard shows in ~/.cursor/mcp.json"
    say "$not_registered." ;;
  claude-desktop)
    not_registered="Claude Desktop has no command to add a server: put the entry the wizard shows in claude_desktop_config.json"
    say "$not_registered." ;;
  *)
    not_registered="no client was named, so nothing was registered"
    say "Endpoint: $URL (Streamable HTTP; send Authorization: Bearer <token>)." ;;
esac

# 2. Smoke test: initialize, then one read-only tool call (brain_get_user_style when the token has the External
# Brain tools); any failure ends the install, with a diagnosis per HTTP status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
session=""
next_id=1

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

call_tool() {  # call_tool NAME ARGUMENTS_JSON: prints the HTTP status; the answer in $tmp/body
  next_id=$((next_id + 1))
  post "{\"jsonrpc\":\"2.0\",\"id\":$next_id,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
}

tool_failed() {  # true when the answer in $tmp/body is an error (JSON-RPC error or a tool's isError)
  grep -q '"isError":true' "$tmp/body" || grep -q '"error":{' "$tmp/body"
}

field() {  # field NAME: the first string value of NAME in the answer's structured content
  grep -o "\"$1\":\"[^\"]*\"" "$tmp/body" | head -n 1 | cut -d '"' -f 4
}

status=$(post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"notewell-installer","version":"1"}}}')
[ "$status" = 200 ] || diagnose "$status" "initialize"
grep -q '"serverInfo"' "$tmp/body" || fail "initialize: the answer is not an MCP server's: $(head -c 300 "$tmp/body")"
session=$(tr -d '\r' <"$tmp/headers" | awk 'tolower($1) == "mcp-session-id:" {print $2}')
status=$(post '{"jsonrpc":"2.0","method":"notifications/initialized"}')
case "$status" in 2??) ;; *) diagnose "$status" "notifications/initialized" ;; esac
next_id=$((next_id + 1))
status=$(post "{\"jsonrpc\":\"2.0\",\"id\":$next_id,\"method\":\"tools/list\"}")
[ "$status" = 200 ] || diagnose "$status" "tools/list"
tool=""
for candidate in brain_get_user_style listProjects search_memory; do
  if grep -q "\"name\":\"$candidate\"" "$tmp/body"; then tool=$candidate; break; fi
done
case "$tool" in
  "") fail "tools/list: this token has no read-only tool to call (brain_get_user_style, listProjects, search_memory); mint one with sessions, knowledge:read or memory:read." ;;
  search_memory) arguments='{"query":"notewell"}' ;;
  *) arguments='{}' ;;
esac
status=$(call_tool "$tool" "$arguments")
[ "$status" = 200 ] || diagnose "$status" "tools/call $tool"
if tool_failed; then
  fail "tools/call $tool: the server answered with an error: $(head -c 300 "$tmp/body")"
fi
say "Smoke test passed: initialize and $tool answered at $URL."

# 3. Install ping (External Brain tokens only; a failure here is reported, never fatal: step 2 proved the
# round trip): one real session, opened, with one event, and closed, which marks the install.
ping=""
if [ "$tool" = brain_get_user_style ]; then
  os=$(uname -sm 2>/dev/null | tr -cd 'A-Za-z0-9 ._()/+-' | head -c 80)
  ping="the install ping failed"
  status=$(call_tool brain_start_session "{\"clientType\":\"$CLIENT_TYPE\",\"prompt\":\"brain installer ping v2\"}")
  ping_session=$(field sessionId)
  if [ "$status" = 200 ] && ! tool_failed && [ -n "$ping_session" ]; then
    payload="{\"installer_version\":\"$INSTALLER_VERSION\",\"claude_version\":\"$client_version\",\"os\":\"$os\"}"
    status=$(call_tool brain_log_event "{\"sessionId\":\"$ping_session\",\"eventType\":\"installer_ping\",\"payload\":$payload}")
    if [ "$status" = 200 ] && ! tool_failed; then
      status=$(call_tool brain_report_session_outcome "{\"sessionId\":\"$ping_session\",\"success\":true}")
      if [ "$status" = 200 ] && ! tool_failed; then
        ping="Install ping: session $ping_session opened, logged and closed (it marks this install)."
      fi
    fi
  fi
  if [ "$ping" = "the install ping failed" ]; then
    ping="Install ping failed (not fatal: the smoke test passed): HTTP $status: $(head -c 200 "$tmp/body")"
  fi
  say "$ping"
fi

# 4. What was done, and what was not; then a first prompt to try.
say ""
if [ -n "$registered" ]; then
  say "Done: registered with the client, and the smoke test passed."
else
  say "Not done: $not_registered. The smoke test ran against the server directly."
fi
if [ "$tool" = brain_get_user_style ]; then
  say ""
  say "First prompt to try: paste this into your first session with the agent; it saves a rule with brain_teach_knowledge:"
  say "  Remember this for every session: in this team, a pull request needs a test that fails without its fix."
fi
