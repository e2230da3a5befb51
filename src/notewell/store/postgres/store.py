"""The PostgreSQL store: one database shared by the indexer and any number of servers."""

from __future__ import annotations

import logging

import psycopg

from notewell.errors import ConfigError, StoreCannotWrite
from notewell.store.postgres import word_rank, word_totals
from notewell.store.postgres.backups import PostgresBackups
from notewell.store.postgres.brain import PostgresBrain
from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.dialect import PostgresDialect
from notewell.store.postgres.documents import PostgresDocuments
from notewell.store.postgres.memories import PostgresMemories
from notewell.store.postgres.pgvector import PgVectorIndex
from notewell.store.postgres.tables import PostgresTables
from notewell.store.postgres.url_secrets import redact, scrub
from notewell.store.shared.foreign import refuse_foreign
from notewell.store.shared.store import SqlStore

_log = logging.getLogger("notewell.store")

# The tables of the schemas the store's search path makes (its own: an extension's tables, PostGIS's say, left out)
OWN_TABLES = ("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
              " WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY(current_schemas(false)) AND NOT EXISTS"
              " (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid"
              " AND d.deptype = 'e')")


class PostgresStore(SqlStore):
    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        memories = PostgresMemories(db)
        brain = PostgresBrain(db, memories)
        super().__init__(PostgresDialect(db), PostgresDocuments(db), memories, brain,
                         PostgresTables(db, {"memories": memories.compose_rows}), PostgresBackups(db))
        memories.compose_paths()  # once every component has its tables (SqlMemories.compose_paths)
        # after the meaning's tables: its column goes into their vectors
        memories.index = self.meaning.index = PgVectorIndex.attach(db)
        self._start_a_foreign_log_anew(memories.ranker, brain.ranker)

    def _start_a_foreign_log_anew(self, *rankers: word_rank.Ranker) -> None:
        """A log another cluster numbered (word_totals.py) started anew; in a database that refuses writes (read-only,
        as a replica restored by hand may be) left as it is, and this store's searches then keep no count."""
        with self.db.transaction() as conn:
            if conn.execute(word_totals.FOREIGN_LOG).fetchone() != (True,):
                return
        try:
            with self.db.transaction() as conn:
                for statement in word_totals.started_anew():
                    conn.execute(statement)
        except StoreCannotWrite as exc:
            _log.warning("the word log of %s was numbered by another cluster and cannot be started anew (%s): "
                         "each search counts its words; open the store once where it can write", redact(self.db.url),
                         exc.cause)
            for ranker in rankers:
                ranker.keeps = False

    @classmethod
    def open(cls, url: str) -> PostgresStore:
        db = PostgresDatabase(url)
        try:
            with db.connection() as conn:
                refuse_foreign([name for (name,) in conn.execute(OWN_TABLES)], redact(url))
                role = conn.execute("SELECT current_user").fetchone()
            try:
                return cls(db)
            except psycopg.errors.InsufficientPrivilege as exc:  # making or upgrading the schema, as another role
                who = role[0] if role else "this role"
                reason = scrub(exc.diag.message_primary or str(exc), url)
                raise ConfigError(f"--db: the role {who} may not make or change Notewell's tables in "
                                  f"{redact(url)} ({reason}); connect as the database's "
                                  "owner (the role that made the store), or have it grant this role what it "
                                  "needs (docs/operations.md, PostgreSQL)") from None
        except BaseException:
            db.close()
            raise

    @property
    def url(self) -> str:
        """The database URL without its password (fit to show)."""
        return redact(self.db.url)

    def upgrade(self) -> None:
        PostgresStore(self.db)  # its components migrate the database as they are made; this store's serve on

    def close(self) -> None:
        self.db.close()
