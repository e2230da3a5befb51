"""Idempotency-Key under concurrent repeats, on both backends: however many copies of one create arrive at
once, one thing is created; every copy gets either that first answer or a 409 to retry (never a second
token, never a 5xx), and a later repeat gets the first answer."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from rest_world import RestWorld

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
