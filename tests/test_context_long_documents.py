"""A document longer than link_walk.DOCUMENT_CHARS enters buildContext's and recall_context's packs as its
beginning: about 4,000 characters ended at a line break, else a sentence end, else a word boundary, never inside
a character; its item says complete false, left_out names the offset (and column) its rest is read from, and
the MCP answer's note says how (readDoc). A note of one long paragraph under a heading entered as its heading
alone, and a cut note said complete. Through REST and MCP, on both backends."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import make_vault
from mcp_world import World, connect, serve_world
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.services.context_pack import SHORTENED_MARK
from notewell.services.link_walk import DOCUMENT_CHARS

pytestmark = pytest.mark.anyio
LONG = "# long\n" + "Alpha beta gamma. " * 300  # 5,407 characters: one heading, one long line
LINES = "# lines\n" + "".join(f"Line {n:03d} of a note of many short lines, each one ending.\n" for n in range(120))
SPACELESS = "# dense\n" + "e\u0301" * 3_000  # no space, no full stop: "é" spelled with a combining accent
CRLF = "# crlf\r\n" + "".join(f"Row {n:03d} says little.\r\n" for n in range(250))
FILES = {"alpha/ctx2/long.md": LONG, "alpha/lines.md": LINES, "alpha/dense.md": SPACELESS,
         "alpha/crlf.md": CRLF, "alpha/short.md": "# short\n\nSee [[long]], [[lines]] and [[dense]].\n"}
SCOPES = ["knowledge:read", "memory:read", "memory:write"]
NOTE = ("A document with complete false ended early (left_out says why): readDoc reads it by its path, whole from "
        "offset 1, or, for one cut to its first 4,000 characters, its rest from the offset (and column) its "
        "left_out reason names.")


@pytest.fixture
def world(tmp_path: Path, store_url: str) -> Iterator[World]:
    rt = open_runtime(str(make_vault(tmp_path, FILES)), store_url)
    rt.indexing.sync()
    rt.administration.add_user(LOCAL_OWNER, "mia@example.test", "member", handle="mia")
    rt.administration.grant(LOCAL_OWNER, "mia@example.test", "alpha", "read")
    yield World(rt, {"mia": rt.administration.mint_token(LOCAL_OWNER, "mia@example.test", SCOPES).secret})
    rt.close()


def _get(base: str, token: str, route: str, **params: Any) -> httpx.Response:
    answer = httpx.get(f"{base}{route}", params=params, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer


def _kept(context: str, label: str) -> str:
    """The text a pack holds of the one document it starts with: after its head and (why), without the mark."""
    body = context.split(f"({label})\n", 1)[1].rstrip("\n")
    assert body.endswith(SHORTENED_MARK), body[-40:]
    return body.removesuffix(SHORTENED_MARK)


def _rest_from(reason: str) -> dict[str, int]:
    found = re.search(r"its rest is read from offset (\d+)(?:, column (\d+))?$", reason)
    assert found, reason
    return {"offset": int(found[1]), **({"column": int(found[2])} if found[2] else {})}


def _rest_over_rest(base: str, token: str, path: str, at: dict[str, int]) -> str:
    """The document from ``at`` to its end, read over REST a part at a time (nextOffset, and column on a cut line)."""
    project, _, rel = path.partition("/")
    parts: list[str] = []
    params: dict[str, int] = {**at, "limit": 1000}
    while True:
        part = _get(base, token, f"/projects/{project}/documents/{rel}", **params).json()
        parts.append(part["text"])
        if part["nextOffset"] is None:
            return "\n".join(parts)
        params = {"offset": part["nextOffset"], "limit": 1000}


@pytest.mark.parametrize(("path", "source", "ends"), [
    ("alpha/ctx2/long.md", LONG, "gamma."),  # one long line: at a sentence end
    ("alpha/lines.md", LINES, "ending."),  # many lines: at a line break
    ("alpha/dense.md", SPACELESS, "e\u0301"),  # neither: between two characters, the accent kept with its letter
    ("alpha/crlf.md", CRLF, "little."),  # CRLF: before the CR
])
def test_a_long_document_enters_rest_as_its_beginning_saying_where_the_rest_is(
        world: World, path: str, source: str, ends: str) -> None:
    with serve_world(world) as server:
        base, token = server.url.removesuffix("/mcp") + "/api/v1", world.tokens["mia"]
        got = _get(base, token, "/context", path=path, depth=0, maxTokens=8000).json()
        [item] = got["items"]
        [out] = got["leftOut"]
        kept = _kept(got["text"], "the document asked for")
        rest = _rest_from(out["reason"])
        read_on = _rest_over_rest(base, token, path, rest)
    assert item["complete"] is False and out["ref"] == path
    assert DOCUMENT_CHARS // 2 <= len(kept) <= DOCUMENT_CHARS and kept.endswith(ends)
    assert out["reason"].startswith(f"only its first {len(kept):,} of {len(source):,} characters are packed")
    assert source.startswith(kept)
    assert "".join(source.split()) == "".join(kept.split()) + "".join(read_on.split())  # nothing lost, nothing twice


async def test_build_context_and_recall_context_over_mcp_say_a_document_is_cut(world: World) -> None:
    with serve_world(world) as server:
        async with connect(server.url, world.tokens["mia"]) as client:
            built = await client.call_tool("buildContext", {"path": "alpha/ctx2/long.md", "depth": 0,
                                                            "max_tokens": 4000})
            linked = await client.call_tool("buildContext", {"path": "alpha/short.md", "depth": 1,
                                                             "max_tokens": 12000})
            recalled = await client.call_tool("recall_context", {"query": "short", "include_documents": True,
                                                                 "max_tokens": 12000})
            small = await client.call_tool("buildContext", {"path": "alpha/short.md", "depth": 0})
    got = json.loads(built.content[0].text)  # type: ignore[union-attr]
    assert got["items"][0]["complete"] is False and got.get("note") == NOTE
    assert got["tokens_used"] > 500 and got["context"].count("Alpha beta gamma.") > 200  # not its heading alone
    assert _rest_from(got["left_out"][0]["reason"]) == {"offset": 2, "column": len(_kept(
        got["context"], "the document asked for")) - len("# long\n") + 2}
    for answer in (linked, recalled):
        shown = json.loads(answer.content[0].text)  # type: ignore[union-attr]
        complete = {i["ref"]: i["complete"] for i in shown["items"] if i["kind"] == "document"}
        assert {complete[p] for p in ("alpha/ctx2/long.md", "alpha/dense.md")} == {False}  # reached by a link
        assert {o["ref"] for o in shown["left_out"]} >= {"alpha/ctx2/long.md", "alpha/dense.md"}
        assert NOTE in shown.get("note", "")
    whole = json.loads(small.content[0].text)  # type: ignore[union-attr]
    assert whole["items"][0]["complete"] is True and "note" not in whole and whole["left_out"] == []
