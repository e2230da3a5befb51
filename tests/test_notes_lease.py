"""The note lease on PostgreSQL (store/note_lease.py): a second holder of the same note waits for the first,
from another connection as another server would; another note does not wait."""

from __future__ import annotations

import threading

from notewell.store.note_lease import open_note_lease


def test_a_second_holder_waits_for_the_first(pg_url: str) -> None:
    first, second = open_note_lease(pg_url), open_note_lease(pg_url)
    order: list[str] = []

    def other() -> None:
        with second.holding("handbook/plan.md"):
            order.append("second")

    with first.holding("handbook/plan.md"):
        with second.holding("handbook/other.md"):
            order.append("other note at once")
        waiter = threading.Thread(target=other)
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive()  # still waiting for the first holder
        order.append("first")
    waiter.join(timeout=10)
    assert order == ["other note at once", "first", "second"]
