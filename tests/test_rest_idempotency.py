"""Idempotency-Key, on both backends. Under concurrent repeats: however many copies of one create arrive at
once, one thing is created; every copy gets either that first answer or a 409 to retry (never a second
token, never a 5xx), and a later repeat gets the first answer. Against the caller: a kept answer goes back
only to the token that sent the first request, and only while it may still make that request (a repeat
is refused exactly as the request itself would be)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from notewell.access.principal import LOCAL_OWNER
from rest_world import BOUND, RestWorld

COPIES = 8


def test_concurrent_repeats_create_one_token(rest: RestWorld) -> None:
    key = {"Idempotency-Key": f"race-{rest.backend}"}
    body = {"scopes": ["memory:read"], "name": f"race {rest.backend}"}
    with ThreadPoolExecutor(COPIES) as pool:
        answers = list(pool.map(lambda _: rest.call("POST", "/me/tokens", "bob_rw", json=body, headers=key),
                                range(COPIES)))
    assert {a.status_code for a in answers} <= {201, 409}, [a.text for a in answers]
    created = {a.json()["token"]["id"] for a in answers if a.status_code == 201}
    assert len(created) == 1
    assert sum(1 for a in answers if a.status_code == 201 and a.json()["secret"]) == 1  # the secret: once
    named = [t for t in rest.get("/me/tokens?limit=100", "bob_rw").json()["items"] if t["name"] == body["name"]]
    assert [t["id"] for t in named] == list(created)
    later = rest.call("POST", "/me/tokens", "bob_rw", json=body, headers=key)
    assert later.status_code == 201 and later.json()["token"]["id"] in created and later.json()["secret"] is None


def test_concurrent_repeats_create_one_session(rest: RestWorld) -> None:
    key = {"Idempotency-Key": f"session-race-{rest.backend}"}
    body = {"prompt": "a race", "projectName": "races"}
    with ThreadPoolExecutor(COPIES) as pool:
        answers = list(pool.map(lambda _: rest.call("POST", "/sessions", "bob_sessions", json=body, headers=key),
                                range(COPIES)))
    assert {a.status_code for a in answers} <= {201, 409}, [a.text for a in answers]
    ids = {a.json()["session"]["id"] for a in answers if a.status_code == 201}
    assert len(ids) == 1
    listed = [s["id"] for s in rest.get("/sessions?limit=100", "bob_sessions").json()["items"]
              if s["prompt"] == "a race"]
    assert listed == list(ids)


# (what is created, by which token, and the same person's tokens that may not create it: lacking the
# scope, or bound to another project)
CREATES = {
    "memory": ("/memories", {"content": "A replayed memory: the retainer review moved to Fridays.",
                             "project": "~alice"}, "alice_rw", ("alice_mem", "alice_kr", "alice_bound")),
    "token": ("/me/tokens", {"scopes": ["memory:write"], "name": "replayed"}, "alice_rw",
              ("alice_mem", "alice_kr", "alice_bound")),
    "session": ("/sessions", {"prompt": "a replayed session"}, "alice_sessions", ("alice_mem", "alice_rw")),
    "knowledge": ("/knowledge", {"rule": "Replayed rules stay with their token."}, "bob_sessions", ("bob_rw",)),
}


def _refused_like_the_request(rest: RestWorld, path: str, body: dict[str, Any], token: str, key: str) -> None:
    without_key = rest.call("POST", path, token, json=body)
    repeat = rest.call("POST", path, token, json=body, headers={"Idempotency-Key": key})
    assert without_key.status_code in (403, 404), without_key.text  # 404: a project the token may not see
    assert repeat.status_code == without_key.status_code, (token, repeat.status_code, repeat.text)
    assert "Idempotent-Replayed" not in repeat.headers
    assert repeat.json()["detail"] == without_key.json()["detail"]


@pytest.mark.parametrize("what", CREATES)
def test_a_kept_answer_is_refused_to_a_token_that_may_not_make_the_request(rest: RestWorld, what: str) -> None:
    path, body, maker, others = CREATES[what]
    key = f"scoped-{what}"
    first = rest.call("POST", path, maker, json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.text
    for token in others:
        _refused_like_the_request(rest, path, body, token, key)
    again = rest.call("POST", path, maker, json=body, headers={"Idempotency-Key": key})
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"


def test_a_kept_event_is_refused_to_a_token_without_sessions(rest: RestWorld) -> None:
    opened = rest.call("POST", "/sessions", "alice_sessions", json={"prompt": "events, replayed"})
    events = f"/sessions/{opened.json()['session']['id']}/events"
    body = {"eventType": "file_edit", "payload": {"file": "pricing.md"}}
    first = rest.call("POST", events, "alice_sessions", json=body, headers={"Idempotency-Key": "scoped-event"})
    assert first.status_code == 201, first.text
    _refused_like_the_request(rest, events, body, "alice_mem", "scoped-event")


def test_another_token_of_the_same_person_sends_its_own_request(rest: RestWorld) -> None:
    twin = rest.call("POST", "/me/tokens", "alice_rw", json={"scopes": ["memory:read", "memory:write"]})
    twin_secret = twin.json()["secret"]
    key = {"Idempotency-Key": "twin-key"}
    body = {"scopes": ["memory:read"], "name": "twin's"}
    first = rest.call("POST", "/me/tokens", "alice_rw", json=body, headers=key)
    other = rest.call("POST", "/me/tokens", twin_secret, json=body, headers=key)
    assert first.status_code == other.status_code == 201, other.text
    assert "Idempotent-Replayed" not in other.headers
    assert other.json()["secret"] and other.json()["token"]["id"] != first.json()["token"]["id"]
    repeat = rest.call("POST", "/me/tokens", twin_secret, json=body, headers=key)
    assert repeat.headers["Idempotent-Replayed"] == "true"
    assert repeat.json()["token"]["id"] == other.json()["token"]["id"]


def test_a_repeat_after_a_grant_is_removed_is_refused(rest: RestWorld) -> None:
    admin = rest.runtime.administration
    body = {"content": "Bob's note on the advisory floor, while he could write there.", "project": BOUND}
    key = {"Idempotency-Key": "grant-then-none"}
    admin.grant(LOCAL_OWNER, "bob@northwind.test", BOUND, "write")
    try:
        first = rest.call("POST", "/memories", "bob_rw", json=body, headers=key)
    finally:
        admin.ungrant(LOCAL_OWNER, "bob@northwind.test", BOUND)
    assert first.status_code == 201, first.text
    repeat = rest.call("POST", "/memories", "bob_rw", json=body, headers=key)
    assert repeat.status_code == 404, repeat.text  # the project is hidden from him again, as without the key
    assert body["content"] not in repeat.text and "Idempotent-Replayed" not in repeat.headers
    assert rest.call("POST", "/memories", "bob_rw", json=body).status_code == 404
