"""Writing documents through REST, on both backends: PUT, PATCH, DELETE with If-Match (412 on a stale
version), moves, the journal and undo; and writers racing on one document (exactly one of two with the same
version wins; concurrent appends all land, each once)."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import pytest

from notewell.access.principal import LOCAL_OWNER
from rest_world import BOUND, RestWorld, rest  # noqa: F401

DOC = "/projects/handbook/documents/rest/plan.md"


@pytest.fixture(autouse=True)
def _admin_writes_the_handbook(rest: RestWorld) -> None:  # noqa: F811
    """The admin writes the handbook through a write grant: the role alone gives no write right to documents."""
    rest.runtime.administration.grant(LOCAL_OWNER, "admin@northwind.test", "handbook", "write")


def _dave(rest: RestWorld) -> str:  # noqa: F811
    """A member's token with knowledge:write; dave holds a write grant on northwind-advisory."""
    if "dave_write" not in rest.tokens:
        rest.tokens["dave_write"] = rest.runtime.administration.mint_token(
            LOCAL_OWNER, "dave@northwind.test", ["knowledge:read", "knowledge:write"]).secret
    return "dave_write"


def test_put_creates_and_refuses_to_overwrite_unless_told(rest: RestWorld) -> None:  # noqa: F811
    made = rest.call("PUT", DOC, "admin_all", json={"content": "# Plan\n\n## Steps\n- draft\n"})
    assert made.status_code == 201, made.text
    assert made.headers["Location"].endswith(DOC)  # the document's URL, as every 201 of the API says
    put = rest.get("/openapi.json", "admin_all").json()["paths"]["/projects/{project}/documents/{path}"]["put"]
    assert {"200", "201"} <= set(put["responses"])  # a create's 201 was undocumented (schemathesis' stateful phase)
    version = made.json()["version"]
    assert made.headers["ETag"] == f'"{version}"'
    there = rest.call("PUT", DOC, "admin_all", json={"content": "x"})
    assert there.status_code == 409 and there.json()["detail"].endswith(
        "exists already; edit it instead; to replace it whole, send overwrite: true with If-Match: its ETag")
    read = rest.get(DOC, "admin_all").json()
    assert read["version"] == version
    hits = rest.get("/search", "admin_all", params={"q": "draft", "project": "handbook"}).json()["matches"]
    assert [m["version"] for m in hits if m["path"] == "handbook/rest/plan.md"] == [version]  # a search's version


def test_patch_with_a_stale_if_match_is_412_with_the_current_etag(rest: RestWorld) -> None:  # noqa: F811
    version = rest.get(DOC, "admin_all").json()["version"]
    edited = rest.call("PATCH", DOC, "admin_all", headers={"If-Match": f'"{version}"'},
                       json={"operation": "insert_under_heading", "heading": "## Steps", "content": "- review"})
    assert edited.status_code == 200, edited.text
    body = edited.json()
    assert (body["firstLine"], body["lastLine"]) == (5, 5) and "+- review" in body["diff"]
    stale = rest.call("PATCH", DOC, "admin_all", headers={"If-Match": version},
                      json={"operation": "append", "content": "late"})
    assert stale.status_code == 412 and stale.headers["ETag"] == f'"{body["version"]}"'
    assert stale.json()["field"] == "If-Match" and body["version"] in stale.json()["detail"]


def test_a_weak_if_match_never_matches_a_write(rest: RestWorld) -> None:  # noqa: F811
    """If-Match compares strongly (RFC 9110, 13.1.1): W/"<current version>" is 412 on PUT, PATCH, DELETE and a move,
    naming If-Match, and nothing is written (each was applied, 200), as a read with it is 412."""
    doc = "/projects/handbook/documents/rest/weak.md"
    made = rest.call("PUT", doc, "admin_all", json={"content": "one\n", "overwrite": True})
    assert made.status_code in (200, 201), made.text
    weak = {"If-Match": f"W/{made.headers['ETag']}"}
    answers = [rest.call("PUT", doc, "admin_all", headers=weak, json={"content": "two\n", "overwrite": True}),
               rest.call("PATCH", doc, "admin_all", headers=weak, json={"operation": "append", "content": "two"}),
               rest.call("DELETE", doc, "admin_all", headers=weak),
               rest.call("POST", "/projects/handbook/moves", "admin_all", headers=weak,
                         json={"path": "rest/weak.md", "newPath": "rest/weaker.md"}),
               rest.get(doc, "admin_all", headers=weak)]
    for answer in answers:
        assert answer.status_code == 412 and answer.json()["field"] == "If-Match", answer.text
    assert "weak ETag" in answers[0].json()["detail"] and "without W/" in answers[0].json()["detail"]
    after = rest.get(doc, "admin_all")
    assert after.json()["text"] == "one" and after.headers["ETag"] == made.headers["ETag"]


