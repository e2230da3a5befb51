"""A sync's files are taken in order and let go of one by one, the kernel asked to read each HINT_AHEAD
files before it is read (indexer._taken)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.indexer import HINT_AHEAD, _taken
from notewell.vault.scan import VaultFile
from notewell.vault.verified_read import VerifiedReader


class _Recorded(VerifiedReader):
    """A reader whose hints are only written down, with what had been taken when each came."""

    def __init__(self, events: list[tuple[str, str]]) -> None:
        super().__init__(Path("/nonexistent"), 0)
        self.events = events

    def hint(self, rel: str) -> None:
        self.events.append(("hint", rel))


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=3 * HINT_AHEAD))
def test_each_file_is_hinted_once_ahead_of_its_read_and_let_go_as_it_is_taken(count: int) -> None:
    files = [VaultFile("p", f"n{n:04}.md", n, 0) for n in range(count)]
    listed = files.copy()
    events: list[tuple[str, str]] = []
    for file in _taken(listed, _Recorded(events)):
        assert len(listed) == count - 1 - sum(kind == "take" for kind, _ in events)  # the list lets it go
        events.append(("take", file.source))
    taken = [rel for kind, rel in events if kind == "take"]
    hinted = [rel for kind, rel in events if kind == "hint"]
    assert taken == [f.source for f in files] and hinted == taken and listed == []
    for n, file in enumerate(files):  # hinted before its read, and no more than HINT_AHEAD files ahead of it
        hint_at = events.index(("hint", file.source))
        assert hint_at < events.index(("take", file.source))
        assert sum(kind == "take" for kind, _ in events[:hint_at]) >= n - HINT_AHEAD
