"""The totals bm25 needs of a PostgreSQL word index (store/postgres/word_rank.py), kept as rows come and go.

FTS5 keeps, inside each of its tables, how many rows it holds and how many tokens they have in all: bm25's
rarity of a word and a row's length against the average are read from them. A PostgreSQL table of tsvectors
has no such count, and counting the table on every search costs milliseconds per 100,000 rows. So
``word_totals`` keeps them for each indexed table, in 16 rows (slots) per table, by a trigger: each writer
adds its rows' changes to the slot of its server process (``pg_backend_pid()``), at its commit (a deferred
constraint trigger), so that concurrent writers rarely meet on one row, and a writer holds a slot's lock
only for the instant of its commit; the only lock it may wait for meanwhile is ``word_changes_kept``'s row, held
by another writer trimming the log (below), which waits for no slot (no deadlock). A search sums the 16 rows of
its table in its own statement, so the totals agree with the rows it sees. ``changes`` counts each slot's
writes: every ``TRIM_EVERY``-th trims the log.

The same trigger writes each change of a counted row's words to ``word_changes`` (the row's vectors, -1 as it
stops counting, +1 as it starts), under the writing transaction's id: a process that counted a phrase's rows
in one snapshot brings the count to a later snapshot by adding up the changes that one sees and the other did
not (word_rank.py), instead of counting the phrase's rows again (a count visits each matching row on the heap:
milliseconds for a common word over 100,000 memories). The log keeps the changes of the last ``KEPT_XIDS``
transaction ids: ``word_changes_kept.since`` says from which id on it is whole, and a count taken in a snapshot
older than that is counted again. The trigger trims it every ``TRIM_EVERY`` writes of its slot.

A load (import, migrate: store/postgres/tables.py) writes thousands of rows in one transaction, where one
row's update per row written would pile up row versions of the same slot: it turns the triggers off while it
loads and counts each table once at the end (``recounted``), when the log is whole only from the load on.
"""

from __future__ import annotations

from collections.abc import Mapping

SLOTS = 16
KEPT_XIDS = 1000  # the transaction ids whose changes the log keeps
TRIM_EVERY = 256  # writes of a slot between two trims of the log
TOTALLED: Mapping[str, tuple[str, ...]] = {
    "memories": ("deleted_at IS NULL", "superseded_by IS NULL"),  # live memories only, as FTS5 holds them
    "brain_session_words": (),
}
"""Each table whose totals are kept, with the conditions a row counts under."""
VECTORS: Mapping[str, tuple[str, ...]] = {"memories": ("words", "stems"), "brain_session_words": ("words",)}
"""Each totalled table's word vectors, which ``word_changes`` has a column of the same name for."""
LOG = (
    """
    CREATE TABLE word_changes (word_index TEXT NOT NULL, xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        delta SMALLINT NOT NULL, words TSVECTOR, stems TSVECTOR)
    """,
    "CREATE INDEX word_changes_since ON word_changes (word_index, xid)",
    "CREATE TABLE word_changes_kept (word_index TEXT PRIMARY KEY, since xid8 NOT NULL)",
)
"""The migration statements that make the log of changes (once, for every totalled table)."""


FUNCTIONS = ("notewell_word_count(tsvector)", *(f"{table}_word_totals_kept()" for table in TOTALLED))
"""The functions the store's migrations make (the word count, and each table's trigger's)."""


def _trigger(table: str) -> str:
    return f"{table}_word_totals_kept"


def suspended(table: str) -> str:
    """The statement that stops keeping ``table``'s totals until the transaction's ``recounted``."""
    return f"ALTER TABLE {table} DISABLE TRIGGER {_trigger(table)}"


def _whole_from_now(table: str) -> tuple[str, ...]:
    """The statements that say ``table``'s log of changes is whole only from after this transaction on."""
    return (
        f"DELETE FROM word_changes WHERE word_index = '{table}'",
        f"UPDATE word_changes_kept SET since = {_AFTER_THIS} WHERE word_index = '{table}'",
    )


_AFTER_THIS = "(pg_current_xact_id()::text::bigint + 1)::text::xid8"


RESTORED = """
RESET search_path;
DO $$ BEGIN
    IF to_regclass('word_changes_kept') IS NOT NULL THEN
        DELETE FROM word_changes;
        UPDATE word_changes_kept SET since = (pg_current_xact_id()::text::bigint + 1)::text::xid8;
    END IF;
END $$;
"""
"""What a restore runs after the backup's rows, in its transaction: the log starts anew (the backup's log rows,
and the start it names, are of the transaction ids of the cluster it was made on, which another cluster may
count past or not yet have reached). A backup made before the log has none: its migrations start one. (The
restore's script empties ``search_path``: the store's own comes back first.)"""


