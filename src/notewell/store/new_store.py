"""What a command that fills a new store (import, restore, migrate's target) made, taken away when it fails.

An empty store where none was would be taken for the command's result, and a second attempt would find a
store (a restore into it was accepted though the first had failed). SQLite: the database file, its -wal
and -shm, and its lease files, when there was no file before. PostgreSQL: the tables the command made, when
the database's schema held no table at all before it (a store that was there, even one whose upgrade the
opening made new tables for, is left as it is) and the data they carry is still empty (a transaction rolled
back leaves it so; the tables a store fills itself as it opens, EXCLUDED_TABLES, do not count), and the
functions its migrations made (postgres/word_totals.py, postgres/live_stems.py). Extensions stay (a superuser's).
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from notewell.config import is_postgres_url
from notewell.store.postgres import live_stems, word_totals
from notewell.store.postgres.database import CONNECT_TIMEOUT_S
from notewell.store.shared.tables import EXCLUDED_TABLES
from notewell.store.sqlite.leadership import LOCK_SUFFIXES

_TABLES = ("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
           " AND table_type = 'BASE TABLE'")


def _tables(conn: psycopg.Connection) -> set[str]:
    return {row[0] for row in conn.execute(_TABLES).fetchall()}


@dataclass(frozen=True)
class NewStore:
    """A store's place as it was before a command opened it (``before_opening``)."""

    target: str
    new: bool  # nothing was there: no SQLite file; no table in the PostgreSQL schema (False when not known)

    def discard(self) -> None:
        """Take away what was made since ``before_opening``, when nothing was there before."""
        if not self.new:
            return
        if not is_postgres_url(self.target):
            for suffix in ("", "-wal", "-shm", *LOCK_SUFFIXES):
                with suppress(OSError):  # a folder the command could not write in holds nothing it made
                    Path(f"{self.target}{suffix}").unlink(missing_ok=True)
            return
        try:
            with psycopg.connect(self.target, connect_timeout=CONNECT_TIMEOUT_S) as conn, conn.transaction():
                made = sorted(_tables(conn))  # all of them: there were none
                if not made:
                    return
                for name in made:
                    if name not in EXCLUDED_TABLES and conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(
                            sql.Identifier(name))).fetchone() != (False,):
                        return
                conn.execute(sql.SQL("DROP TABLE {} CASCADE").format(
                    sql.SQL(", ").join(sql.Identifier(name) for name in made)))
                conn.execute(sql.SQL("DROP FUNCTION IF EXISTS {}").format(
                    sql.SQL(", ").join(sql.SQL(f) for f in (*word_totals.FUNCTIONS, live_stems.FUNCTION))))
        except psycopg.Error:
            return  # the database is out of reach: the command's own error says why


def before_opening(target: str) -> NewStore:
    """The place ``target`` (a SQLite path or a PostgreSQL URL) as it is before a command opens a store there."""
    if not is_postgres_url(target):
        return NewStore(target, not Path(target).exists())
    try:
        with psycopg.connect(target, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            return NewStore(target, not _tables(conn))
    except psycopg.Error:
        return NewStore(target, False)  # opening it will fail and say why
