"""brain_ask_oracle's snippets and titles, and a taught rule's title, cut at a word boundary and never inside a
user-perceived character, with "…" (services/text_cut.py), over MCP on SQLite and PostgreSQL: they were cut at a
fixed count of characters (199 and 79), inside a word, or between a letter and its combining accent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brain_world import BrainWorld, brain_world_on, call, serve_brain
from mcp_world import connect
from notewell.services.brain_knowledge import MAX_TITLE_CHARS
from notewell.services.brain_oracle import SNIPPET_CHARS
from notewell.services.text_cut import between_characters

pytestmark = pytest.mark.anyio
WORDS = ("calibrate", "the", "torque", "sensor", "before", "every", "gripper", "run")
TITLE_CHARS = 80  # brain_oracle.TITLE_CHARS: a citation's title
ACCENTED = "e\u0301"  # é as e and a combining acute accent: one character to a reader, two code points


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrainWorld]:
    yield from brain_world_on(request, tmp_path_factory.mktemp("oracle-cuts"))


@pytest.fixture(scope="module")
def url(world: BrainWorld) -> Iterator[str]:
    with serve_brain(world) as server:
        yield server.url


def _words(first: str, chars: int) -> str:
    """``first``, then WORDS over and over: at least ``chars`` characters."""
    text = first
    while len(text) < chars:
        text += " " + WORDS[len(text.split()) % len(WORDS)]
    return text


def _cut_at_a_word(shown: str, whole: str, limit: int) -> None:
    assert len(shown) <= limit and shown.endswith("…"), shown
    kept = shown[:-1]
    assert whole.startswith(kept) and whole[len(kept)] == " ", (kept[-20:], whole[len(kept) - 5:len(kept) + 5])


async def test_oracle_snippets_and_titles_end_at_a_word(world: BrainWorld, url: str) -> None:
    rule = _words("oraclecuts", 400)
    prompt = _words("oracleprompt", 400)
    async with connect(url, world.tokens["alice"]) as c:
        project = (await call(c, "brain_create_project", {"name": "oracle cuts"}))["projectId"]
        taught = await call(c, "brain_teach_knowledge", {"rule": rule, "type": "heuristic", "projectId": project})
        session = (await call(c, "brain_start_session", {"projectId": project, "prompt": prompt}))["sessionId"]
        await call(c, "brain_report_session_outcome", {"sessionId": session, "success": True})
        answer = await call(c, "brain_ask_oracle", {"question": "oraclecuts oracleprompt"})
    cited = {cite["id"]: cite for cite in answer["citations"]}
    knowledge, told = cited[taught["id"]], cited[session]
    for shown, whole, limit in ((knowledge["snippet"], rule, SNIPPET_CHARS), (knowledge["title"], rule, TITLE_CHARS),
                                (told["snippet"], prompt, SNIPPET_CHARS), (told["title"], prompt, TITLE_CHARS)):
        _cut_at_a_word(shown, whole, limit)
    assert f"\u201c{told['snippet']}\u201d" in answer["answer"]  # the sentence quotes the same cut
    memory = world.runtime.store.memories.get(taught["id"])
    assert memory is not None
    _cut_at_a_word(memory.title, rule, MAX_TITLE_CHARS)


async def test_a_snippet_without_spaces_keeps_each_accent_with_its_letter(world: BrainWorld, url: str) -> None:
    prompt = "oracleaccents " + ACCENTED * 300  # one long word: the cut falls between two characters
    async with connect(url, world.tokens["alice"]) as c:
        project = (await call(c, "brain_create_project", {"name": "oracle accents"}))["projectId"]
        session = (await call(c, "brain_start_session", {"projectId": project, "prompt": prompt}))["sessionId"]
        await call(c, "brain_report_session_outcome", {"sessionId": session, "success": True})
        answer = await call(c, "brain_ask_oracle", {"question": "oracleaccents"})
    cite = next(cite for cite in answer["citations"] if cite["id"] == session)
    for shown, limit in ((cite["snippet"], SNIPPET_CHARS), (cite["title"], TITLE_CHARS)):
        assert len(shown) <= limit and shown.endswith("…"), shown
        kept = shown[:-1]
        assert prompt.startswith(kept) and between_characters(prompt, len(kept)), kept[-6:]
