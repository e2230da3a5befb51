"""Markdown links and path mentions typed in the other Unicode form than the file's name, through the MCP door
(getLinks, move_note) and REST's links route, on both backends (docs/links.md, "How a link is resolved" and "A
move takes its links along"). A file a Mac named is decomposed (NFD: "e" and U+0301), a link typed on Linux is
composed (NFC: "é"), and the other way round: a markdown link or a mention names the file in either form, or a
mix of its names' forms (a folder in one, the file in the other), percent-escaped too; a move rewrites such a
link, each name the move keeps spelled as its writer typed it. They were unresolved (getLinks showed them
broken, the target's backlinks missed them) and a move left them naming the old place.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import httpx
import pytest
from mcp import Client

from mcp_world import ServerThread, World
from notes_world import call, served_notes

pytestmark = pytest.mark.anyio


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


world, server, admin = served_notes("link-forms")


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


async def _moved(admin: Client, path: str, new_path: str) -> dict[str, Any]:
    return await call(admin, "move_note", {"path": path, "new_path": new_path})


async def test_a_move_rewrites_them_keeping_the_form_each_name_was_typed_in(admin: Client, world: World) -> None:
    brulee, naive = nfd("handbook/fm/Crêpe Brûlée.md"), nfc("handbook/fm/naïve.md")
    the = f"handbook/fm/{nfd('Zoë')}/thé.md"
    linking = "\n".join([
        nfc("[a](<Crêpe Brûlée.md>) and [b](Cr%C3%AApe%20Br%C3%BBl%C3%A9e) and [[fm/Crêpe Brûlée]]"),  # 1
        nfd("[c](naïve.md#why) and `fm/naïve.md`"),  # 2
        nfc("[d](Zoë/thé.md) and ") + nfd("`fm/Zoë/thé.md`"),  # 3
        "",
    ])
    own = "# Crêpe brûlée\n" + nfd("[n](naïve.md) and `fm/naïve.md`\n")  # the moved note's own links, decomposed
    put(world, {brulee: own, naive: "# Naïve\n", the: "# Thé\n", "handbook/fm/links.md": linking})
    moves = [(brulee, nfd("handbook/fm/archive/Crêpe Brûlée.md")), (naive, nfc("handbook/fm/archive/naïve.md")),
             (the, f"handbook/fm/{nfd('Zoë')}/old/thé.md")]
    for path, new_path in moves:
        moved = await _moved(admin, path, new_path)
        assert "unlinked" not in moved, moved
        assert (world.vault / new_path).is_file()
    assert (world.vault / "handbook/fm/links.md").read_text(encoding="utf-8") == "\n".join([
        nfc("[a](<archive/Crêpe Brûlée.md>) and [b](archive/Crêpe%20Brûlée) and [[Crêpe Brûlée]]"),
        nfd("[c](archive/naïve.md#why) and `fm/archive/naïve.md`"),
        nfc("[d](Zoë/old/thé.md) and ") + nfd("`fm/Zoë/old/thé.md`"),
        "",
    ])
    assert (world.vault / moves[0][1]).read_text(encoding="utf-8") == (  # ../naïve.md, then naïve.md again
        "# Crêpe brûlée\n" + nfd("[n](naïve.md) and `fm/archive/naïve.md`\n"))
    got = await call(admin, "getLinks", {"path": "handbook/fm/links.md"})
    assert [(o["line"], o["path"]) for o in got["outgoing"]] == [
        (1, moves[0][1]), (1, moves[0][1]), (1, moves[0][1]), (2, moves[1][1]), (2, moves[1][1]),
        (3, moves[2][1]), (3, moves[2][1])], got["outgoing"]


async def test_a_move_mends_the_notes_own_links_to_attachments_typed_in_the_other_form(admin: Client,
                                                                                      world: World) -> None:
    """The moved note's relative links to files that are no documents (an image, a PDF), typed in the other
    Unicode form than the file's name or in a mix of its names' forms: the move compared the exact path with the
    disk and left them naming the old folder."""
    chart, receipt = nfd("handbook/fx/img/Schéma.png"), nfc("handbook/fx/Reçu.pdf")
    photo = f"handbook/fx/{nfd('Zoë')}/thé.png"  # a folder a Mac named, a file named composed
    own = "\n".join([
        "# Plan",
        nfc("![chart](<img/Schéma.png>) and [escaped](img/Sch%C3%A9ma.png)"),  # composed, to a Mac's name
        nfd("[receipt](Reçu.pdf)"),  # decomposed, to a composed name
        nfc("![photo](Zoë/thé.png)"),  # all composed: the folder in the other form
        "",
    ])
    for path in (chart, receipt, photo):
        (world.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (world.vault / path).write_bytes(b"\x89 not markdown")
    put(world, {"handbook/fx/plan.md": own})
    moved = await _moved(admin, "handbook/fx/plan.md", "handbook/fx/archive/plan.md")
    assert "unlinked" not in moved, moved
    assert (world.vault / "handbook/fx/archive/plan.md").read_text(encoding="utf-8") == "\n".join([
        "# Plan",
        nfc("![chart](<../img/Schéma.png>) and [escaped](../img/Schéma.png)"),
        nfd("[receipt](../Reçu.pdf)"),
        nfc("![photo](../Zoë/thé.png)"),
        "",
    ])
