"""The live memories' stems in a narrow table of their own, kept by a trigger, for the tolerant search's walk.

A tolerant search ranks the newest ``RANK_WINDOW`` memories its words match. When they match a few percent of the
memories (any of six common words' prefixes, say), PostgreSQL finds them by walking the memories backwards by id
and testing each row, ~25,000 rows for 1,000 matches at 100,000 memories. Each row of ``memories`` is wide (the
text, both word vectors: ~1.2 KB), so the walk reads about a page a row; ``live_memory_stems`` holds only what the
walk tests and returns (the stems, the length, and the columns a search's scope and narrowing read), for live
memories only, about three times as many rows a page: the same walk took 17-28 ms there against 26-36 ms on
``memories`` (docs/performance.md, "The tolerant search's own table").

The trigger runs in the writing statement (not at the commit, as word_totals' does), so a search later in the
same transaction sees the write. A load (import, migrate: tables.py) turns it off and makes the table equal to the
live memories once at the end (``refilled``: filled at once into an empty store, by the rows that differ into one
in use), as it counts the word totals; so does ``notewell repair`` (health.py), and ``notewell doctor`` says
when they differ (``compared``). The strict search (all words,
whole) keeps reading ``memories``: its matches are few, and its word index finds them at once.
"""

from __future__ import annotations

import time

import psycopg
from psycopg import errors

from notewell.records.integrity import DerivedRows

TABLE = "live_memory_stems"
COLUMNS = ("id", "project", "path", "memory_type", "private_to", "expires_at", "author_user_id", "author_token_id",
           "created", "tags", "word_count", "stems")
"""What a tolerant search reads of a memory (search_conditions' and narrowing_sql's columns, its length, its stems),
the stems last: PostgreSQL reads a row's columns in order, and each test of a walk reads them all."""
LIVE = "deleted_at IS NULL AND superseded_by IS NULL"
_TRIGGER = f"{TABLE}_kept"
FUNCTION = f"{_TRIGGER}()"
"""The trigger's function, which the migration makes (new_store.py drops it with the tables)."""

_COLUMN_LIST = ", ".join(COLUMNS)
_FILL = f"INSERT INTO {TABLE} ({_COLUMN_LIST}) SELECT {_COLUMN_LIST} FROM memories WHERE {LIVE}"
_INDEX = f"CREATE INDEX {TABLE}_stems ON {TABLE} USING gin (stems) WITH (gin_pending_list_limit = 64)"
"""The stems' word index, built after a fill. GIN's pending list of writes not yet merged is kept to 64 kB (its
least; the default is 4 MB): every search of the index reads the whole list, and a list of 140 pages slowed recall
by up to 5 ms, while without a list each write added its words to the index itself, a remember's p95 25-50% longer
(docs/performance.md)."""


def _function() -> str:
    new = ", ".join(f"NEW.{c}" for c in COLUMNS)
    old = ", ".join(f"OLD.{c}" for c in COLUMNS)
    updated = ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS if c != "id")
    return f"""
        CREATE OR REPLACE FUNCTION {FUNCTION} RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND (OLD.deleted_at IS NULL AND OLD.superseded_by IS NULL)
                    = (NEW.deleted_at IS NULL AND NEW.superseded_by IS NULL)
                    AND ROW({old}) IS NOT DISTINCT FROM ROW({new}) THEN
                RETURN NULL;  -- nothing the table holds changed (its text, its updated time, ...)
            END IF;
            IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL AND NEW.superseded_by IS NULL THEN
                INSERT INTO {TABLE} ({_COLUMN_LIST}) VALUES ({new})
                    ON CONFLICT (id) DO UPDATE SET {updated};
            ELSIF TG_OP <> 'INSERT' THEN
                DELETE FROM {TABLE} WHERE id = OLD.id;
            END IF;
            RETURN NULL;
        END
        $$
        """


MIGRATION = (
    # The memories' writers held off from the fill to the trigger (the lock CREATE TRIGGER takes, readers pass): a
    # write committed between the two (an older server's, still running through an upgrade) would be in neither.
    "LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE",
    f"""
    CREATE TABLE {TABLE} (
        id BIGINT PRIMARY KEY,
        project TEXT COLLATE "C" NOT NULL,
        path TEXT COLLATE "C" NOT NULL,
        memory_type TEXT NOT NULL,
        private_to TEXT,
        expires_at TEXT COLLATE "C",
        author_user_id TEXT NOT NULL,
        author_token_id TEXT,
        created TEXT COLLATE "C" NOT NULL,
        tags TEXT NOT NULL,
        word_count INTEGER NOT NULL,
        stems TSVECTOR NOT NULL
    )
    """,
    _FILL,
    _INDEX,
    f"ANALYZE {TABLE}",  # the planner's statistics now: a search's plan depends on them
    _function(),
    f"CREATE TRIGGER {_TRIGGER} AFTER INSERT OR DELETE OR UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION {FUNCTION}",
)
"""The migration step that makes the table from the live memories and keeps it from then on."""


