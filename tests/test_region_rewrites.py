"""A changed document rewrites only the regions its new text changed (store/regions.py region_changes), on both
backends, and answers exactly as the same text indexed from nothing.

Unit: for any stored and new text, the stored regions less the stale ones, with the moved ones' line numbers
and the fresh ones, are the new text's regions; an append to a 1 MB note changes its last region alone.
Store: a 1 MB note edited in turn (an append, lines added in the middle, a section removed, cut to a few
regions, grown back past its old size) is, after each sync, region for region (first line, text) and hit for
hit the same as a copy of its text indexed as a new document.
"""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from conftest import make_vault
from notewell.indexer import sync
from notewell.records.documents import Scope
from notewell.runtime import Runtime, open_runtime
from notewell.search.engine import SearchRequest
from notewell.search.literals import plain_plan
from notewell.store import regions
from notewell.store.regions import Region, region_changes, split

texts = st.lists(st.sampled_from([b"a", b"bc", b"\n", "é\n".encode(), b"xyz" * 5 + b"\n"]), max_size=60).map(b"".join)
LINE = "The quarterly pricing review keeps the retainer floor and the discount ladder as they are.\n"


def _section(i: int) -> str:
    return f"## Section {i}\nqzsec{i}w\n" + LINE * 40


BIG = "# Big\n\n" + "".join(_section(i) for i in range(260))  # about 1 MB: 32 regions of about 32 KB


@given(old=texts, new=texts, size=st.integers(1, 30))
def test_the_changes_turn_the_stored_regions_into_the_new_ones(old: bytes, new: bytes, size: int) -> None:
    with patch.object(regions, "REGION_BYTES", size):
        stored, wanted = split(old), split(new)
    changes = region_changes(stored, wanted)
    stale = {r.seq for r in changes.stale}
    kept = {r.seq: r for r in stored if r.seq not in stale}
    kept.update({r.seq: r for r in [*changes.moved, *changes.fresh]})
    assert sorted(kept.values()) == wanted
    assert {r.seq for r in changes.fresh} <= stale | {r.seq for r in wanted if r.seq >= len(stored)}
    assert not {r.seq for r in changes.moved} & stale


def test_an_append_to_a_long_note_changes_its_last_region_alone() -> None:
    stored = split(BIG.encode())
    changes = region_changes(stored, split((BIG + "qzappended\n").encode()))
    assert len(stored) == regions.MAX_REGIONS
    assert [r.seq for r in changes.stale] == [r.seq for r in changes.fresh] == [regions.LAST_SEQ]
    assert changes.moved == []
    assert region_changes(stored, stored) == ([], [], [])


def _edits() -> list[str]:
    middle = BIG.index("## Section 130\n")
    gone = BIG.index("## Section 3\n"), BIG.index("## Section 4\n")
    return [
        BIG + "qzappended\n",
        BIG[:middle] + "qzmiddle\n" * 5 + BIG[middle:],  # the regions after it start at other lines
        BIG[:gone[0]] + BIG[gone[1]:],  # a section removed near the top
        BIG[:40_000],  # from 32 regions to 3
        BIG + BIG[:200_000] + "qzgrown\n",  # past the old size: larger regions
    ]


def _regions(rt: Runtime, path: str) -> list[tuple[int, bytes]]:
    """The document's regions as the store hands them to the search: (first line, text) each, in order."""
    found = [c for c in rt.store.documents.candidates(Scope(projects=["p"]), None) if c.path == path]
    assert len(found) == 1
    return [(line, text) for _, line, text in rt.store.documents.texts(found)]


def _named(rt: Runtime, word: str, path: str) -> list[int] | None:
    """The places of the document's regions the trigram index names for ``word`` (None: the whole document;
    []: not a candidate): a region taken out of the index must not be named any more."""
    found = [c for c in rt.store.documents.candidates(Scope(projects=["p"]), plain_plan(word)) if c.path == path]
    if not found:
        return []
    named = found[0].regions
    return None if named is None else [rid & regions.LAST_SEQ for rid in named]


def test_an_edited_note_answers_as_the_same_text_indexed_anew(tmp_path: Path, store_url: str) -> None:
    vault = make_vault(tmp_path, {"p/note.md": BIG})
    rt = open_runtime(str(vault), store_url)
    try:
        sync(rt.settings, rt.store)
        words = ["qzappended", "qzmiddle", "qzgrown", *(f"qzsec{i}w" for i in (0, 3, 4, 5, 129, 130, 131, 259))]
        for step, text in enumerate(_edits()):
            (vault / "p/note.md").write_text(text)
            (vault / f"p/copy{step - 1}.md").unlink(missing_ok=True)
            (vault / f"p/copy{step}.md").write_text(text)  # the same text as a new document: every region fresh
            report = sync(rt.settings, rt.store)
            assert (report.added, report.changed) == (1, 1), step
            assert _regions(rt, "note.md") == _regions(rt, f"copy{step}.md"), step
            for word in words:
                found = rt.engine.search(SearchRequest(word, Scope(projects=["p"]), all_lines=True)).matches
                lines = {m.path: [x.line for x in found if x.path == m.path] for m in found}
                assert lines.get("note.md") == lines.get(f"copy{step}.md"), (step, word)
                assert ("note.md" in lines) == (word in text), (step, word)
                assert _named(rt, word, "note.md") == _named(rt, word, f"copy{step}.md"), (step, word)
    finally:
        rt.close()


def test_regions_compare_by_place_and_bytes() -> None:
    same = [Region(0, 1, b"a\n"), Region(1, 2, b"b\n")]
    shifted = [Region(0, 1, b"a\nx\n"), Region(1, 3, b"b\n")]
    changes = region_changes(same, shifted)
    assert changes.stale == [same[0]] and changes.fresh == [shifted[0]] and changes.moved == [shifted[1]]
    assert region_changes(same, same[:1]).stale == [same[1]]
