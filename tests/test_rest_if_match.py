"""A REST write's If-Match, on both backends: a weak tag is refused only once the caller may write the document
and it exists (403 and 404 come first, as for a strong tag); and If-Match takes a list (RFC 9110, 13.1.1: the write
proceeds when any strong tag in it matches, * when there is a document at all), a malformed one refused with 400
naming If-Match."""

from __future__ import annotations

import pytest

from notewell.access.principal import LOCAL_OWNER
from rest_world import BOUND, RestWorld, rest  # noqa: F401

DOC = "/projects/handbook/documents/if-match/list.md"
ADVISORY = f"/projects/{BOUND}/documents/pricing-policy.md"
STALE = '"0123456789abcdef"'


@pytest.fixture(autouse=True)
def _admin_writes_the_handbook(rest: RestWorld) -> None:  # noqa: F811
    rest.runtime.administration.grant(LOCAL_OWNER, "admin@northwind.test", "handbook", "write")


def _token(rest: RestWorld, name: str, who: str) -> str:  # noqa: F811
    """A token of ``who`` with knowledge:read and knowledge:write."""
    if name not in rest.tokens:
        rest.tokens[name] = rest.runtime.administration.mint_token(
            LOCAL_OWNER, f"{who}@northwind.test", ["knowledge:read", "knowledge:write"]).secret
    return name


def _fresh(rest: RestWorld, text: str) -> str:  # noqa: F811
    """The list document written anew with ``text``: its ETag."""
    made = rest.call("PUT", DOC, "admin_all", json={"content": text, "overwrite": True})
    assert made.status_code in (200, 201), made.text
    return str(made.headers["ETag"])


def test_a_weak_tag_is_answered_after_the_permission_and_existence_checks(rest: RestWorld) -> None:  # noqa: F811
    etag = _fresh(rest, "one\n")
    weak = {"If-Match": f"W/{etag}"}
    dave = _token(rest, "dave_writes", "dave")  # no grant on the handbook: it is hidden from him
    alice = _token(rest, "alice_writes", "alice")  # a read grant on northwind-advisory, no write grant
    hidden = rest.call("PATCH", DOC, dave, headers=weak, json={"operation": "append", "content": "x"})
    assert hidden.status_code == 404, hidden.text
    assert rest.call("DELETE", DOC, dave, headers=weak).status_code == 404
    assert rest.call("POST", "/projects/handbook/moves", dave, headers=weak,
                     json={"path": "if-match/list.md", "newPath": "if-match/moved.md"}).status_code == 404
    put = rest.call("PUT", DOC, dave, headers=weak, json={"content": "x", "overwrite": True})
    assert put.status_code == 404, put.text
    readable = rest.get(ADVISORY, "alice_rw")
    assert readable.status_code == 200, readable.text
    forbidden = rest.call("PATCH", ADVISORY, alice, headers={"If-Match": f"W/{readable.headers['ETag']}"},
                          json={"operation": "append", "content": "x"})
    assert forbidden.status_code == 403, forbidden.text
    missing = rest.call("DELETE", "/projects/handbook/documents/if-match/none.md", "admin_all", headers=weak)
    assert missing.status_code == 404, missing.text
    refused = rest.call("PATCH", DOC, "admin_all", headers=weak, json={"operation": "append", "content": "x"})
    assert refused.status_code == 412 and refused.json()["field"] == "If-Match", refused.text
    assert refused.headers["ETag"] == etag and "weak ETag" in refused.json()["detail"]
    assert "without W/" in refused.json()["detail"]
    assert rest.get(DOC, "admin_all").json()["text"] == "one"


def test_a_list_proceeds_when_any_strong_tag_matches(rest: RestWorld) -> None:  # noqa: F811
    etag = _fresh(rest, "one\n")
    for form in ("{stale}, {etag}", "{etag},{stale}", "W/{etag}, {etag}", "{stale},, {etag}"):
        header = form.format(stale=STALE, etag=etag)
        edited = rest.call("PATCH", DOC, "admin_all", headers={"If-Match": header},
                           json={"operation": "append", "content": "more"})
        assert edited.status_code == 200, (header, edited.text)
        etag = edited.headers["ETag"]
    stale = rest.call("PATCH", DOC, "admin_all", headers={"If-Match": f'{STALE}, "fedcba9876543210"'},
                      json={"operation": "append", "content": "late"})
    assert stale.status_code == 412 and stale.headers["ETag"] == etag, stale.text
    assert stale.json()["field"] == "If-Match" and "0123456789abcdef or fedcba9876543210" in stale.json()["detail"]
    weak_only = rest.call("DELETE", DOC, "admin_all", headers={"If-Match": f"W/{STALE}, W/{etag}"})
    assert weak_only.status_code == 412 and weak_only.headers["ETag"] == etag, weak_only.text
    moved = rest.call("POST", "/projects/handbook/moves", "admin_all", headers={"If-Match": f"{STALE}, {etag}"},
                      json={"path": "if-match/list.md", "newPath": "if-match/listed.md"})
    assert moved.status_code == 200, moved.text
    gone = rest.call("DELETE", "/projects/handbook/documents/if-match/listed.md", "admin_all",
                     headers={"If-Match": f"{etag}, {STALE}"})
    assert gone.status_code == 200, gone.text


def test_a_star_matches_any_current_document_and_none_missing(rest: RestWorld) -> None:  # noqa: F811
    _fresh(rest, "one\n")
    star = {"If-Match": "*"}
    replaced = rest.call("PUT", DOC, "admin_all", headers=star, json={"content": "two\n", "overwrite": True})
    assert replaced.status_code == 200, replaced.text
    edited = rest.call("PATCH", DOC, "admin_all", headers=star, json={"operation": "append", "content": "three"})
    assert edited.status_code == 200, edited.text
    fresh = "/projects/handbook/documents/if-match/star-new.md"
    refused = rest.call("PUT", fresh, "admin_all", headers=star, json={"content": "x"})
    assert refused.status_code == 412 and refused.json()["field"] == "If-Match", refused.text
    assert refused.json()["detail"].endswith("send it without If-Match to create it")
    assert rest.get(fresh, "admin_all").status_code == 404


@pytest.mark.parametrize("header", ['"0123456789abcdef", *', '"0123456789abcdef', '"a" "b"', ",", 'W/abc"',
                                    '"not-a-version"', '""'])
def test_a_malformed_if_match_is_400_naming_it(rest: RestWorld, header: str) -> None:  # noqa: F811
    etag = _fresh(rest, "one\n")
    refused = rest.call("PATCH", DOC, "admin_all", headers={"If-Match": header},
                        json={"operation": "append", "content": "x"})
    assert refused.status_code == 400 and refused.json()["field"] == "If-Match", (header, refused.text)
    assert rest.get(DOC, "admin_all").headers["ETag"] == etag
