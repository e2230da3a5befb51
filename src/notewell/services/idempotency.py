"""Idempotent creates: a request repeated with the same Idempotency-Key gets the first answer back.

The first answer is kept in the store (both backends) for a day, by (user, token, key), so a repeat sent
to any server process finds it, and only the token that sent the first request gets its answer back
(another token of the same person, with other scopes or another project, sends its own request). Every
repeat is first asked the permissions the create would ask (``permit``): a caller who may not make the
request now gets the refusal, never the kept answer. A repeat that asks for something else under the
same key is refused, and so is one that arrives while the first is still running. What is kept is what
the door hands over to keep: a door leaves out anything that must never be stored (a token's secret).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from notewell.access.principal import Principal
from notewell.errors import Conflict, InvalidArgument
from notewell.store.base import Store
from notewell.timestamps import iso

KEY_FIELD = "Idempotency-Key"
KEY_MAX_CHARS = 200
KEEP_FOR = timedelta(hours=24)
RUNNING_AT_MOST = timedelta(minutes=2)  # a first request that never answered (its process died) is given up
_KEY = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII, as an HTTP header value can carry safely


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    location: str | None = None
    repeated: bool = False  # True: the kept first answer, returned again


def check_key(key: str) -> str:
    key = key.strip()
    if not key or len(key) > KEY_MAX_CHARS or not _KEY.match(key):
        raise InvalidArgument(KEY_FIELD, f"must be 1 to {KEY_MAX_CHARS} visible ASCII characters, such as a UUID")
    return key


def fingerprint(method: str, target: str, body: object) -> str:
    text = json.dumps([method.upper(), target, body], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class IdempotencyService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def _owner(self, p: Principal) -> str:
        """Whose keys these are: the user and the token (the local owner, without a token, has its own)."""
        return f"{p.user_id} {p.token_id or '-'}"

    def once(self, p: Principal, key: str, request_fingerprint: str, permit: Callable[[], None],
             create: Callable[[], Answer], kept: Callable[[Answer], dict[str, Any]] = lambda a: a.body) -> Answer:
        """``create()``'s answer the first time; the kept answer (``kept`` of the first) on every repeat.
        ``permit()`` runs first, every time: it raises the refusal ``create`` would raise for a caller who
        may not make this request (scopes, project, role), so a repeat is answered only to one who may."""
        key = check_key(key)
        permit()
        owner = self._owner(p)
        now = datetime.now(UTC)
        found = self.store.idempotency.reserve(owner, key, request_fingerprint, iso(now),
                                               stale_before=iso(now - RUNNING_AT_MOST),
                                               expired_before=iso(now - KEEP_FOR))
        if found is not None:
            if found.fingerprint != request_fingerprint:
                raise InvalidArgument(KEY_FIELD, "was used for a different request; send a new key for a new "
                                                 "request, or repeat the first request exactly")
            if found.status is None:
                raise Conflict(f"{KEY_FIELD}: the first request with this key is still running; repeat it later")
            return Answer(found.status, json.loads(found.body), found.location, repeated=True)
        try:
            answer = create()
        except BaseException:
            self.store.idempotency.release(owner, key)
            raise
        self.store.idempotency.complete(owner, key, answer.status, answer.location,
                                        json.dumps(kept(answer), ensure_ascii=False))
        return answer
