"""Brain rows on SQLite: the shared repository and tables (store/shared/brain*.py) with its session index.

A session's searchable text (its prompt, each event, its outcome and learnings) goes into the FTS5
table ``brain_session_words`` one piece per row, tagged with the session and its user, so logging an
event only appends; a search groups the matching pieces by session and keeps each session's best bm25. A
piece is kept as the index reads it: through word_breaks.word_text (each Chinese, Japanese or Korean
character a word).
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.records.brain import SessionHit
from notewell.store.brain_rows import SESSION_COLUMNS, session_from_row
from notewell.store.shared.brain import SqlBrain, session_scope
from notewell.store.shared.migrations import Migration
from notewell.store.sqlite import word_breaks
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.memories import SqliteMemories, tolerant_expression
from notewell.word_breaks import word_text

SESSION_INDEX: Migration = (
    """
    CREATE VIRTUAL TABLE brain_session_words USING fts5 (body, session_seq UNINDEXED, user_id UNINDEXED,
        tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3 4 5 6')
    """,
)


class SqliteBrain(SqlBrain):
    def __init__(self, db: SqliteDatabase, memories: SqliteMemories) -> None:
        self.db = db
        super().__init__(SqliteDialect(db), memories, SESSION_INDEX)
        self.dialect.migrate("word_breaks", word_breaks.MIGRATIONS)

    def index(self, seq: int, user_id: str, texts: Sequence[str]) -> None:
        with self.db.transaction() as conn:
            conn.executemany("INSERT INTO brain_session_words (body, session_seq, user_id) VALUES (?, ?, ?)",
                             [(word_text(t), seq, user_id) for t in texts if t.strip()])

    def search_sessions(self, user_id: str, brain_projects: Sequence[str] | None, terms: Sequence[str],
                        since: str | None, limit: int) -> list[SessionHit]:
        if not terms or (brain_projects is not None and not brain_projects):
            return []
        where, params = session_scope(user_id, brain_projects, since)
        rows = self.db.conn.execute(
            "WITH pieces AS MATERIALIZED (SELECT session_seq, bm25(brain_session_words) AS score"
            " FROM brain_session_words WHERE brain_session_words MATCH ? AND user_id = ?)"
            f" SELECT {SESSION_COLUMNS}, w.score FROM (SELECT session_seq, min(score) AS score FROM pieces"
            " GROUP BY session_seq) w"
            f" JOIN brain_sessions s ON s.seq = w.session_seq WHERE {where} ORDER BY w.score, s.seq DESC LIMIT ?",
            [tolerant_expression(terms), user_id, *params, limit]).fetchall()
        return [SessionHit(session_from_row(r[:-1]), max(-float(r[-1]), 1e-9)) for r in rows]
