"""A message of no JSON-RPC shape over Streamable HTTP is refused naming its fault (notewell.mcp.message_check).

Before, the SDK answered -32602 with pydantic's whole report (union branches and links, about 1 KB), an
initialize with params it could not read with "Invalid request parameters" and a new session's id (a session
nobody could use, counted against the token's cap), and a second initialize inside a session was taken.
"""

from __future__ import annotations

import json

import httpx
import pytest

from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from test_mcp_session_cap import ACCEPT, INIT, LIST, _open, _post

VERSION = "2025-11-25"  # test_mcp_session_cap's requests speak it
SESSIONS_PER_TOKEN = 16  # docs/security.md


@pytest.mark.parametrize(("body", "words", "answer_id"), [
    ({"jsonrpc": "2.0", "id": 3, "method": 5}, "method must be a string", 3),
    ({"jsonrpc": "1.0", "id": 3, "method": "tools/list"}, 'jsonrpc must be "2.0"', 3),
    ({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": [1]}, "params must be an object", "a"),
    ([{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}], "a batch (a JSON array) is not taken", None),
    ({"jsonrpc": "2.0", "id": 7}, "no method", 7),
    ("tools/list", "not an object", None),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, "is not a string or a whole number", None),
])
def test_a_message_of_no_json_rpc_shape_is_refused_naming_its_fault(
        mcp_url: str, mcp_world: World, body: object, words: str, answer_id: object) -> None:
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        for where in (session, None):  # inside a session, and as an opening request
            refused = _post(client, mcp_url, body, token, where)
            assert refused.status_code == 400, refused.text
            answer = refused.json()
            assert answer["error"]["code"] == -32600 and words in answer["error"]["message"], answer
            assert answer["id"] == answer_id and "pydantic" not in refused.text and len(refused.text) < 400
            assert "mcp-session-id" not in refused.headers
        assert _post(client, mcp_url, LIST, token, session).status_code == 200  # the session still serves
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})


def test_an_initialize_it_cannot_read_names_the_field_and_opens_no_session(mcp_url: str, mcp_world: World) -> None:
    hog = mcp_world.runtime.administration.mint_token(LOCAL_OWNER, "bob@northwind.test", ["memory:read"]).secret
    with httpx.Client(timeout=10) as client:
        first = _open(client, mcp_url, hog)
        bad_params = ({}, {**INIT["params"], "clientInfo": {"name": 5}},  # type: ignore[dict-item]
                      {"protocolVersion": VERSION, "capabilities": []})
        for params in bad_params:
            for _ in range(SESSIONS_PER_TOKEN // 2):
                refused = _post(client, mcp_url, {**INIT, "params": params}, hog)
                assert refused.status_code == 400 and "mcp-session-id" not in refused.headers, refused.text
                error = refused.json()["error"]
                assert error["code"] == -32602 and error["message"].startswith("Invalid params for initialize: params.")
        assert "params.protocolVersion: Field required" in _post(client, mcp_url, {**INIT, "params": {}}, hog).text
        assert "params.clientInfo.name" in _post(client, mcp_url, {**INIT, "params": bad_params[1]}, hog).text
        assert _post(client, mcp_url, LIST, hog, first).status_code == 200  # no failed one took its place
        client.delete(mcp_url, headers={"Authorization": f"Bearer {hog}", "Mcp-Session-Id": first})


def test_a_second_initialize_in_a_session_is_refused(mcp_url: str, mcp_world: World) -> None:
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        again = _post(client, mcp_url, {**INIT, "id": 9}, token, session)
        assert again.status_code == 400 and again.json()["id"] == 9
        assert again.json()["error"]["code"] == -32600 and "already initialized" in again.text
        assert _post(client, mcp_url, LIST, token, session).status_code == 200
        other = _open(client, mcp_url, token)  # an initialize without a session id opens another, as ever
        assert other != session
        unknown = _post(client, mcp_url, {**INIT, "id": 10}, token, "0" * 32)
        assert unknown.status_code == 404, unknown.text  # a session that is not (or no more): the SDK's answer
        for s in (session, other):
            client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": s})


def test_params_null_is_taken_as_left_out(mcp_url: str, mcp_world: World) -> None:
    """JSON-RPC allows no params; the SDK (and stdio) take null as none: the gate refused it."""
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        assert _post(client, mcp_url, {**LIST, "params": None}, token, session).status_code == 200
        assert _post(client, mcp_url, {"jsonrpc": "2.0", "method": "notifications/initialized", "params": None},
                     token, session).status_code == 202
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})


