"""SQLite backups through the online backup API: one step copies every page under one read snapshot, so the copy
is consistent while servers go on writing (WAL lets them), and no writer waits for it."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from notewell.errors import InvalidArgument, StoreDamaged, file_refusal
from notewell.scratch_files import part_path, remove_stale_parts
from notewell.store.interrupts import interrupts_held
from notewell.store.shared.backups import SQLITE_MAGIC, SqlBackups, refuse_the_other_backends
from notewell.store.sqlite.database import SqliteDatabase, damaged
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.timestamps import iso


def _checked(conn: sqlite3.Connection, path: Path, field: str) -> None:
    """A copy that is whole (quick_check) and a Notewell store (it has migrations)."""
    try:
        ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        ours = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone() is not None
    except sqlite3.DatabaseError as exc:
        raise InvalidArgument(field, f"{path} is not a SQLite database ({exc}); name a file 'notewell backup' "
                                     "wrote") from None
    if not ok or not ours:
        raise InvalidArgument(field, f"{path} is {'damaged' if not ok else 'not a Notewell store'}; name a file "
                                     "'notewell backup' wrote")


def _taken_at(copy: sqlite3.Connection, path: Path) -> str:
    """When the copy was taken: its own backup record (copy_to writes it, its size 0: no other record has that
    size); of a copy an earlier version made (its records are its source's), the file's modification time."""
    try:
        row = copy.execute("SELECT max(at) FROM backups WHERE bytes = 0").fetchone()
    except sqlite3.OperationalError:  # no backups table
        row = None
    if row is not None and row[0] is not None:
        return str(row[0])
    return iso(datetime.fromtimestamp(path.stat().st_mtime, UTC))


def _private_file(path: Path) -> None:
    """An empty file only its owner reads: a copy holds every home."""
    path.unlink(missing_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


@contextmanager
def _in_page_size(source: sqlite3.Connection, page_size: int, scratch: Path) -> Iterator[sqlite3.Connection]:
    """``source`` rewritten with ``page_size``. SQLite's backup cannot change the page size of a database in WAL
    mode, which a store is: a backup of another page size (4 KB, from a store an older version made) is first
    written by ``VACUUM INTO`` to a scratch file beside the store, in the store's page size (one copy: no
    journal, no temporary file elsewhere), and the scratch removed afterwards, whatever happens."""
    try:
        _private_file(scratch)
        source.execute(f"PRAGMA page_size={page_size}")  # the page size VACUUM INTO gives its copy
        source.execute("VACUUM INTO ?", (str(scratch),))
        conn = sqlite3.connect(scratch, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()
    finally:
        scratch.unlink(missing_ok=True)


class SqliteBackups(SqlBackups):
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        super().__init__(SqliteDialect(db))

    def copy_to(self, path: Path, at: str) -> int:
        """The copy is written to ``path``.<pid>@<host>.part and renamed when whole (the leftovers of a killed
        backup in that folder are removed first: scratch_files.py); a copy that fails (its disk full, say)
        leaves nothing behind, and a refusal of its disk is named as such. Its own backup records are its
        record alone (``at``, ``path``; its size is not known yet: 0), which a restore reads for the time it
        was taken: the source's records (of other backups) are not the copy's to bring back."""
        remove_stale_parts(path.parent)
        scratch = part_path(path)
        try:
            _private_file(scratch)
            copy = sqlite3.connect(scratch, isolation_level=None)
            try:
                self.db.conn.backup(copy)  # pages=-1: every page in one step, one snapshot
                copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
                copy.execute("BEGIN")
                copy.execute("DELETE FROM backups")
                copy.execute("INSERT INTO backups (at, path, bytes) VALUES (?, ?, 0)", (at, str(path.resolve())))
                copy.execute("COMMIT")
                found = copy.execute("PRAGMA quick_check").fetchone()[0]
                if found != "ok":  # the store's own pages: no backup of it is whole
                    raise StoreDamaged(self.db.path, f"a copy of it fails SQLite's quick_check: {found}")
            finally:
                copy.close()
            os.replace(scratch, path)
        except BaseException as exc:
            for debris in (scratch, *(scratch.with_name(scratch.name + end) for end in ("-journal", "-wal", "-shm"))):
                with suppress(OSError):  # a folder it could not write in holds none
                    debris.unlink(missing_ok=True)
            refused = file_refusal("backup", path, exc) if isinstance(exc, (OSError, sqlite3.Error)) else None
            if refused is not None:
                raise refused from None
            source_damaged = damaged(exc, self.db.path) if isinstance(exc, sqlite3.DatabaseError) else None
            if source_damaged is not None:  # the copy is new and written as it is read: what fails is the store
                raise source_damaged from None
            if isinstance(exc, OSError):  # a place no file can be made in (/proc, a missing device, ...)
                raise InvalidArgument("backup", f"cannot write {path} ({exc.strerror}); name a file in a folder "
                                                "you may write") from None
            raise
        return path.stat().st_size

    def restore_from(self, path: Path, then: Callable[[str], None]) -> None:
        if not path.is_file():
            raise InvalidArgument("file", f"{path} is not a file; name a file 'notewell backup' wrote")
        refuse_the_other_backends(path, SQLITE_MAGIC)
        copy = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        try:
            _checked(copy, path, "file")
            at = _taken_at(copy, path)
            page_size = self.db.conn.execute("PRAGMA page_size").fetchone()[0]
            if copy.execute("PRAGMA page_size").fetchone()[0] == page_size:
                self._replaced_by(copy, at, then)
            else:
                with _in_page_size(copy, page_size, self.db.path.with_name(self.db.path.name + ".restore")) as sized:
                    self._replaced_by(sized, at, then)
        finally:
            copy.close()

    def _replaced_by(self, copy: sqlite3.Connection, at: str, then: Callable[[str], None]) -> None:
        """Every page replaced under the store's write lock, in one step SQLite does not stop for a Ctrl-C (it
        was raised as the step ended, the store replaced, as if it had stopped it): held until ``then`` says so."""
        with interrupts_held():
            copy.backup(self.db.conn)
            then(at)
