"""What an outside probe of REST's document doors found, on both backends: a NUL character written to disk by a
write that answered success, document reads with no ETag (and HEAD refused), next links not percent-encoded,
If-Match refusals naming a field REST does not have, and a move's project-first path answered with a bare 404."""

from __future__ import annotations

import pytest

from notewell.access.principal import LOCAL_OWNER
from rest_world import RestWorld, rest  # noqa: F401


@pytest.fixture(autouse=True)
def _admin_writes_the_handbook(rest: RestWorld) -> None:  # noqa: F811
    """The admin writes the handbook through a write grant: the role alone gives no write right to documents."""
    rest.runtime.administration.grant(LOCAL_OWNER, "admin@northwind.test", "handbook", "write")


def test_a_nul_character_is_refused_by_every_write_and_nothing_is_written(rest: RestWorld) -> None:  # noqa: F811
    """A probe: PUT and PATCH wrote "a\\0b" to disk and answered success; the file was then binary to the index and
    left reads, search and links. Every write operation refuses it now, naming the field; the note stays as it
    was. A NUL in a front matter value is written as YAML's escape, never as the character."""
    vault = rest.runtime.settings.vault
    doc = "/projects/handbook/documents/rest/nul.md"
    refused = rest.call("PUT", doc, "admin_all", json={"content": "a\x00b\n"})
    assert refused.status_code == 400 and refused.json()["field"] == "content", refused.text
    assert "NUL character" in refused.json()["detail"] and not (vault / "handbook/rest/nul.md").exists()
    made = rest.call("PUT", doc, "admin_all", json={"content": "# Nul\n\n## Steps\nx\n"})
    assert made.status_code == 201, made.text
    kept = (vault / "handbook/rest/nul.md").read_bytes()
    edits = [{"operation": "append", "content": "a\x00b"}, {"operation": "prepend", "content": "\x00"},
             {"operation": "insert_under_heading", "heading": "## Steps", "content": "y\x00"},
             {"operation": "replace_section", "heading": "## Steps", "content": "\x00"},
             {"operation": "replace", "old": "x", "content": "x\x00"}]
    for body in edits:
        refused = rest.call("PATCH", doc, "admin_all", json=body)
        assert refused.status_code == 400 and refused.json()["field"] == "content", (body, refused.text)
    overwrite = rest.call("PUT", doc, "admin_all", json={"content": "\x00", "overwrite": True})
    assert overwrite.status_code == 400 and overwrite.json()["field"] == "content", overwrite.text
    assert (vault / "handbook/rest/nul.md").read_bytes() == kept
    escaped = rest.call("PATCH", doc, "admin_all",
                        json={"operation": "set_front_matter", "fields": {"title": "a\x00b"}})
    assert escaped.status_code == 200, escaped.text
    assert b"\x00" not in (vault / "handbook/rest/nul.md").read_bytes()
    assert rest.get(doc, "admin_all").json()["text"].startswith('---\ntitle: "a\\0b"\n---\n# Nul')


def test_if_match_refusals_name_if_match(rest: RestWorld) -> None:  # noqa: F811
    """A probe: `If-Match: garbage` answered 400 naming "expectedVersion", and a stale one 412 whose detail began
    "expected_version: Conflict"; REST has neither, it has the If-Match header. PATCH, PUT, DELETE and moves."""
    doc = "/projects/handbook/documents/rest/if-match.md"
    made = rest.call("PUT", doc, "admin_all", json={"content": "# If\n"})
    assert made.status_code == 201, made.text
    writes = [("PATCH", doc, {"json": {"operation": "append", "content": "x"}}),
              ("PUT", doc, {"json": {"content": "y", "overwrite": True}}),
              ("DELETE", doc, {}),
              ("POST", "/projects/handbook/moves", {"json": {"path": "rest/if-match.md", "newPath": "rest/if2.md"}})]
    for method, url, body in writes:
        garbage = rest.call(method, url, "admin_all", headers={"If-Match": "garbage"}, **body)
        assert garbage.status_code == 400 and garbage.json()["field"] == "If-Match", (method, garbage.text)
        assert garbage.json()["detail"].startswith("If-Match: 'garbage' is not a version"), garbage.text
        stale = rest.call(method, url, "admin_all", headers={"If-Match": '"0123456789abcdef"'}, **body)
        assert stale.status_code == 412 and stale.json()["field"] == "If-Match", (method, stale.text)
        assert stale.json()["detail"].startswith("If-Match: Conflict: handbook/rest/if-match.md changed since "
                                                 "version 0123456789abcdef"), stale.text
    assert (rest.runtime.settings.vault / "handbook/rest/if-match.md").read_text() == "# If\n"


