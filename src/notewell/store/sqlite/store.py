"""The SQLite store: a database file holding every repository."""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import suppress
from pathlib import Path
from urllib.parse import quote

from notewell.errors import ConfigError, Unavailable
from notewell.store.shared.foreign import refuse_foreign
from notewell.store.shared.store import SqlStore
from notewell.store.sqlite.backups import SqliteBackups
from notewell.store.sqlite.brain import SqliteBrain
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.documents import SqliteDocuments
from notewell.store.sqlite.memories import SqliteMemories
from notewell.store.sqlite.tables import SqliteTables


class SqliteStore(SqlStore):
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        memories = SqliteMemories(db)
        super().__init__(SqliteDialect(db), SqliteDocuments(db), memories, SqliteBrain(db, memories),
                         SqliteTables(db, {"memories": memories.compose_rows}), SqliteBackups(db))
        memories.compose_paths()  # once every component has its tables (SqlMemories.compose_paths)

    @classmethod
    def open(cls, path: Path, *, create: bool = True) -> SqliteStore:
        """A new database file is made 0600 in a folder made 0700: it holds every home's text and memories
        (SQLite gives its -wal and -shm files the database file's mode). An empty file made beforehand (`touch`,
        0644 under the usual umask) becomes a store too, so it is made 0600 as well."""
        with suppress(OSError):
            held = path.stat()
            if held.st_size == 0 and stat.S_ISREG(held.st_mode) and held.st_uid == os.geteuid() \
                    and held.st_mode & 0o077:
                path.chmod(0o600)
        if not path.exists():
            if not create:
                raise ConfigError(f"--db: no index at {path}; run 'notewell index' first")
            try:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                with suppress(FileExistsError):  # another process made it at the same moment
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except OSError as exc:
                raise ConfigError(f"--db: cannot create {path} ({exc.strerror}); check the folder's permissions, "
                                  "or pass another --db") from exc
        refuse_foreign(_tables(path), str(path))
        db = SqliteDatabase(path)
        try:
            return cls(db)
        except Unavailable:  # bringing the schema up to date waited for the write lock in vain (database.locked)
            db.close()
            raise

    @property
    def url(self) -> str:
        return str(self.db.path)

    def upgrade(self) -> None:
        SqliteStore(self.db)  # its components migrate the database as they are made; this store's serve on

    def close(self) -> None:
        self.db.close()


def _tables(path: Path) -> list[str]:
    """The file's tables, read without writing ([] when it cannot be read so: the opening says why)."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        return [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    except sqlite3.Error:
        return []
    finally:
        conn.close()
