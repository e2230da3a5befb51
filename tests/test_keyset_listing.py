"""listDocs and listProjects (REST: /projects/{p}/documents and /projects) page by a cursor, ``after``, beside
the offset (issue 27; an outside probe). An offset counts the documents before it as they are at each read, so a
rename between two reads moved the others across the pages' edge: with 1,000 documents, limit 100, renaming
d3/note-0350.md to d0/aaa-0350.md after the first page listed d0/note-0099.md twice, and renaming d0/note-0010.md
to d9/zzz-0010.md skipped it. Every answer with more to follow names ``nextAfter`` (the last path of the page;
the note and REST's next URL name it too), and a page read after it lists every document neither renamed nor
deleted meanwhile exactly once, a renamed one at most once under each name, on both backends. Each page is one
range of the (project, path) index on both backends: no sort, no scan of the project."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from mcp_world import ServerThread, connect
from notewell.access.principal import LOCAL_OWNER
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import Runtime, open_runtime
from pg import BACKENDS, module_store

PROJECT = "big"
ALL = [f"d{i // 100}/note-{i:04d}.md" for i in range(1000)]
SMALL = "small"  # the property test's project, reset before each example
SMALL_BASE = [f"{folder}n{i:02d}.md" for i, folder in enumerate(["", "a/", "m/", "z/"] * 6)]


@dataclass
class Listing:
    runtime: Runtime
    token: str
    server: ServerThread
    client: httpx.Client

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def get(self, url: str, **params: Any) -> httpx.Response:
        return self.client.get(self.origin + url, params=params,
                               headers={"Authorization": f"Bearer {self.token}"})

    def move(self, project: str, old: str, new: str) -> None:
        """Rename a document on disk and sync both paths, as the watcher would."""
        vault = self.runtime.settings.vault
        (vault / project / new).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(vault / project / old, vault / project / new)
        self.runtime.indexing.sync_paths([f"{project}/{old}", f"{project}/{new}"])

    def put(self, project: str, path: str) -> None:
        target = self.runtime.settings.vault / project / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# {path}\n\nbody of {path}\n")
        self.runtime.indexing.sync_paths([f"{project}/{path}"])

    def delete(self, project: str, path: str) -> None:
        (self.runtime.settings.vault / project / path).unlink()
        self.runtime.indexing.sync_paths([f"{project}/{path}"])


@pytest.fixture(scope="module", params=BACKENDS)
def listing(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listing]:
    tmp = tmp_path_factory.mktemp(f"keyset-{request.param}")
    vault = tmp / "vault"
    for path in ALL:
        (vault / PROJECT / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / PROJECT / path).write_text(f"# Note {path}\n\nsome text\n")
    for path in SMALL_BASE:
        (vault / SMALL / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / SMALL / path).write_text(f"# {path}\n\nbody of {path}\n")
    for project in ("p-b", "p-d", "p-f"):
        (vault / project).mkdir()
        (vault / project / "readme.md").write_text(f"# {project}\n")
    with module_store(request, tmp) as db:
        rt = open_runtime(str(vault), db)
        rt.indexing.sync()
        rt.administration.add_user(LOCAL_OWNER, "admin@example.test", "admin", handle="admin")
        token = rt.administration.mint_token(LOCAL_OWNER, "admin@example.test", ["knowledge:read"]).secret
        try:
            with ServerThread(build_app(rt, ServeOptions(choose(None)))) as server, \
                    httpx.Client(timeout=60) as client:
                yield Listing(rt, token, server, client)
        finally:
            rt.close()


# --- the probe's two renames, over MCP and REST ---------------------------------------------------------------

# (old, new, what offset paging does to the first document past the first page's edge, and how often it lists it)
RENAMES = [("d3/note-0350.md", "d0/aaa-0350.md", "d0/note-0099.md", 2),  # sorts before the edge: pushed across it
           ("d0/note-0010.md", "d9/zzz-0010.md", "d1/note-0100.md", 0)]  # leaves the first page: pulled across it


def _check_once(listed: list[str], old: str, new: str) -> None:
    """Every document but the renamed one exactly once; the renamed one at most once under each name."""
    counts = Counter(listed)
    assert {path: n for path, n in counts.items() if n != 1} == {}, "listed more than once"
    assert listed == sorted(listed)
    assert [path for path in listed if path not in (old, new)] == [path for path in ALL if path != old]


@pytest.mark.anyio
@pytest.mark.parametrize(("old", "new", "edge", "times"), RENAMES)
async def test_listdocs_after_lists_each_document_once_across_a_rename_over_mcp(
        listing: Listing, old: str, new: str, edge: str, times: int) -> None:
    async with connect(f"{listing.origin}/mcp", listing.token) as client:
        async def page(**args: Any) -> dict[str, Any]:
            result = await client.call_tool("listDocs", {"project": PROJECT, "limit": 100, **args})
            assert not result.is_error, result.content
            assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
            return result.structured_content  # type: ignore[return-value]

        first = await page()
        assert first["truncated"] is True and first["nextAfter"] == "d0/note-0099.md"
        assert first["note"] == ('Documents 1-100, by path; more follow: call listDocs again with the same project '
                                 'and path and after "d0/note-0099.md" (nextAfter: each one once, even when others '
                                 'are renamed, added or removed between the calls), or offset 100.')
        listed = [d["path"] for d in first["documents"]]
        listing.move(PROJECT, old, new)
        try:
            answer = first
            while answer["truncated"]:
                after = answer["nextAfter"]
                answer = await page(after=after)
                listed += [d["path"] for d in answer["documents"]]
                if answer["truncated"]:
                    assert answer["note"] == (f"Documents after {json.dumps(after)}, by path; more follow: call "
                                              "listDocs again with the same project and path and after "
                                              f"{json.dumps(answer['nextAfter'])} (nextAfter).")
                else:
                    assert "nextAfter" not in answer and "note" not in answer
            _check_once(listed, old, new)
            # the offset still pages as documented: a rename between the calls moves the others across the edge
            by_offset = [d["path"] for d in first["documents"]]
            for offset in range(100, 1000, 100):
                by_offset += [d["path"] for d in (await page(offset=offset))["documents"]]
            assert Counter(by_offset)[edge] == times
        finally:
            listing.move(PROJECT, new, old)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        described = tools["listDocs"].description or ""
        assert "after" in described and "skip a document or list one twice" in described


@pytest.mark.parametrize(("old", "new", "edge", "times"), RENAMES)
def test_documents_after_lists_each_document_once_across_a_rename_over_rest(
        listing: Listing, old: str, new: str, edge: str, times: int) -> None:
    first = listing.get(f"/api/v1/projects/{PROJECT}/documents", limit=100)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["nextAfter"] == "d0/note-0099.md" and body["offset"] == 0
    assert body["next"] == f"/api/v1/projects/{PROJECT}/documents?limit=100&after=d0%2Fnote-0099.md"
    assert first.headers["Link"] == f'<{body["next"]}>; rel="next"'
    listed = [d["path"] for d in body["items"]]
    listing.move(PROJECT, old, new)
    try:
        while body["next"] is not None:  # the next URL, followed as it is
            answer = listing.client.get(listing.origin + body["next"],
                                        headers={"Authorization": f"Bearer {listing.token}"})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            listed += [d["path"] for d in body["items"]]
        assert body["nextAfter"] is None
        _check_once(listed, old, new)
        by_offset = [d["path"] for d in first.json()["items"]]
        for offset in range(100, 1000, 100):
            by_offset += [d["path"] for d in listing.get(f"/api/v1/projects/{PROJECT}/documents", limit=100,
                                                         offset=offset).json()["items"]]
        assert Counter(by_offset)[edge] == times
    finally:
        listing.move(PROJECT, new, old)


def test_after_pages_within_a_folder_and_an_offset_page_names_the_cursor_too(listing: Listing) -> None:
    """A folder's listing pages by after within the folder; a page read by offset names the next page's after."""
    at = listing.get(f"/api/v1/projects/{PROJECT}/documents", path="d3", limit=40, offset=40).json()
    assert [d["path"] for d in at["items"]] == ALL[340:380] and at["nextAfter"] == "d3/note-0379.md"
    assert at["offset"] == 40 and "offset" not in at["next"] and "after=d3%2Fnote-0379.md" in at["next"]
    rest = listing.get(f"/api/v1/projects/{PROJECT}/documents", path="d3", limit=40, after="d3/note-0379.md").json()
    assert [d["path"] for d in rest["items"]] == ALL[380:400] and rest["nextAfter"] is None and rest["next"] is None


# --- listProjects and /projects ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_listprojects_and_projects_page_by_after_across_a_new_project(listing: Listing) -> None:
    ids = [p["id"] for p in listing.get("/api/v1/projects", limit=100).json()["items"]]
    assert ids[:5] == ["big", "p-b", "p-d", "p-f", "small"]
    first = listing.get("/api/v1/projects", limit=2).json()
    assert [p["id"] for p in first["items"]] == ["big", "p-b"] and first["nextAfter"] == "p-b"
    (listing.runtime.settings.vault / "p-a").mkdir()  # a project that sorts before the cursor: an offset would
    listing.runtime.indexing.sync()                     # list p-b again
    assert [p["id"] for p in listing.get("/api/v1/projects", limit=2).json()["items"]] == ["big", "p-a"]
    try:
        second = listing.get("/api/v1/projects", limit=2, after=first["nextAfter"]).json()
        assert [p["id"] for p in second["items"]] == ["p-d", "p-f"]
        assert second["next"] == "/api/v1/projects?limit=2&after=p-f"
        by_offset = listing.get("/api/v1/projects", limit=2, offset=2).json()
        assert [p["id"] for p in by_offset["items"]] == ["p-b", "p-d"]  # offset, as documented
        async with connect(f"{listing.origin}/mcp", listing.token) as client:
            answer = await client.call_tool("listProjects", {"after": "p-b"})
            got = answer.structured_content
            assert got is not None and [p["id"] for p in got["projects"]][:2] == ["p-d", "p-f"]
            assert "p-a" not in [p["id"] for p in got["projects"]] and "nextAfter" not in got
    finally:
        (listing.runtime.settings.vault / "p-a").rmdir()
        listing.runtime.indexing.sync()


@pytest.mark.anyio
async def test_an_offset_past_the_end_says_so_where_the_page_said_nothing(listing: Listing) -> None:
    """The offset a page names passes the end when documents go before the next call: the empty page that answered
    it said nothing (truncated false, no note), as an empty project does. Now its note says the list ends before
    it (listDocs) or how many there are (listProjects, listBrains), and to leave offset out."""
    async with connect(f"{listing.origin}/mcp", listing.token) as client:
        async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(tool, args)
            assert not result.is_error, result.content
            return result.structured_content  # type: ignore[return-value]

        first = await call("listDocs", {"project": SMALL, "limit": 20})
        assert first["truncated"] is True and first["note"].endswith("or offset 20."), first["note"]
        gone = sorted(SMALL_BASE)[:5]
        for path in gone:
            listing.delete(SMALL, path)
        try:
            past = await call("listDocs", {"project": SMALL, "limit": 20, "offset": 20})
            assert past["documents"] == [] and past["truncated"] is False
            assert past["note"] == ("No document from offset 20: the list ends before it. Leave offset out to list "
                                    "from the first.")
        finally:
            for path in gone:
                listing.put(SMALL, path)
        assert "note" not in await call("listDocs", {"project": SMALL, "offset": 4})  # a last page says nothing
        projects = (await call("listProjects", {}))["projects"]
        assert (await call("listProjects", {"offset": 1000}))["note"] == (
            f"No project from offset 1000: there are {len(projects)} in all. Leave offset out to list from the first.")
        assert (await call("listBrains", {"offset": 3}))["note"] == (
            "No brain from offset 3: there are 0 in all. Leave offset out to list from the first.")


# --- a bad cursor ---------------------------------------------------------------------------------------------

BAD = [({"after": "d3/note-0350.md", "path": "d0"}, "inside the folder listed (d0)"),
       ({"after": "d0/note-0099.md", "offset": 100}, "takes no offset"),
       ({"after": ""}, "is empty"),
       ({"after": "x" * 5000}, "at most 4096 characters")]


@pytest.mark.anyio
@pytest.mark.parametrize(("args", "why"), BAD)
async def test_a_bad_after_is_invalid_arguments_naming_after_and_the_fix(
        listing: Listing, args: dict[str, Any], why: str) -> None:
    fix = "pass the nextAfter of the previous page as it is"
    async with connect(f"{listing.origin}/mcp", listing.token) as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool("listDocs", {"project": PROJECT, **args})
    assert err.value.error.code == -32602 and err.value.error.data == {"argument": "after"}
    assert err.value.error.message.startswith("Invalid arguments for tool listDocs: after: ")
    assert why in err.value.error.message and fix in err.value.error.message
    answer = listing.get(f"/api/v1/projects/{PROJECT}/documents", **args)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "after" and why in answer.json()["detail"] and fix in answer.json()["detail"]
    projects = listing.get("/api/v1/projects", after="", offset=0)
    assert projects.status_code == 400 and projects.json()["field"] == "after"


# --- the query's plan -------------------------------------------------------------------------------------------


def test_a_page_after_a_path_is_one_range_of_the_index(listing: Listing, monkeypatch: pytest.MonkeyPatch) -> None:
    documents: Any = listing.runtime.store.documents
    asked: list[tuple[str, list[Any]]] = []
    rows = documents._rows
    monkeypatch.setattr(documents, "_rows",
                        lambda sql, params=(): asked.append((sql, list(params))) or rows(sql, params))
    listed = listing.runtime.knowledge.list_docs(LOCAL_OWNER, PROJECT, after="d5/note-0512.md", limit=100)
    assert listed.documents[0].path == "d5/note-0513.md" and listed.next_after == "d6/note-0612.md"
    [(sql, params)] = [(sql, params) for sql, params in asked if "d.path > ?" in sql]
    with documents.dialect.reading() as conn:
        if listing.runtime.store.url.startswith("postgres"):
            conn.execute("ANALYZE documents")
            plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params).fetchall())
            assert "Index Scan using documents_project_path_key" in plan, plan
            assert "Sort" not in plan and "Seq Scan" not in plan, plan
        else:
            plan = "\n".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall())
            assert "USING INDEX sqlite_autoindex_documents_1 (project=? AND path>?)" in plan, plan
            assert "TEMP B-TREE" not in plan, plan


# --- the property: random renames, deletes and creates between the pages ---------------------------------------

NAMES = st.builds(lambda folder, stem: f"{folder}{stem}.md", st.sampled_from(["", "a/", "m/", "z/", "b/c/"]),
                  st.text(alphabet="0abmnz~", min_size=1, max_size=3))
CHANGE = st.one_of(st.tuples(st.just("rename"), st.integers(0, 99), NAMES),
                   st.tuples(st.just("delete"), st.integers(0, 99), st.just("")),
                   st.tuples(st.just("create"), st.just(0), NAMES))


def _reset_small(listing: Listing) -> None:
    """The small project back to SMALL_BASE exactly, syncing only what differs."""
    folder = listing.runtime.settings.vault / SMALL
    now = {p.relative_to(folder).as_posix() for p in folder.rglob("*.md")}
    for path in now - set(SMALL_BASE):
        listing.delete(SMALL, path)
    for path in set(SMALL_BASE) - now:
        listing.put(SMALL, path)


def test_every_untouched_document_is_listed_once_whatever_changes_between_pages(listing: Listing) -> None:
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(limit=st.integers(1, 7), gaps=st.lists(st.lists(CHANGE, max_size=3), max_size=8))
    def pages(limit: int, gaps: list[list[tuple[str, int, str]]]) -> None:
        _reset_small(listing)
        touched: set[str] = set()
        listed: list[str] = []
        after: str | None = None
        for page in range(100):
            params: dict[str, Any] = {"limit": limit} if after is None else {"limit": limit, "after": after}
            body = listing.get(f"/api/v1/projects/{SMALL}/documents", **params).json()
            listed += [d["path"] for d in body["items"]]
            after = body["nextAfter"]
            if after is None:
                break
            for kind, pick, name in gaps[page] if page < len(gaps) else []:
                present = sorted(p.relative_to(listing.runtime.settings.vault / SMALL).as_posix()
                                 for p in (listing.runtime.settings.vault / SMALL).rglob("*.md"))
                if kind == "create" and name not in present:
                    listing.put(SMALL, name)
                    touched.add(name)
                elif kind == "delete" and present:
                    listing.delete(SMALL, present[pick % len(present)])
                    touched.add(present[pick % len(present)])
                elif kind == "rename" and present and name not in present:
                    old = present[pick % len(present)]
                    listing.move(SMALL, old, name)
                    touched |= {old, name}
        assert Counter(listed).most_common(1)[0][1] == 1 and listed == sorted(listed), listed
        untouched = [path for path in SMALL_BASE if path not in touched]
        assert sorted(path for path in listed if path in untouched) == sorted(untouched), (listed, touched)

    pages()
    _reset_small(listing)