FOREIGN_LOG = """
    SELECT NOT pg_is_in_recovery() AND (
        EXISTS (SELECT 1 FROM word_changes_kept WHERE since > pg_snapshot_xmax(pg_current_snapshot()))
        OR EXISTS (SELECT 1 FROM word_changes WHERE xid >= pg_snapshot_xmax(pg_current_snapshot())))
"""
"""Whether the log names transaction ids this cluster has not reached: a dump restored by hand (pg_restore, not
``notewell restore``: RESTORED) from a cluster that had counted further. Its rows would read as this cluster's
later writes, added to the counts kept then: a store's open starts such a log anew (``started_anew``). (A
standby is left as it is: it cannot write, and its primary's open does it.)"""


def started_anew() -> tuple[str, ...]:
    """The statements that start every table's log anew, from after this transaction on."""
    return tuple(statement for table in TOTALLED for statement in _whole_from_now(table))


def _counted(table: str) -> str:
    live = " AND ".join(("TRUE", *TOTALLED[table]))
    return f"""
        UPDATE word_totals SET (live_rows, tokens) = (SELECT count(*), coalesce(sum(word_count), 0)
            FROM {table} WHERE {live}), changes = changes + 1 WHERE word_index = '{table}' AND slot = 0
        """


def recounted(table: str) -> tuple[str, ...]:
    """The statements that count ``table``'s totals again from its rows and keep them from then on."""
    return (
        f"UPDATE word_totals SET live_rows = 0, tokens = 0 WHERE word_index = '{table}'",
        _counted(table),
        *_whole_from_now(table),
        f"ALTER TABLE {table} ENABLE TRIGGER {_trigger(table)}",
    )


def _function(table: str) -> str:
    """The trigger's function: the slot's totals, and the log of changes (trimmed now and then)."""
    live = TOTALLED[table]
    vectors = VECTORS[table]
    old_live = " AND ".join(("TRUE", *(f"OLD.{c}" for c in live)))
    new_live = " AND ".join(("TRUE", *(f"NEW.{c}" for c in live)))
    same_words = " AND ".join(f"OLD.{v} IS NOT DISTINCT FROM NEW.{v}" for v in vectors)
    columns = ", ".join(vectors)
    return f"""
        CREATE OR REPLACE FUNCTION {_trigger(table)}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            rows_added bigint := 0;
            tokens_added bigint := 0;
            counted boolean := false;
            written bigint;
            horizon xid8;
        BEGIN
            IF TG_OP = 'UPDATE' AND ({old_live}) = ({new_live}) AND {same_words} THEN
                RETURN NULL;  -- neither its words nor whether it counts changed
            END IF;
            IF TG_OP <> 'INSERT' AND {old_live} THEN
                rows_added := rows_added - 1;
                tokens_added := tokens_added - OLD.word_count;
                counted := true;
                INSERT INTO word_changes (word_index, delta, {columns})
                    VALUES ('{table}', -1, {", ".join(f"OLD.{v}" for v in vectors)});
            END IF;
            IF TG_OP <> 'DELETE' AND {new_live} THEN
                rows_added := rows_added + 1;
                tokens_added := tokens_added + NEW.word_count;
                counted := true;
                INSERT INTO word_changes (word_index, delta, {columns})
                    VALUES ('{table}', 1, {", ".join(f"NEW.{v}" for v in vectors)});
            END IF;
            IF counted THEN
                UPDATE word_totals SET live_rows = live_rows + rows_added, tokens = tokens + tokens_added,
                    changes = changes + 1 WHERE word_index = '{table}' AND slot = mod(pg_backend_pid(), {SLOTS})
                    RETURNING changes INTO written;
                IF mod(written, {TRIM_EVERY}) = 0 THEN
                    horizon := greatest(pg_snapshot_xmin(pg_current_snapshot())::text::bigint - {KEPT_XIDS}, 1)
                        ::text::xid8;
                    UPDATE word_changes_kept SET since = horizon WHERE word_index = '{table}' AND since < horizon;
                    DELETE FROM word_changes WHERE word_index = '{table}' AND xid < horizon;
                END IF;
            END IF;
            RETURN NULL;
        END
        $$
        """


def kept(table: str) -> tuple[str, ...]:
    """The migration statements that start the totals of ``table`` (its rows whose ``TOTALLED`` conditions all
    hold, and their ``word_count``) from what it holds now, and keep them from then on. Its log of changes is
    started by ``logged``, a later step (for a store made before the log, it replaces the function made here)."""
    function = _trigger(table)
    return (
        f"INSERT INTO word_totals (word_index, slot, live_rows, tokens, changes)"
        f" SELECT '{table}', slot, 0, 0, 0 FROM generate_series(0, {SLOTS - 1}) AS slot",
        _counted(table),
        _function(table),
        f"""
        CREATE CONSTRAINT TRIGGER {function} AFTER INSERT OR DELETE OR UPDATE ON {table}
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {function}()
        """,
    )


def logged(table: str) -> tuple[str, ...]:
    """The migration statements that start ``table``'s log of changes (after ``LOG`` and ``kept``)."""
    return (
        f"INSERT INTO word_changes_kept (word_index, since) VALUES ('{table}', {_AFTER_THIS})",
        _function(table),
    )
