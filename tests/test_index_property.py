"""Property: after any sequence of edits (write, delete, rename, touch) synced in batches, the store
holds what a fresh index of the final vault holds, and search finds what is on disk.

Every write and touch gets its own distinct mtime: two edits of the same size within one tick of the
file system clock cannot be told apart by size and mtime, which is the trade-off every mtime-based sync
makes (git's "racy clean" problem); this test is about the sync logic, not about that.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import IndexedVault, index_into

NAMES = ("p/a.md", "p/b.md", "p/sub/c.md", "q/d.txt", "q/e.md", "q/no-heading.md")
CONTENTS: tuple[bytes, ...] = (
    b"# Alpha\nalpha words\n",
    b"beta words\n",
    b"# Gamma\ngamma\n",
    b"alpha words\n",
    b"delta\x00binary",
    b"caf\xe9 epsilon\n",
    b"---\ntitle: Zeta\n---\nzeta\n",
    b"",
)
WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "words")

Op = tuple[str, ...]
ops = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.sampled_from([str(i) for i in range(len(CONTENTS))])),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("touch"), st.sampled_from(NAMES)),
)


class Vault:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = 1_700_000_000 * 10**9

    def _tick(self, path: Path) -> None:
        self.clock += 10**9
        os.utime(path, ns=(self.clock, self.clock))

    def apply(self, op: Op) -> None:
        path = self.root / op[1]
        if op[0] == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(CONTENTS[int(op[2])])
            self._tick(path)
        elif op[0] == "delete" and path.exists():
            path.unlink()
        elif op[0] == "rename" and path.exists() and op[1] != op[2]:
            target = self.root / op[2]
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
        elif op[0] == "touch" and path.exists():
            self._tick(path)

    def files(self) -> dict[tuple[str, str], bytes]:
        found = {}
        for name in NAMES:
            path = self.root / name
            if path.exists():
                project, rel = name.split("/", 1)
                found[(project, rel)] = path.read_bytes()
        return found


def check_store(indexed: IndexedVault, vault: Vault) -> None:
    on_disk = vault.files()
    texts = {key: data for key, data in on_disk.items() if b"\x00" not in data}
    state = indexed.store.documents.state()
    assert {key: st.sha256 for key, st in state.items()} == {
        key: hashlib.sha256(data).hexdigest() for key, data in texts.items()}
    binary = {(s.project, s.path) for s in indexed.store.documents.skipped() if s.reason == "binary file"}
    assert binary == set(on_disk) - set(texts)
    for word in WORDS:
        expected = sorted(key for key, data in texts.items() if word in data.decode("utf-8", "replace"))
        found = sorted((m.project, m.path) for m in indexed.search(word).matches)
        assert found == expected, word


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(st.lists(ops, min_size=1, max_size=6), min_size=1, max_size=4))
def test_incremental_sync_equals_a_fresh_index(batches: list[list[Op]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault = Vault(root / "vault")
        vault.apply(("write", "p/a.md", "0"))
        indexed = index_into(vault.root, root / "incremental.db")
        try:
            for batch in batches:
                for op in batch:
                    vault.apply(op)
                indexed.sync()
                check_store(indexed, vault)
                assert not indexed.sync().did_work
            fresh = index_into(vault.root, root / "fresh.db")
            try:
                for project in ("p", "q"):
                    assert indexed.store.documents.metas(project) == fresh.store.documents.metas(project)
                assert indexed.store.documents.skipped() == fresh.store.documents.skipped()
                assert indexed.store.documents.vault_projects() == fresh.store.documents.vault_projects()
            finally:
                fresh.runtime.close()
        finally:
            indexed.runtime.close()
