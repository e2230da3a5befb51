"""The totals bm25 needs of a PostgreSQL word index (store/postgres/word_rank.py), kept as rows come and go.

FTS5 keeps, inside each of its tables, how many rows it holds and how many tokens they have in all: bm25's
rarity of a word and a row's length against the average are read from them. A PostgreSQL table of tsvectors
has no such count, and counting the table on every search costs milliseconds per 100,000 rows. So
``word_totals`` keeps them for each indexed table, in 16 rows (slots) per table, by a trigger: each writer
adds its rows' changes to the slot of its server process (``pg_backend_pid()``), at its commit (a deferred
constraint trigger), so that concurrent writers rarely meet on one row, and a writer holds a slot's lock
only for the instant of its commit, never while waiting for another lock (no deadlock). A search sums the
16 rows of its table in its own statement, so the totals agree with the rows it sees. ``changes`` counts every
write that touched a counted row: its sum only grows, so while it stays the same no counted row has changed,
and a process may keep what it counted of the index (word_rank.py: each phrase's rows).

A load (import, migrate: store/postgres/tables.py) writes thousands of rows in one transaction, where one
row's update per row written would pile up row versions of the same slot: it turns the triggers off while it
loads and counts each table once at the end (``recounted``).
"""

from __future__ import annotations

from collections.abc import Mapping

SLOTS = 16
TOTALLED: Mapping[str, tuple[str, ...]] = {
    "memories": ("deleted_at IS NULL", "superseded_by IS NULL"),  # live memories only, as FTS5 holds them
    "brain_session_words": (),
}
"""Each table whose totals are kept, with the conditions a row counts under."""


FUNCTIONS = ("notewell_word_count(tsvector)", *(f"{table}_word_totals_kept()" for table in TOTALLED))
"""The functions the store's migrations make (the word count, and each table's trigger's)."""


def _trigger(table: str) -> str:
    return f"{table}_word_totals_kept"


def suspended(table: str) -> str:
    """The statement that stops keeping ``table``'s totals until the transaction's ``recounted``."""
    return f"ALTER TABLE {table} DISABLE TRIGGER {_trigger(table)}"


def recounted(table: str) -> tuple[str, ...]:
    """The statements that count ``table``'s totals again from its rows and keep them from then on."""
    live = " AND ".join(("TRUE", *TOTALLED[table]))
    return (
        f"UPDATE word_totals SET live_rows = 0, tokens = 0 WHERE word_index = '{table}'",
        f"""
        UPDATE word_totals SET (live_rows, tokens) = (SELECT count(*), coalesce(sum(word_count), 0)
            FROM {table} WHERE {live}), changes = changes + 1 WHERE word_index = '{table}' AND slot = 0
        """,
        f"ALTER TABLE {table} ENABLE TRIGGER {_trigger(table)}",
    )


def kept(table: str) -> tuple[str, ...]:
    """The migration statements that start the totals of ``table`` (its rows whose ``TOTALLED`` conditions all
    hold, and their ``word_count``) from what it holds now, and keep them from then on."""
    live = TOTALLED[table]
    function = _trigger(table)
    old_live = " AND ".join(("TRUE", *(f"OLD.{c}" for c in live)))
    new_live = " AND ".join(("TRUE", *(f"NEW.{c}" for c in live)))
    return (
        f"INSERT INTO word_totals (word_index, slot, live_rows, tokens, changes)"
        f" SELECT '{table}', slot, 0, 0, 0 FROM generate_series(0, {SLOTS - 1}) AS slot",
        recounted(table)[1],
        f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            rows_added bigint := 0;
            tokens_added bigint := 0;
            counted boolean := false;
        BEGIN
            IF TG_OP <> 'INSERT' AND {old_live} THEN
                rows_added := rows_added - 1;
                tokens_added := tokens_added - OLD.word_count;
                counted := true;
            END IF;
            IF TG_OP <> 'DELETE' AND {new_live} THEN
                rows_added := rows_added + 1;
                tokens_added := tokens_added + NEW.word_count;
                counted := true;
            END IF;
            IF counted THEN
                UPDATE word_totals SET live_rows = live_rows + rows_added, tokens = tokens + tokens_added,
                    changes = changes + 1 WHERE word_index = '{table}' AND slot = mod(pg_backend_pid(), {SLOTS});
            END IF;
            RETURN NULL;
        END
        $$
        """,
        f"""
        CREATE CONSTRAINT TRIGGER {function} AFTER INSERT OR DELETE OR UPDATE ON {table}
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {function}()
        """,
    )