def test_a_document_read_answers_the_etag_and_head_its_headers(rest: RestWorld) -> None:  # noqa: F811
    """A probe: GET of a document sent no ETag though docs/api.md tells clients to send If-Match with "the ETag of
    the last read or write", and HEAD was 405. The ETag of a read is what a write's If-Match takes."""
    doc = "/projects/handbook/documents/rest/etag.md"
    assert rest.call("PUT", doc, "admin_all", json={"content": "one\ntwo\n"}).status_code == 201
    read = rest.get(doc, "admin_all", params={"limit": 1})
    assert read.status_code == 200 and read.headers["ETag"] == f'"{read.json()["version"]}"', read.headers
    head = rest.call("HEAD", doc, "admin_all", params={"limit": 1})
    assert head.status_code == 200 and head.content == b"", head.headers
    assert head.headers["ETag"] == read.headers["ETag"] and head.headers["Link"] == read.headers["Link"]
    assert head.headers["Content-Length"] == read.headers["Content-Length"]
    edited = rest.call("PATCH", doc, "admin_all", headers={"If-Match": read.headers["ETag"]},
                       json={"operation": "append", "content": "three"})
    assert edited.status_code == 200, edited.text
    assert rest.get(doc, "admin_all").headers["ETag"] == edited.headers["ETag"] == f'"{edited.json()["version"]}"'
    missing = rest.call("HEAD", "/projects/handbook/documents/rest/nowhere.md", "admin_all")
    assert missing.status_code == 404 and "ETag" not in missing.headers
    assert rest.call("HEAD", doc, "alice_kr").status_code == 404  # hidden: as a missing document


def test_next_links_of_a_document_are_percent_encoded(rest: RestWorld) -> None:  # noqa: F811
    """A probe: `next` and the Link header of a document's links and parts carried its path as it is: a space, a
    bare %, and é as Latin-1 bytes in the header. They are URLs now, and following them reads the next page."""
    for name, encoded in [("sp ace.md", "sp%20ace.md"), ("ünï 50%.md", "%C3%BCn%C3%AF%2050%25.md")]:
        made = rest.call("PUT", f"/projects/handbook/documents/rest/{name}", "admin_all",
                         json={"content": "[a](a.md) [b](b.md)\nsecond line\n"})
        assert made.status_code == 201, made.text
        base = f"/api/v1/projects/handbook/documents/rest/{encoded}"
        links = rest.get(f"/projects/handbook/documents/rest/{name}/links", "admin_all", params={"limit": 1})
        assert links.status_code == 200, links.text
        assert links.json()["next"] == f"{base}/links?limit=1&offset=1"
        assert links.headers["Link"] == f'<{base}/links?limit=1&offset=1>; rel="next"'
        following = rest.get(links.json()["next"].removeprefix("/api/v1"), "admin_all")
        assert [link["label"] for link in following.json()["outgoing"]] == ["b"], following.text
        part = rest.get(f"/projects/handbook/documents/rest/{name}", "admin_all", params={"limit": 1})
        assert part.headers["Link"] == f'<{base}?limit=1&offset=2>; rel="next"', part.headers
        assert rest.get(f"{base}?limit=1&offset=2".removeprefix("/api/v1"), "admin_all").json()["text"] == \
            "second line"


def test_a_move_whose_path_names_the_project_again_says_paths_are_inside_it(rest: RestWorld) -> None:  # noqa: F811
    """A probe: {"path": "alpha/race.md"} in project alpha's moves was a bare 404 "Not found: alpha/alpha/race.md"
    (MCP and the CLI take paths project first; this body's are inside the project of the URL)."""
    assert rest.call("PUT", "/projects/handbook/documents/rest/race.md", "admin_all",
                     json={"content": "race\n"}).status_code == 201
    twice = rest.call("POST", "/projects/handbook/moves", "admin_all",
                      json={"path": "handbook/rest/race.md", "newPath": "handbook/rest/r2.md"})
    assert twice.status_code == 404, twice.text
    assert twice.json()["detail"] == ("Not found: handbook/handbook/rest/race.md; path and newPath are inside the "
                                      "project of the URL, without its name: send path 'rest/race.md'")
    missing = rest.call("POST", "/projects/handbook/moves", "admin_all",
                        json={"path": "rest/nowhere.md", "newPath": "rest/r2.md"})
    assert missing.status_code == 404 and missing.json()["detail"] == "Not found: handbook/rest/nowhere.md"
    moved = rest.call("POST", "/projects/handbook/moves", "admin_all",
                      json={"path": "rest/race.md", "newPath": "rest/r2.md"})
    assert moved.status_code == 200, moved.text