@pytest.mark.parametrize(("body", "words"), [
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "listProjects", "arguments": [1]}},
     "Invalid params for tools/call: params.arguments"),
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {}}},
     "Invalid params for tools/call: params.name: Field required"),
    ({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": 5}},
     "Invalid params for resources/read: params.uri"),
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": 5}},
     "Invalid params for tools/list: params.cursor"),
])
def test_params_a_method_cannot_take_are_named(mcp_url: str, mcp_world: World, body: object, words: str) -> None:
    """They were -32602 "Invalid request parameters" with empty data: no word of which."""
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        refused = _post(client, mcp_url, body, token, session)
        assert refused.status_code == 400 and refused.json()["id"] == 4, refused.text
        assert refused.json()["error"]["code"] == -32602 and words in refused.json()["error"]["message"]
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})


def test_a_body_over_the_bound_is_a_json_rpc_error(mcp_url: str, mcp_world: World) -> None:
    """The SDK answered a body over 4 MiB with a plain-text 413 ("Request body too large") no JSON-RPC client
    reads; declared by its Content-Length or sent in chunks without one, it is a JSON-RPC error naming the bound."""
    token = mcp_world.tokens["alice"]
    call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "listProjects", "arguments": {"pad": "x" * (4 * 1024 * 1024)}}}
    body = json.dumps(call).encode()
    with httpx.Client(timeout=30) as client:
        session = _open(client, mcp_url, token)
        headers = {**ACCEPT, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session,
                   "MCP-Protocol-Version": VERSION, "Content-Type": "application/json"}
        declared = client.post(mcp_url, content=body, headers=headers)
        chunked = client.post(mcp_url, content=(body[i:i + 65536] for i in range(0, len(body), 65536)),
                              headers=headers)
        for refused in (declared, chunked):
            assert refused.status_code == 413, refused.text[:200]
            error = refused.json()["error"]
            assert error["code"] == -32600 and "4,194,304 bytes" in error["message"], error
        assert _post(client, mcp_url, LIST, token, session).status_code == 200  # the session still serves
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})


def test_the_sdks_own_refusals_answer_the_requests_id(mcp_url: str, mcp_world: World) -> None:
    """The SDK refused a request without a session id (400) or with one it does not know (404) answering id
    null, though the request's id was read: a client could not tell which of its requests failed."""
    token = mcp_world.tokens["alice"]
    with httpx.Client(timeout=10) as client:
        headers = {**ACCEPT, "Authorization": f"Bearer {token}", "MCP-Protocol-Version": VERSION}
        missing = client.post(mcp_url, json={**LIST, "id": 41}, headers=headers)
        assert missing.status_code == 400 and missing.json()["id"] == 41, missing.text
        assert "session" in missing.json()["error"]["message"].lower()
        unknown = client.post(mcp_url, json={**LIST, "id": "q-42"}, headers={**headers, "Mcp-Session-Id": "0" * 32})
        assert unknown.status_code == 404 and unknown.json()["id"] == "q-42", unknown.text
        assert int(unknown.headers["content-length"]) == len(unknown.content)
        note = client.post(mcp_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        assert note.status_code == 400 and note.json()["id"] is None  # a notification carries no id to answer


@pytest.mark.parametrize(("arguments", "where"), [
    ('{"query": "\\ud800"}', "params.arguments.query"), ('{"query": "x\\udfffy"}', "params.arguments.query"),
    ('{"query": "ok", "path_filter": ["a", "\\udc00"]}', "params.arguments.path_filter[1]"),
])
def test_a_lone_surrogate_is_named_where_it_stands(mcp_url: str, mcp_world: World, arguments: str,
                                                   where: str) -> None:
    """JSON allows an escape of half a surrogate pair, but it is no character: the SDK answered -32700 "unexpected
    end of hex escape" (the escape was complete) and named no member."""
    token = mcp_world.tokens["alice"]
    body = f'{{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {{"name": "search_memory", ' \
           f'"arguments": {arguments}}}}}'
    with httpx.Client(timeout=10) as client:
        session = _open(client, mcp_url, token)
        refused = client.post(mcp_url, content=body.encode(), headers={
            "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "Authorization": f"Bearer {token}", "Mcp-Session-Id": session, "MCP-Protocol-Version": VERSION})
        assert refused.status_code == 400 and refused.json()["id"] == 4, refused.text
        error = refused.json()["error"]
        assert error["code"] == -32602 and f"{where} holds a lone UTF-16 surrogate" in error["message"], error
        client.delete(mcp_url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})