def test_if_match_on_a_document_never_there_says_to_send_it_without(rest: RestWorld) -> None:  # noqa: F811
    refused = rest.call("PUT", "/projects/handbook/documents/rest/fresh.md", "admin_all",
                        headers={"If-Match": '"0123456789abcdef"'}, json={"content": "x"})
    assert refused.status_code == 412 and refused.json()["field"] == "If-Match", refused.text
    assert "there is no note at handbook/rest/fresh.md" in refused.json()["detail"]
    assert refused.json()["detail"].endswith("send it without If-Match to create it")


def test_a_replace_whose_passage_occurs_twice_overlapping_is_refused(rest: RestWorld) -> None:  # noqa: F811
    """Lines 1-2 and lines 2-3 both hold the passage: 400 naming old, the note as it was (it answered 200 and
    replaced lines 1-2)."""
    doc, content = "/projects/handbook/documents/rest/ship.md", "- [ ] ship\n- [ ] ship\n- [ ] ship\n"
    made = rest.call("PUT", doc, "admin_all", json={"content": content, "overwrite": True})
    assert made.status_code in (200, 201), made.text
    refused = rest.call("PATCH", doc, "admin_all",
                        json={"operation": "replace", "old": "- [ ] ship\n- [ ] ship", "content": "- [x] ship"})
    assert refused.status_code == 400 and refused.json()["field"] == "old", refused.text
    assert "occurs 2 times in the note" in refused.json()["detail"]
    assert rest.get(doc, "admin_all").json()["text"] == content.rstrip("\n")


def test_patch_refuses_a_field_its_operation_does_not_take(rest: RestWorld) -> None:  # noqa: F811
    for body, field in [({"operation": "append", "content": "x", "heading": "## Nope"}, "heading"),
                        ({"operation": "append", "content": "x", "fields": {"a": 1}}, "fields")]:
        refused = rest.call("PATCH", DOC, "admin_all", json=body)
        assert refused.status_code == 400 and refused.json()["field"] == field, refused.text
        assert "append takes no" in refused.json()["detail"]


def test_a_line_break_in_a_document_path_is_a_problem_naming_the_path(rest: RestWorld) -> None:  # noqa: F811
    refused = rest.call("PUT", "/projects/handbook/documents/rest/new%0Aline.md", "admin_all", json={"content": "x"})
    assert refused.status_code == 400 and refused.json()["field"] == "path" and "control character" in refused.text
    read = rest.get("/projects/handbook/documents/rest/new%0Aline.md", "admin_all")
    assert read.status_code == 404 and "no such resource" not in read.text  # the document's Not found, not the URL's
    # a bidirectional override shows "invoice\u202Edm.exe" as "invoiceexe.md"; a C1 control is a terminal's ESC
    for name, code in (("invoice%E2%80%AEdm.exe.md", "U+202E"), ("isolate%E2%81%A6x.md", "U+2066"),
                       ("csi%C2%9Bx.md", "U+009B"), ("del%7Fx.md", "U+007F")):
        refused = rest.call("PUT", f"/projects/handbook/documents/rest/{name}", "admin_all", json={"content": "x"})
        assert refused.status_code == 400 and refused.json()["field"] == "path", refused.text
        assert code in refused.json()["detail"], refused.text
    moved = rest.call("POST", "/projects/handbook/moves", "admin_all",
                      json={"path": DOC.removeprefix("/projects/handbook/documents/"), "newPath": "rest/\u202ex.md"})
    assert moved.status_code == 400 and moved.json()["field"] == "newPath" and "U+202E" in moved.text, moved.text
    # a note that has such a name already (put there by hand) can still be edited, moved to a plain name and
    # deleted: only a name a write gives is refused
    vault = rest.runtime.settings.vault
    (vault / "handbook/rest").mkdir(exist_ok=True)
    (vault / "handbook/rest/found\u202edm.exe.md").write_text("dropped here\n")
    (vault / "handbook/rest/bell\x85.md").write_text("rings\n")
    rest.runtime.indexing.sync()
    edited = rest.call("PATCH", "/projects/handbook/documents/rest/found%E2%80%AEdm.exe.md", "admin_all",
                       json={"operation": "append", "content": "seen\n"})
    assert edited.status_code == 200, edited.text
    renamed = rest.call("POST", "/projects/handbook/moves", "admin_all",
                        json={"path": "rest/found\u202edm.exe.md", "newPath": "rest/found.md"})
    assert renamed.status_code == 200, renamed.text
    assert (vault / "handbook/rest/found.md").read_text() == "dropped here\nseen\n"
    assert rest.call("DELETE", "/projects/handbook/documents/rest/bell%C2%85.md", "admin_all").status_code == 200
    assert not (vault / "handbook/rest/bell\x85.md").exists()


