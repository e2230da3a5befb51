"""kill -9 in the middle of 500 note writes: every note is whole (its content is one of the texts a write
gave it, never a mix, never empty), no temporary file is left where the index would read it, and the
journal is one unbroken chain per note that the note's bytes are at the end of (or one acknowledged-free
write ahead: the write landed, the kill came before its journal row). An undo afterwards still works."""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import make_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.scratch_files import NOTE_TEMP_PREFIX as TEMP_PREFIX
from notewell.services.note_diff import version_of

NOTES = 5
WRITES = 500
# The child writes note i % NOTES with a text that names the write, 40 KB each so a write takes a while.
CHILD = textwrap.dedent("""
    import sys
    from notewell.access.principal import LOCAL_OWNER
    from notewell.runtime import open_runtime

    rt = open_runtime(sys.argv[1], sys.argv[2])
    for i in range(int(sys.argv[3])):
        text = f"# write {i}\\n" + f"line of write {i}\\n" * 2500
        rt.notes.write_note(LOCAL_OWNER, f"crash/n{i % 5}.md", text, tool="crash", overwrite=True)
        print(i, flush=True)
""")


def _texts() -> dict[str, str]:
    """Every text a write may leave, by its version."""
    texts = {}
    for i in range(WRITES):
        text = f"# write {i}\n" + f"line of write {i}\n" * 2500
        texts[version_of(text.encode())] = text
    return texts


def _number(texts: dict[str, str], data: bytes) -> int:
    """Which write gave these bytes."""
    return int(texts[version_of(data)].split()[2])


def test_kill_9_during_writes_leaves_whole_notes_and_a_consistent_journal(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"crash/README.md": "# Crash\n"})
    db = str(tmp_path / "index.db")
    first = open_runtime(str(vault), db)
    first.indexing.sync()  # the project "crash" exists once indexed
    first.close()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(vault), db, str(WRITES)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    acknowledged = -1
    for line in proc.stdout:
        acknowledged = int(line)
        if acknowledged >= 150:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    texts = _texts()
    rt = open_runtime(str(vault), db)
    try:
        for n in range(NOTES):
            path = f"crash/n{n}.md"
            data = (vault / path).read_bytes()
            assert version_of(data) in texts, f"{path} holds no whole text"
            chain = list(reversed(rt.journal.entries(LOCAL_OWNER, path=path, limit=500)))
            assert chain and chain[0].before_version is None
            for earlier, later in itertools.pairwise(chain):
                assert earlier.after_version == later.before_version
            last = chain[-1].after_version
            assert last is not None
            if version_of(data) != last:  # the write landed, and the kill came before its journal row
                assert _number(texts, data) > _number(texts, texts[last].encode())
        rt.indexing.sync()
        indexed = rt.store.documents.state()
        assert not [key for key in indexed if key[1].rsplit("/", 1)[-1].startswith(TEMP_PREFIX)]
        newest = rt.journal.entries(LOCAL_OWNER, limit=1)[0]
        current = version_of((vault / f"{newest.project}/{newest.path}").read_bytes())
        if current == newest.after_version:
            rt.journal.undo(LOCAL_OWNER, newest.id, tool="test")
            assert version_of((vault / f"{newest.project}/{newest.path}").read_bytes()) == newest.before_version
    finally:
        rt.close()
