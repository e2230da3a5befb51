"""Conditional reads of a document over REST (docs/api.md): If-None-Match with the ETag a read gave answers 304 Not
Modified without the text while the document is unchanged, and the whole part once it changed; the condition is
evaluated only after the read's permission check, so it tells nothing about a document the caller may not read.
Both backends."""

from __future__ import annotations

import httpx
import pytest

from notewell.access.principal import LOCAL_OWNER
from rest_world import RestWorld, rest  # noqa: F401

DOC = "/projects/handbook/documents/rest/conditional.md"


@pytest.fixture(autouse=True)
def _a_document(rest: RestWorld) -> None:  # noqa: F811
    rest.runtime.administration.grant(LOCAL_OWNER, "admin@northwind.test", "handbook", "write")
    made = rest.call("PUT", DOC, "admin_all", json={"content": "one\ntwo\nthree\n", "overwrite": True})
    assert made.status_code in (200, 201), made.text


def test_a_read_with_the_etag_it_holds_is_answered_304_until_the_document_changes(rest: RestWorld) -> None:  # noqa: F811
    read = rest.get(DOC, "admin_all", params={"limit": 1})
    etag = read.headers["ETag"]
    assert read.status_code == 200 and etag == f'"{read.json()["version"]}"'
    for held in (etag, f"W/{etag}", f'"0000000000000000", {etag}', "*"):
        again = rest.get(DOC, "admin_all", params={"limit": 1}, headers={"If-None-Match": held})
        assert again.status_code == 304 and again.content == b"", (held, again.status_code, again.text)
        assert again.headers["ETag"] == etag and again.headers["Link"] == read.headers["Link"], again.headers
        head = rest.call("HEAD", DOC, "admin_all", params={"limit": 1}, headers={"If-None-Match": held})
        assert head.status_code == 304 and head.headers["ETag"] == etag, held
    other_part = rest.get(DOC, "admin_all", params={"offset": 2, "limit": 1}, headers={"If-None-Match": etag})
    assert other_part.status_code == 304  # one version, whichever part: each part is a function of it and the URL
    for held in ('"0000000000000000"', "garbage", ""):
        whole = rest.get(DOC, "admin_all", params={"limit": 1}, headers={"If-None-Match": held})
        assert whole.status_code == 200 and whole.json()["text"] == "one", (held, whole.text)
    edited = rest.call("PATCH", DOC, "admin_all", json={"operation": "append", "content": "four"})
    assert edited.status_code == 200, edited.text
    changed = rest.get(DOC, "admin_all", params={"limit": 1}, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] == edited.headers["ETag"] != etag
    assert changed.json()["text"] == "one"


def test_the_condition_reveals_nothing_the_caller_may_not_read(rest: RestWorld) -> None:  # noqa: F811
    etag = rest.get(DOC, "admin_all").headers["ETag"]
    for held in (etag, "*"):
        hidden = rest.get(DOC, "alice_kr", headers={"If-None-Match": held})  # handbook/rest is not alice's
        missing = rest.get("/projects/handbook/documents/rest/nowhere.md", "admin_all", headers={"If-None-Match": held})
        assert hidden.status_code == missing.status_code == 404, (hidden.text, missing.text)
        assert "ETag" not in hidden.headers and "ETag" not in missing.headers
    unauthenticated = rest.get(DOC, None, headers={"If-None-Match": etag})
    assert unauthenticated.status_code == 401


def test_an_if_none_match_too_long_is_refused_naming_it(rest: RestWorld) -> None:  # noqa: F811
    refused = rest.get(DOC, "admin_all", headers={"If-None-Match": ', '.join(['"x"'] * 500)})
    assert refused.status_code == 422 and "If-None-Match" in refused.text, refused.text


def test_if_none_match_over_several_lines_is_one_list(rest: RestWorld) -> None:  # noqa: F811
    """A review: RFC 9110 reads a header sent on several lines as one comma-separated list; only the first line
    was read, so the held ETag on the second answered the whole part."""
    etag = rest.get(DOC, "admin_all").headers["ETag"]
    for lines in (['"0000000000000000"', etag], [etag, '"0000000000000000"']):
        sent = httpx.Headers([("Authorization", f"Bearer {rest.tokens['admin_all']}"),
                              *(("If-None-Match", line) for line in lines)])
        again = rest.client.get(rest.base + DOC, headers=sent)  # two lines: RestWorld.call would keep one
        assert again.request.headers.get_list("If-None-Match") == lines
        assert again.status_code == 304, (lines, again.text)


def test_a_read_with_an_if_match_the_document_no_longer_has_is_412(rest: RestWorld) -> None:  # noqa: F811
    """A review: RFC 9110 has If-Match evaluated before If-None-Match, 412 when it fails; a read ignored it (200, or
    304 with a matching If-None-Match beside it)."""
    etag = rest.get(DOC, "admin_all").headers["ETag"]
    stale = '"0000000000000000"'
    for headers in ({"If-Match": stale}, {"If-Match": stale, "If-None-Match": etag}, {"If-Match": f"W/{etag}"}):
        refused = rest.get(DOC, "admin_all", headers=headers)
        assert refused.status_code == 412 and refused.json()["field"] == "If-Match", (headers, refused.text)
        assert refused.headers["ETag"] == etag, refused.headers
    for held in (etag, f"{stale}, {etag}", "*"):
        assert rest.get(DOC, "admin_all", headers={"If-Match": held}).status_code == 200, held
    assert rest.get(DOC, "admin_all", headers={"If-Match": etag, "If-None-Match": etag}).status_code == 304
    hidden = rest.get(DOC, "alice_kr", headers={"If-Match": stale})
    assert hidden.status_code == 404 and "ETag" not in hidden.headers, hidden.text