def test_who_may_write(rest: RestWorld) -> None:  # noqa: F811
    assert rest.call("PUT", "/projects/handbook/documents/x.md", "alice_rw",
                     json={"content": "x"}).json()["scope"] == "knowledge:write"
    admin = rest.call("PUT", "/projects/projects/documents/x.md", "admin_all", json={"content": "x"})
    assert admin.status_code == 403 and "write grant" in admin.json()["detail"]  # admin, yet no grant there
    dave = _dave(rest)
    hidden = rest.call("PUT", "/projects/handbook/documents/x.md", dave, json={"content": "x"})
    missing = rest.call("PUT", "/projects/nowhere/documents/x.md", dave, json={"content": "x"})
    assert (hidden.status_code, missing.status_code) == (404, 404)
    assert hidden.json()["detail"].replace("handbook", "P") == missing.json()["detail"].replace("nowhere", "P")
    assert rest.call("PUT", f"/projects/{BOUND}/documents/dave.md", dave, json={"content": "x\n"}).status_code == 201
    refused = rest.call("PUT", f"/projects/{BOUND}/documents/..%2F..%2Fescape.md", dave, json={"content": "x"})
    assert refused.status_code in (400, 404)


def test_a_dot_segment_in_a_path_is_refused_naming_the_field(rest: RestWorld) -> None:  # noqa: F811
    vault = rest.runtime.settings.vault
    assert rest.call("PUT", "/projects/handbook/documents/rest/dots.md", "admin_all",
                     json={"content": "dots\n"}).status_code == 201
    for method, doc, body in [("PUT", "..%2Fhandbook%2Frest%2Fdd1.md", {"content": "x"}),
                              ("PUT", "rest%2F.%2Fdd2.md", {"content": "x"}),
                              ("PATCH", "rest%2F..%2Frest%2Fdots.md", {"operation": "append", "content": "x"}),
                              ("DELETE", "rest%2F..%2Frest%2Fdots.md", None)]:
        refused = rest.call(method, f"/projects/handbook/documents/{doc}", "admin_all",
                            **({"json": body} if body is not None else {}))
        assert refused.status_code == 400 and refused.json()["field"] == "path", (method, doc, refused.text)
        assert "without . or .." in refused.json()["detail"]
    for body, field in [({"path": "../handbook/rest/dots.md", "newPath": "rest/dd3.md"}, "path"),
                        ({"path": "rest/dots.md", "newPath": "../handbook/rest/dd4.md"}, "newPath")]:
        moved = rest.call("POST", "/projects/handbook/moves", "admin_all", json=body)
        assert moved.status_code == 400 and moved.json()["field"] == field, moved.text
    journal = rest.get("/journal", "admin_all", params={"path": "handbook/x/../rest/dots.md"})
    assert journal.status_code == 400 and journal.json()["field"] == "path"
    assert sorted(p.name for p in (vault / "handbook/rest").iterdir() if p.name.startswith("d")) == ["dots.md"]
    assert (vault / "handbook/rest/dots.md").read_text() == "dots\n"


