"""Markdown links and path mentions typed in the other Unicode form than the file's name, through the MCP door
(getLinks) and REST's links route, on both backends (docs/links.md, "How a link is resolved"). A file a Mac named is decomposed (NFD: "e" and U+0301), a link typed on Linux is
composed (NFC: "é"), and the other way round: a markdown link or a mention names the file in either form, or a
mix of its names' forms (a folder in one, the file in the other), percent-escaped too. They were unresolved
(getLinks showed them broken, the target's backlinks missed them).
"""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from mcp import Client

from mcp_world import ServerThread, World, connect, serve_world
from notes_world import call, notes_world_on
from pg import BACKENDS

pytestmark = pytest.mark.anyio


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from notes_world_on(request, tmp_path_factory.mktemp("link-forms"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[ServerThread]:
    with serve_world(world) as running:
        yield running


@pytest.fixture
async def admin(server: ServerThread, world: World) -> AsyncIterator[Client]:
    async with connect(server.url, world.tokens["admin_write"]) as client:
        yield client


def put(world: World, files: dict[str, str]) -> None:
    """The files written on disk under the names given (byte for byte: NFD stays NFD), and indexed."""
    for path, text in files.items():
        (world.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (world.vault / path).write_text(text, encoding="utf-8")
    world.runtime.indexing.sync()


# handbook/fa: "Crème Brûlée.md" named on a Mac (NFD, three accented letters), "naïve.md" named composed, and
# "thé.md" composed inside a folder "Zoë" a Mac named (NFD): a path with its names in both forms.
BRULEE, NAIVE, THE = nfd("handbook/fa/Crème Brûlée.md"), nfc("handbook/fa/naïve.md"), f"handbook/fa/{nfd('Zoë')}/thé.md"
LINKING = "\n".join([
    "# Links in the other form",
    nfc("[composed to a Mac's name](<Crème Brûlée.md>)"),  # 2
    nfd("[decomposed to a composed name](naïve.md)"),  # 3
    nfc("[composed through a Mac's folder](Zoë/thé.md)"),  # 4
    "[escaped composed bytes](/handbook/fa/Zo%C3%AB/th%C3%A9.md)",  # 5: NFC's bytes, percent-escaped
    "[escaped, no ending](Cr%C3%A8me%20Br%C3%BBl%C3%A9e)",  # 6
    nfd("A mention: `fa/Zoë/thé.md`, all decomposed, and `naïve.md`."),  # 7
    "",
])


async def test_get_links_resolves_markdown_links_and_mentions_in_either_form(admin: Client, world: World) -> None:
    put(world, {BRULEE: "# Crème brûlée\n", NAIVE: "# Naïve\n", THE: "# Thé\n", "handbook/fa/links.md": LINKING})
    got = await call(admin, "getLinks", {"path": "handbook/fa/links.md"})
    assert [(o["line"], o["kind"], o["path"]) for o in got["outgoing"]] == [
        (2, "markdown", BRULEE), (3, "markdown", NAIVE), (4, "markdown", THE), (5, "markdown", THE),
        (6, "markdown", BRULEE), (7, "mention", THE), (7, "mention", NAIVE)], got["outgoing"]
    for target, lines in ((BRULEE, [2, 6]), (NAIVE, [3, 7]), (THE, [4, 5, 7])):
        back = await call(admin, "getLinks", {"path": nfc(target), "direction": "backlinks"})
        assert back["path"] == target and [b["line"] for b in back["backlinks"]] == lines, back


async def test_rest_shows_them_resolved(server: ServerThread, world: World) -> None:
    put(world, {BRULEE.replace("/fa/", "/fr/"): "# Crème brûlée\n", NAIVE.replace("/fa/", "/fr/"): "# Naïve\n",
                THE.replace("/fa/", "/fr/"): "# Thé\n", "handbook/fr/links.md": LINKING.replace("/fa/", "/fr/")
                .replace("`fa/", "`fr/")})
    base = server.url.removesuffix("/mcp") + "/api/v1"
    answer = httpx.get(f"{base}/projects/handbook/documents/fr/links.md/links", timeout=30,
                       headers={"Authorization": f"Bearer {world.tokens['admin_write']}"})
    assert answer.status_code == 200, answer.text
    assert [o["path"] for o in answer.json()["outgoing"]] == [
        p.replace("/fa/", "/fr/") for p in (BRULEE, NAIVE, THE, THE, BRULEE, THE, NAIVE)], answer.json()

