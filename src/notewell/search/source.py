"""What the search engine needs of the document index: the repository protocol search owns.

Any store's document repository satisfies it structurally, so search depends on the records alone and
never on the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from notewell.records.documents import CandidateDoc, DocKey, Scope
from notewell.records.plan import Plan


class DocumentSource(Protocol):
    def candidates(self, scope: Scope, plan: Plan | None, *, after: DocKey | None = None,
                   limit: int | None = None) -> list[CandidateDoc]:
        """The documents in scope whose index holds the plan's trigrams (every one for None), in
        (project, path) order, starting after the key ``after``, at most ``limit`` of them."""
        ...

    def texts(self, candidates: Sequence[CandidateDoc],
              plan: Plan | None = None) -> Iterator[tuple[int, int, bytes]]:
        """The text of each candidate as stored (UTF-8 bytes, undecoded), in order, as (document id, line
        number of its first line, text) per region: the regions it names, or all of them in order;
        nothing for a document deleted meanwhile. A store may leave out a named region whose words it
        knows cannot hold ``plan``'s literals (the plan its candidates came from)."""
        ...