def test_delete_move_journal_and_undo(rest: RestWorld) -> None:  # noqa: F811
    made = rest.call("PUT", "/projects/handbook/documents/rest/gone.md", "admin_all", json={"content": "bye\r\n"})
    assert made.status_code == 201
    moved = rest.call("POST", "/projects/handbook/moves", "admin_all",
                      json={"path": "rest/gone.md", "newPath": "rest/archive/gone.md"})
    assert moved.status_code == 200 and moved.json()["movedFrom"] == "handbook/rest/gone.md"
    deleted = rest.call("DELETE", "/projects/handbook/documents/rest/archive/gone.md", "admin_all",
                        headers={"If-Match": made.json()["version"]})
    assert deleted.status_code == 200 and deleted.json()["version"] is None
    journal = rest.get("/journal", "admin_all", params={"path": "handbook/rest/archive/gone.md"}).json()["entries"]
    assert [e["action"] for e in journal] == ["delete", "move"]
    first = rest.get("/journal", "admin_all", params={"path": "handbook/rest/archive/gone.md", "limit": 1})
    assert f"before={journal[0]['id']}" in first.json()["next"] and first.headers["link"].endswith('>; rel="next"')
    second = rest.get(first.json()["next"].removeprefix("/api/v1"), "admin_all").json()
    assert [e["id"] for e in first.json()["entries"] + second["entries"]] == [e["id"] for e in journal]
    undone = rest.call("POST", f"/journal/{deleted.json()['journalId']}/undo", "admin_all")
    assert undone.status_code == 200
    assert (rest.runtime.settings.vault / "handbook/rest/archive/gone.md").read_bytes() == b"bye\r\n"
    again = rest.call("POST", f"/journal/{deleted.json()['journalId']}/undo", "admin_all")
    assert again.status_code == 409 and "undone already" in again.json()["detail"]
    hidden = rest.get("/journal", _dave(rest), params={"path": "handbook/rest/archive/gone.md"}).json()
    assert hidden == {"entries": [], "next": None}


def test_a_journal_page_ends_within_32_kb_and_names_the_next(rest: RestWorld) -> None:  # noqa: F811
    """limit=500 over 90 entries of long paths answered 60 KB and next null: the page ends early now, as MCP's."""
    folder = "rest/" + "long-folder-name-" * 10
    for i in range(90):
        made = rest.call("PUT", f"/projects/handbook/documents/{folder}/n{i:03d}.md", "admin_all",
                         json={"content": f"note {i}\n"})
        assert made.status_code == 201, made.text
    seen: list[int] = []
    url: str | None = "/journal?limit=500"
    while url is not None:
        page = rest.get(url.removeprefix("/api/v1"), "admin_all")
        assert page.status_code == 200 and len(page.content) <= 32 * 1024, len(page.content)
        seen += [e["id"] for e in page.json()["entries"]]
        url = page.json()["next"]
    everything = [e["id"] for e in rest.get("/journal", "admin_all", params={"limit": 500}).json()["entries"]]
    assert len(seen) >= 90 and len(everything) < len(seen) and seen == sorted(seen, reverse=True)
    assert len(set(seen)) == len(seen)


def test_two_writers_with_the_same_version_exactly_one_wins(rest: RestWorld) -> None:  # noqa: F811
    doc = "/projects/handbook/documents/rest/race.md"
    version = rest.call("PUT", doc, "admin_all", json={"content": "start\n"}).json()["version"]

    def edit(word: str) -> int:
        return rest.call("PATCH", doc, "admin_all", headers={"If-Match": version},
                         json={"operation": "append", "content": word}).status_code

    with ThreadPoolExecutor(2) as pool:
        codes = sorted(pool.map(edit, ["left", "right"]))
    assert codes == [200, 412]
    text = (rest.runtime.settings.vault / "handbook/rest/race.md").read_text()
    assert text in ("start\nleft\n", "start\nright\n")


@pytest.mark.timeout(120)
def test_concurrent_appends_all_land_each_once_in_journal_order(rest: RestWorld) -> None:  # noqa: F811
    doc = "/projects/handbook/documents/rest/appends.md"
    assert rest.call("PUT", doc, "admin_all", json={"content": "# Appends\n"}).status_code == 201
    words = [f"append-{i:02d}" for i in range(24)]

    def append(word: str) -> int:
        return rest.call("PATCH", doc, "admin_all", json={"operation": "append", "content": word}).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(append, words)) == {200}
    lines = (rest.runtime.settings.vault / "handbook/rest/appends.md").read_text().splitlines()[1:]
    assert sorted(lines) == words
    journal = rest.get("/journal", "admin_all", params={"path": "handbook/rest/appends.md", "limit": 100}).json()
    versions = [(e["beforeVersion"], e["afterVersion"]) for e in reversed(journal["entries"])]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(versions))  # one chain: none lost


