"""Brain rows on SQLite: the shared repository (store/shared/brain.py) over this schema and its index.

A session's searchable text (its prompt, each event, its outcome and learnings) goes into the FTS5
table ``brain_session_words`` one piece per row, tagged with the session and its user, so logging an
event only appends; a search groups the matching pieces by session and keeps each session's best bm25.
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.records.brain import SessionHit
from notewell.store.brain_rows import SESSION_COLUMNS, session_from_row
from notewell.store.shared.brain import SqlBrain, session_scope
from notewell.store.shared.migrations import Migration
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.memories import SqliteMemories, tolerant_expression

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE brain_projects (
            id TEXT PRIMARY KEY,
            owner_user_id TEXT NOT NULL,
            home TEXT NOT NULL,
            slug TEXT NOT NULL,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL,
            framework TEXT,
            language TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (owner_user_id, name_key),
            UNIQUE (home, slug)
        )
        """,
        """
        CREATE TABLE brain_knowledge (
            ref TEXT PRIMARY KEY,
            brain_project TEXT NOT NULL,
            project TEXT NOT NULL,
            owner_user_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('reflex', 'recipe', 'heuristic', 'principle', 'anti_principle',
                                               'action_item')),
            trigger_text TEXT NOT NULL,
            rule_text TEXT NOT NULL,
            rationale TEXT NOT NULL,
            source TEXT NOT NULL,
            confidence REAL NOT NULL,
            rule_key TEXT NOT NULL,
            injected_count INTEGER NOT NULL DEFAULT 0,
            used_count INTEGER NOT NULL DEFAULT 0,
            success_count INTEGER NOT NULL DEFAULT 0,
            failure_count INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL,
            last_used_at TEXT,
            retired_at TEXT
        )
        """,
        "CREATE INDEX brain_knowledge_project ON brain_knowledge (brain_project, kind, confidence)",
        "CREATE INDEX brain_knowledge_rule ON brain_knowledge (owner_user_id, brain_project, rule_key)",
        """
        CREATE TABLE brain_sessions (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            token_id TEXT,
            brain_project TEXT NOT NULL,
            client_type TEXT NOT NULL,
            prompt TEXT NOT NULL,
            framework TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            success INTEGER,
            user_feedback TEXT,
            sqs REAL,
            summary TEXT,
            event_count INTEGER NOT NULL DEFAULT 0
        )
        """,
        "CREATE INDEX brain_sessions_user ON brain_sessions (user_id, seq)",
        """
        CREATE TABLE brain_events (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            payload TEXT NOT NULL,
            at TEXT NOT NULL
        )
        """,
        "CREATE INDEX brain_events_session ON brain_events (session_id, seq)",
        """
        CREATE TABLE brain_applications (
            session_id TEXT NOT NULL,
            knowledge_ref TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('injected', 'used')),
            at TEXT NOT NULL,
            PRIMARY KEY (session_id, knowledge_ref, role)
        )
        """,
        """
        CREATE VIRTUAL TABLE brain_session_words USING fts5 (body, session_seq UNINDEXED, user_id UNINDEXED,
            tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3 4 5 6')
        """,
    ),
]


class SqliteBrain(SqlBrain):
    def __init__(self, db: SqliteDatabase, memories: SqliteMemories) -> None:
        self.db = db
        super().__init__(SqliteDialect(db), memories, MIGRATIONS)

    def index(self, seq: int, user_id: str, texts: Sequence[str]) -> None:
        with self.db.transaction() as conn:
            conn.executemany("INSERT INTO brain_session_words (body, session_seq, user_id) VALUES (?, ?, ?)",
                             [(t, seq, user_id) for t in texts if t.strip()])

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