def suspended() -> str:
    """The statement that stops keeping the table until the transaction's ``refilled``."""
    return f"ALTER TABLE memories DISABLE TRIGGER {_TRIGGER}"


_SAME_ROW = " AND ".join(("TRUE", *(f"m.{c} IS NOT DISTINCT FROM s.{c}" for c in COLUMNS if c != "id")))
_SYNCED = f"""
    DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM {TABLE}) THEN
            DROP INDEX IF EXISTS {TABLE}_stems;
            {_FILL};
            {_INDEX};
        ELSE
            DELETE FROM {TABLE} s WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = s.id
                AND m.deleted_at IS NULL AND m.superseded_by IS NULL AND {_SAME_ROW});
            INSERT INTO {TABLE} ({_COLUMN_LIST}) SELECT {", ".join(f"m.{c}" for c in COLUMNS)} FROM memories m
                WHERE m.deleted_at IS NULL AND m.superseded_by IS NULL
                AND NOT EXISTS (SELECT 1 FROM {TABLE} s WHERE s.id = m.id);
        END IF;
    END $$
    """
"""The table made equal to the live memories: filled at once, its index built after, when empty (a load into an
empty store); otherwise only the rows that differ deleted and written again, the index kept, so that the searches
of a server running meanwhile (an ``import --merge``, a repair) never wait for an index being built."""


def refilled() -> tuple[str, ...]:
    """The statements that make the table equal to the live memories again and keep it from then on."""
    return (_SYNCED, f"ANALYZE {TABLE}", f"ALTER TABLE memories ENABLE TRIGGER {_TRIGGER}")


COMPARED_BATCH = 5_000
"""The memories whose rows one statement of ``compared`` compares with the table's (a range of ids)."""
_LAST_ID = 2**63 - 1
_COUNTED = f"SELECT (SELECT count(*) FROM memories WHERE {LIVE}), (SELECT count(*) FROM {TABLE})"
_KEPT = ("SELECT tgenabled IN ('O', 'A') FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND tgname = %s"
         " AND NOT tgisinternal")
_BATCH_END = "SELECT max(id) FROM (SELECT id FROM memories WHERE id > %s ORDER BY id LIMIT %s) batch"
_DIFFERING = f"""
    SELECT count(*) FROM (SELECT {_COLUMN_LIST} FROM memories WHERE id > %(after)s AND id <= %(last)s AND {LIVE}) m
    FULL JOIN (SELECT {_COLUMN_LIST} FROM {TABLE} WHERE id > %(after)s AND id <= %(last)s) s ON s.id = m.id
    WHERE m.id IS NULL OR s.id IS NULL OR NOT ({_SAME_ROW})
    """
"""The rows of one range of ids that differ: a live memory the table lacks, a row of a memory no longer live (or
gone), a row whose columns are not the memory's."""


def compared(conn: psycopg.Connection, budget_s: float | None) -> DerivedRows | None:
    """The table against the live memories, in one snapshot (a read-only transaction: a server writing meanwhile
    changes both in one statement, never one alone): whether the trigger is on, the two counts, then the rows
    compared a range of ``COMPARED_BATCH`` memories' ids at a time (each range read by the primary keys), within
    ``budget_s`` in all (None: no limit; a statement running past what is left is cancelled, and what was found
    before it stands). None when the store has no such table (one an older Notewell made, not migrated: a store
    refusing writes)."""
    deadline = None if budget_s is None else time.monotonic() + budget_s
    kept, expected, held, differing, whole = False, None, None, 0, False

    def within() -> bool:
        """Whether time is left; if so, the next statement is given what is left and no more."""
        if deadline is None:
            return True
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            return False
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(left_ms),))
        return True

    try:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            if conn.execute("SELECT to_regclass(%s) IS NULL", (TABLE,)).fetchone() == (True,):
                return None
            trigger = conn.execute(_KEPT, (_TRIGGER,)).fetchone()
            kept = trigger is not None and bool(trigger[0])
            if within():
                counted = conn.execute(_COUNTED).fetchone()
                assert counted is not None
                expected, held = int(counted[0]), int(counted[1])
            after = -_LAST_ID - 1
            while within():
                end = conn.execute(_BATCH_END, (after, COMPARED_BATCH)).fetchone()
                last = _LAST_ID if end is None or end[0] is None else int(end[0])
                if not within():
                    break
                found = conn.execute(_DIFFERING, {"after": after, "last": last}).fetchone()
                differing += int(found[0]) if found is not None else 0
                if last == _LAST_ID:
                    whole = True
                    break
                after = last
    except errors.QueryCanceled:  # the budget ran out in a statement
        pass
    return DerivedRows(expected, held, differing, whole, kept)