def test_a_move_rewrites_the_links_its_caller_may_write_and_names_the_others(rest: RestWorld) -> None:  # noqa: F811
    """The admin writes the handbook only: a handbook note's link to the moved note is rewritten, one from
    northwind-advisory (which she reads, not writes) is left as it was and named in unlinked; updateLinks false
    rewrites nothing."""
    vault = rest.runtime.settings.vault
    made = rest.call("PUT", "/projects/handbook/documents/rest/links/target-m2.md", "admin_all",
                     json={"content": "# M2\n"})
    assert made.status_code == 201, made.text
    assert rest.call("PUT", "/projects/handbook/documents/rest/links/near-m2.md", "admin_all",
                     json={"content": "[m2](target-m2.md)\n"}).status_code == 201
    (vault / BOUND / "far-m2.md").write_text("[m2](/handbook/rest/links/target-m2.md)\n")
    rest.runtime.indexing.sync_paths([f"{BOUND}/far-m2.md"])
    moved = rest.call("POST", "/projects/handbook/moves", "admin_all",
                      json={"path": "rest/links/target-m2.md", "newPath": "rest/links/done/target-m2.md"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["relinked"] == ["handbook/rest/links/near-m2.md:1"], moved.text
    assert moved.json()["unlinked"] == [f"{BOUND}/far-m2.md:1"], moved.text
    assert (vault / "handbook/rest/links/near-m2.md").read_text() == "[m2](done/target-m2.md)\n"
    assert (vault / BOUND / "far-m2.md").read_text() == "[m2](/handbook/rest/links/target-m2.md)\n"
    kept = rest.call("POST", "/projects/handbook/moves", "admin_all",
                     json={"path": "rest/links/done/target-m2.md", "newPath": "rest/links/target-m2.md",
                           "updateLinks": False})
    assert kept.status_code == 200 and kept.json()["relinked"] == [], kept.text
    assert kept.json()["unlinked"] == ["handbook/rest/links/near-m2.md:1"], kept.text
    assert (vault / "handbook/rest/links/near-m2.md").read_text() == "[m2](done/target-m2.md)\n"
    refused = rest.call("POST", "/projects/handbook/moves", "admin_all",
                        json={"path": "rest/links/target-m2.md", "newPath": "rest/links/x.md", "updateLinks": "maybe"})
    assert refused.status_code in (400, 422) and "updateLinks" in refused.text, refused.text


def test_an_edit_missing_what_it_needs_says_so(rest: RestWorld) -> None:  # noqa: F811
    """A probe: append without content said "the edit changes nothing", and a heading without its #s "is
    required" though one was given."""
    assert rest.call("PUT", "/projects/handbook/documents/rest/needs.md", "admin_all",
                     json={"content": "# Needs\n\n## L2\nx\n"}).status_code == 201
    for body, field, said in [({"operation": "append"}, "content", "is required for append: the text to add"),
                              ({"operation": "insert_under_heading", "heading": "L2", "content": "y"}, "heading",
                               "'L2' is no heading: write it as the note does, with its level, such as '## L2'")]:
        refused = rest.call("PATCH", "/projects/handbook/documents/rest/needs.md", "admin_all", json=body)
        assert refused.status_code == 400 and refused.json()["field"] == field, refused.text
        assert said in refused.json()["detail"], refused.text


def test_a_document_is_written_by_either_unicode_form_of_its_name(rest: RestWorld) -> None:  # noqa: F811
    """A probe: a note read by the other Unicode form of its name (NFC "Zoë", NFD "Zoe" and a combining mark)
    could not be written by it (PATCH 404, the journal empty), nor a file a Mac sync named decomposed by its
    composed name. Each write goes to the file that is there, by its own name, and never makes a second."""
    vault = rest.runtime.settings.vault / "handbook/rest"
    composed, decomposed = "rest/Zo\u00eb.md", "rest/Zoe\u0308.md"
    made = rest.call("PUT", f"/projects/handbook/documents/{composed}", "admin_all", json={"content": "# Zoë\n"})
    assert made.status_code == 201, made.text
    assert rest.get(f"/projects/handbook/documents/{decomposed}", "admin_all").status_code == 200
    edited = rest.call("PATCH", f"/projects/handbook/documents/{decomposed}", "admin_all",
                       json={"operation": "append", "content": "by the other form"})
    assert edited.status_code == 200 and edited.json()["path"] == f"handbook/{composed}", edited.text
    replaced = rest.call("PUT", f"/projects/handbook/documents/{decomposed}", "admin_all",
                         headers={"If-Match": edited.json()["version"]}, json={"content": "# Zoë\n\nagain\n",
                                                                              "overwrite": True})
    assert replaced.status_code == 200, replaced.text
    journal = rest.get("/journal", "admin_all", params={"path": f"handbook/{decomposed}"}).json()["entries"]
    assert [e["action"] for e in journal] == ["write", "edit", "write"]
    moved = rest.call("POST", "/projects/handbook/moves", "admin_all",
                      json={"path": decomposed, "newPath": "rest/zoe-moved.md"})
    assert moved.status_code == 200 and moved.json()["movedFrom"] == f"handbook/{composed}", moved.text
    assert (vault / "zoe-moved.md").read_text() == "# Zoë\n\nagain\n"
    # a file named decomposed on disk, written to by the composed name it is typed with
    (vault / "cafe\u0301.md").write_text("# Café\n")
    rest.runtime.indexing.sync_paths(["handbook/rest/cafe\u0301.md"])
    typed = "/projects/handbook/documents/rest/caf\u00e9.md"
    edited = rest.call("PATCH", typed, "admin_all", json={"operation": "append", "content": "menu"})
    assert edited.status_code == 200 and edited.json()["path"] == "handbook/rest/cafe\u0301.md", edited.text
    deleted = rest.call("DELETE", typed, "admin_all", headers={"If-Match": edited.json()["version"]})
    assert deleted.status_code == 200, deleted.text
    undone = rest.call("POST", f"/journal/{deleted.json()['journalId']}/undo", "admin_all")
    assert undone.status_code == 200, undone.text
    journal = rest.get("/journal", "admin_all", params={"path": "handbook/rest/caf\u00e9.md"}).json()["entries"]
    assert [e["action"] for e in journal] == ["undo", "delete", "edit"]
    assert sorted(p.name for p in vault.iterdir() if p.name.lower().startswith(("ca", "zo"))) == [
        "cafe\u0301.md", "zoe-moved.md"]
    assert (vault / "cafe\u0301.md").read_text() == "# Café\nmenu\n"


def test_a_move_by_a_token_that_reads_nothing_says_its_links_were_not_looked_for(rest: RestWorld) -> None:  # noqa: F811
    """A probe: a token with knowledge:write alone moved a note and was answered as if no link named it, while
    [[w3]] in a note it may write was left naming nothing. The answer now says the links were not looked for and
    how to have them rewritten, naming and counting none (it reads no link)."""
    token = rest.runtime.administration.mint_token(LOCAL_OWNER, "admin@northwind.test", ["knowledge:write"]).secret
    rest.tokens["admin_write_only"] = token
    for path, text in (("rest/w/w3.md", "# W3\n"), ("rest/w/sub/other.md", "see [[w3]]\n")):
        made = rest.call("PUT", f"/projects/handbook/documents/{path}", "admin_all", json={"content": text})
        assert made.status_code == 201, made.text
    moved = rest.call("POST", "/projects/handbook/moves", "admin_write_only",
                      json={"path": "rest/w/w3.md", "newPath": "rest/w/w6.md"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["relinked"] == [] and moved.json()["unlinked"] == [], moved.text
    assert "other.md" not in moved.text
    assert moved.json()["summary"].endswith(
        "links to and of the note were not looked for or rewritten: this token may not read the project handbook, "
        "so it sees no link; to have them rewritten, undo this move and move the note again with a token that also "
        "holds knowledge:read"), moved.text
    assert (rest.runtime.settings.vault / "handbook/rest/w/sub/other.md").read_text() == "see [[w3]]\n"


def test_a_patch_of_a_note_another_program_holds_open_for_writing_is_409(rest: RestWorld) -> None:  # noqa: F811
    """A program holding the note open to append (a logger) would have every line it writes after a rename over
    the note go into a file no longer named: the PATCH is refused as a conflict naming the note, nothing written."""
    made = rest.call("PUT", "/projects/handbook/documents/rest/held.md", "admin_all", json={"content": "start\n"})
    assert made.status_code == 201, made.text
    note = rest.runtime.settings.vault / "handbook/rest/held.md"
    with open(note, "a", encoding="utf-8") as logger:
        held = rest.call("PATCH", "/projects/handbook/documents/rest/held.md", "admin_all",
                         json={"operation": "append", "content": "mine"})
        logger.write("logged\n")
    assert held.status_code == 409, held.text
    assert held.json()["detail"].startswith(
        "path: Conflict: handbook/rest/held.md is open for writing in another program"), held.text
    assert note.read_text() == "start\nlogged\n"
    done = rest.call("PATCH", "/projects/handbook/documents/rest/held.md", "admin_all",
                     json={"operation": "append", "content": "mine"})
    assert done.status_code == 200 and note.read_text() == "start\nlogged\nmine\n", done.text
