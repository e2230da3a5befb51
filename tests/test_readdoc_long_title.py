"""readDoc of a note whose title (its first heading) is longer than an answer, over MCP on both backends: the
title took the room of the part's text, so every part of line 1 was cut again on the way out, and some of its
characters could be read by no call (a review's finding: 11,659 of 12,002). A part's title is now cut to
READ_DOC_TITLE_BYTES_MAX, and reading line 1 piece by piece, as each part's nextColumn says, gives it whole."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_world import ServerThread, call, connect
from notewell import limits
from notewell.access.principal import LOCAL_OWNER
from notewell.answer_bound import json_bytes
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import open_runtime
from pg import BACKENDS, module_store

pytestmark = pytest.mark.anyio
HEAD = "# " + "\u9577" * 12000  # 36,000 bytes of UTF-8: one heading line, the note's title
TEXT = HEAD + "\n" + "".join(f"line {n}\n" for n in range(2, 40))


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp(f"title-{request.param}")
    (tmp / "vault" / "p").mkdir(parents=True)
    (tmp / "vault" / "p" / "t.md").write_text(TEXT, encoding="utf-8")
    with module_store(request, tmp) as db:
        rt = open_runtime(str(tmp / "vault"), db)
        try:
            rt.indexing.sync()
            rt.administration.add_user(LOCAL_OWNER, "admin@example.test", "admin", handle="admin")
            token = rt.administration.mint_token(LOCAL_OWNER, "admin@example.test", ["knowledge:read"]).secret
            with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False))) as server:
                yield token, server.url
        finally:
            rt.close()


async def test_line_one_under_a_title_longer_than_an_answer_reads_back_whole(served: tuple[str, str]) -> None:
    token, url = served
    async with connect(url, token) as client:
        got, column = "", 1
        while True:
            part = await call(client, "readDoc", {"path": "p/t.md", "offset": 1, "limit": 1, "column": column})
            assert "truncated" not in part, part["note"]  # the part as it was made, never cut again
            assert json_bytes(part["title"]) <= limits.READ_DOC_TITLE_BYTES_MAX and part["title"].endswith("…")
            assert "The title is cut to 1,024 bytes here" in part["note"]
            got += part["text"]
            if part.get("nextColumn") is None:
                break
            column = part["nextColumn"]
        assert got == HEAD
