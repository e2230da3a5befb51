"""Any sequence of edits applied through the note writing service equals the same edits applied to the text in
memory (note_edits.apply_edit, the model), and undoing the journal's entries newest first restores the
original bytes, byte for byte (CRLF, a byte order mark, no final newline)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_world import World
from notes_world import build_notes_world
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import InvalidArgument
from notewell.services.note_diff import version_of
from notewell.services.note_edits import Edit, apply_edit

_COUNTER = itertools.count()
HEADINGS = ["## Decisions", "## Risks", "### Open"]
NOTE_STARTS = [
    "# Plan\n\n## Decisions\n- one\n\n## Risks\n- none\n",
    "\ufeff---\r\ntitle: Plan\r\n---\r\n# Plan\r\n\r\n## Decisions\r\n- eins\r\n\r\n```\r\n## Risks\r\n```\r\n",
    "## Risks\n### Open\nnothing yet",
    "",
]
EDITS = st.one_of(
    st.builds(lambda c: Edit("append", c), st.sampled_from(["later", "- more\n- and more", "naïve café"])),
    st.builds(lambda c: Edit("prepend", c), st.sampled_from(["Draft.", "Status: open\n"])),
    st.builds(lambda h, c: Edit("insert_under_heading", c, heading=h), st.sampled_from(HEADINGS),
              st.sampled_from(["- added", "日本語"])),
    st.builds(lambda h, c: Edit("replace_section", c, heading=h), st.sampled_from(HEADINGS),
              st.sampled_from(["- replaced", ""])),
    st.builds(lambda v: Edit("set_front_matter", fields={"status": v}), st.sampled_from(["open", "done", None])),
    st.builds(lambda o: Edit("replace", "REPLACED", old=o), st.sampled_from(["- one", "Plan", "nothing yet"])),
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = build_notes_world(tmp_path_factory.mktemp("notes-model"))
    yield built
    built.runtime.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.sampled_from(NOTE_STARTS), edits=st.lists(EDITS, min_size=1, max_size=6))
def test_the_service_follows_the_model_and_undo_restores_the_bytes(world: World, start: str,
                                                                   edits: list[Edit]) -> None:
    rt = world.runtime
    path = f"handbook/model/n{next(_COUNTER)}.md"
    original = start.encode("utf-8")
    note: Path = world.vault / path
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_bytes(original)
    rt.indexing.sync_paths([path])
    model = start.removeprefix("\ufeff")
    bom = start[:1] == "\ufeff"
    journal: list[int] = []
    for edit in edits:
        try:
            expected = apply_edit(model, edit)
        except InvalidArgument:
            with pytest.raises(InvalidArgument):
                rt.notes.edit_note(LOCAL_OWNER, path, edit, tool="model")
            continue
        if expected == model:
            continue
        done = rt.notes.edit_note(LOCAL_OWNER, path, edit, tool="model")
        journal.append(done.journal_id)
        model = expected
        assert note.read_bytes() == ("\ufeff" if bom else "").encode() + model.encode("utf-8")
    for entry in reversed(journal):
        rt.journal.undo(LOCAL_OWNER, entry, tool="model")
    assert note.read_bytes() == original
    assert rt.knowledge.read_doc(LOCAL_OWNER, path).version == version_of(original)  # the index followed
