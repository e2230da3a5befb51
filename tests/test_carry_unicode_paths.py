"""notewell import (and --merge) and notewell migrate load memory paths composed (NFC), as the ``memory_paths``
migration leaves a store: an export an earlier version wrote holds a memory filed under "cafe" and a combining
accent as it kept it, and the store it is loaded into ran that migration long before, so the path stayed
decomposed. A listing or a path_filter by the path (read composed) missed the memory, and a merge left two live
copies of one text at one place. The load now runs the same step in its transaction (SqlTables' after_load)."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path
from typing import Any

from conftest import make_vault, run_cli
from notewell.records.memories import MemoryInput
from notewell.store import open_store

NFC = "caf\u00e9/r\u00e9unions"
NFD = unicodedata.normalize("NFD", NFC)
HOME = "apollo"
TEXT = "Wombat minutes go to the binder."


def _memory(ref: str, path: str, created: str) -> MemoryInput:
    return MemoryInput(ref=ref, project=HOME, author_user_id="local", author_token_id=None, memory_type="durable",
                       path=path, title=TEXT, content=TEXT, tags=(),
                       content_hash=hashlib.sha256(TEXT.encode()).hexdigest(), created=created)


def _earlier_store(db: Path) -> None:
    """A store of the project apollo holding a memory at the decomposed path, as an earlier version kept it (the
    store-level add writes the path as given; the store's memory_paths step ran when it was made, on no memory)."""
    vault = make_vault(db.parent, {"apollo/README.md": "# Apollo\n"}, name=f"vault-{db.stem}")
    indexed = run_cli("index", "--vault", str(vault), "--db", str(db))
    assert indexed.exit_code == 0, indexed.stderr
    store = open_store(str(db))
    try:
        store.memories.add(_memory("mem_old_nfd", NFD, "2026-01-01T00:00:00.000000Z"))
    finally:
        store.close()


def _found(db: str, path_filter: str) -> list[dict[str, Any]]:
    result = run_cli("memory", "search", "wombat", "--path-filter", path_filter, "--db", db, "--json")
    assert result.exit_code == 0, result.stderr
    return list(json.loads(result.stdout)["results"])


def _exported(tmp_path: Path) -> Path:
    _earlier_store(tmp_path / "old.db")
    done = run_cli("export", str(tmp_path / "export"), "--db", str(tmp_path / "old.db"))
    assert done.exit_code == 0, done.stderr
    return tmp_path / "export"


def test_an_export_from_an_earlier_version_imports_with_its_paths_composed(tmp_path: Path, store_url: str) -> None:
    done = run_cli("import", str(_exported(tmp_path)), "--db", store_url)
    assert done.exit_code == 0, done.stderr
    for typed in (NFC, NFD):  # a path_filter is read composed, either way it is typed
        assert [(r["ref"], r["path"]) for r in _found(store_url, f"{HOME}/{typed}")] == [("mem_old_nfd", NFC)]


def test_a_merge_leaves_one_live_copy_of_a_text_at_its_place(tmp_path: Path, store_url: str) -> None:
    exported = _exported(tmp_path)
    vault = make_vault(tmp_path, {"apollo/README.md": "# Apollo\n"})
    assert run_cli("index", "--vault", str(vault), "--db", store_url).exit_code == 0
    added = run_cli("memory", "add", TEXT, "--project", HOME, "--path", NFC, "--db", store_url, "--json")
    assert added.exit_code == 0, added.stderr
    kept = json.loads(added.stdout)["ref"]
    done = run_cli("import", str(exported), "--merge", "--db", store_url)
    assert done.exit_code == 0, done.stderr
    for prefix in (HOME, f"{HOME}/{NFC}"):  # one live copy in the project, and at the place
        assert [(r["ref"], r["path"]) for r in _found(store_url, prefix)] == [(kept, NFC)]
    store = open_store(store_url)
    try:
        merged = store.memories.get("mem_old_nfd")  # still readable by its ref, superseded by the one kept
        assert merged is not None and (merged.path, merged.superseded_by) == (NFC, kept)
    finally:
        store.close()


def test_migrate_carries_a_decomposed_path_composed(tmp_path: Path, store_url: str) -> None:
    """A store whose paths a load left decomposed (an import before this fix) is copied with them composed."""
    _earlier_store(tmp_path / "source.db")
    done = run_cli("migrate", "--from", f"sqlite:{tmp_path / 'source.db'}", "--to", store_url)
    assert done.exit_code == 0, done.stderr
    assert [(r["ref"], r["path"]) for r in _found(store_url, f"{HOME}/{NFC}")] == [("mem_old_nfd", NFC)]
