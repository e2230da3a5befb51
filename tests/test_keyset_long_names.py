"""A cut page's cursor with long ids and paths, on both backends, over MCP: listProjects and listDocs fit a page to
the answer's bound, then add ``nextAfter`` and a note that name its last item (twice in the note). With ids of 240
characters that carried the answer past 32 KB; the door's cut then dropped the page's last item, the one the
cursor named, and the next page, after it, never listed it (helper's finding: zz-055 of 140 projects lost)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_world import ServerThread, connect
from notewell.access.principal import LOCAL_OWNER
from notewell.answer_bound import ANSWER_BYTES_MAX
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import open_runtime
from pg import BACKENDS, module_store

pytestmark = pytest.mark.anyio
PROJECTS = [f"zz-{n:03d}-" + "x" * 233 for n in range(140)]  # 240 characters: a folder name within 255 bytes
DEEP = "deep"
FOLDER = "/".join(["f" * 200] * 3)  # documents whose paths hold 600+ characters
DOCUMENTS = [f"{FOLDER}/note-{n:03d}.md" for n in range(150)]


@dataclass
class World:
    url: str
    token: str


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp(f"long-{request.param}")
    vault = tmp / "vault"
    for project in PROJECTS:
        (vault / project).mkdir(parents=True)
        (vault / project / "readme.md").write_text(f"# {project[:6]}\n")
    for path in DOCUMENTS:
        (vault / DEEP / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / DEEP / path).write_text("# A note\n")
    with module_store(request, tmp) as db:
        rt = open_runtime(str(vault), db)
        try:
            rt.indexing.sync()
            rt.administration.add_user(LOCAL_OWNER, "admin@example.test", "admin", handle="admin")
            token = rt.administration.mint_token(LOCAL_OWNER, "admin@example.test", ["knowledge:read"]).secret
            with ServerThread(build_app(rt, ServeOptions(choose(None)))) as server:
                yield World(f"http://127.0.0.1:{server.port}/mcp", token)
        finally:
            rt.close()


async def _pages(world: World, tool: str, items: str, key: str, **args: Any) -> list[str]:
    """Every page by after, each within the bound; the keys listed, in order."""
    listed: list[str] = []
    async with connect(world.url, world.token) as client:
        after: str | None = None
        while True:
            result = await client.call_tool(tool, {**args, **({"after": after} if after else {})})
            assert not result.is_error, result.content
            text = result.content[0].text  # type: ignore[union-attr]
            answer = json.loads(text)
            assert len(text.encode()) <= ANSWER_BYTES_MAX
            page = [item[key] for item in answer[items]]
            listed += page
            if "nextAfter" not in answer:
                return listed
            assert answer["nextAfter"] == page[-1], "the cursor names an item the page does not show"
            after = answer["nextAfter"]


async def test_listprojects_pages_of_long_ids_list_each_project_once(world: World) -> None:
    listed = await _pages(world, "listProjects", "projects", "id")
    assert len(set(listed)) == len(listed) and [p for p in listed if p.startswith("zz-")] == PROJECTS


async def test_listdocs_pages_of_long_paths_list_each_document_once(world: World) -> None:
    assert await _pages(world, "listDocs", "documents", "path", project=DEEP) == DOCUMENTS


async def test_getdocs_cut_by_its_readable_projects_names_the_way_to_them_all(world: World) -> None:
    """140 readable projects of 240 characters make the permissions section pass 32 KB: the cut answer's note names
    getDocs' section and listProjects, whose pages list every project the cut text lost (its note named no way
    on: 'ask for less', which getDocs has no argument for)."""
    async with connect(world.url, world.token) as client:
        result = await client.call_tool("getDocs", {"section": "permissions"})
        assert not result.is_error, result.content
        cut = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert cut["truncated"] is True and "sections[0].text" in cut["note"], cut["note"]
    assert "getDocs with section" in cut["note"] and "listProjects lists them all" in cut["note"], cut["note"]
    shown = cut["sections"][0]["text"].split("readable projects: ", 1)[1].split(", ")
    lost = [p for p in PROJECTS if p not in shown]
    assert lost and set(lost) <= set(await _pages(world, "listProjects", "projects", "id"))
