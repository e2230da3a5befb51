"""Brain rows on SQLite: personal projects, knowledge beside its memories, sessions and their index.

A session's searchable text (its prompt, each event, its outcome and learnings) goes into the FTS5
table ``brain_session_words`` one piece per row, tagged with the session and its user, so logging an
event only appends; a search groups the matching pieces by session and keeps each session's best bm25.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from notewell.errors import Conflict
from notewell.records.brain import (
    BrainProjectRecord,
    EventRecord,
    KnowledgeFilter,
    KnowledgeInput,
    KnowledgeRecord,
    SessionClose,
    SessionHit,
    SessionRecord,
    payload_json,
)
from notewell.records.memories import MemoryInput
from notewell.store.brain_rows import (
    EVENT_COLUMNS,
    KNOWLEDGE_COLUMNS,
    KNOWLEDGE_FROM,
    PROJECT_COLUMNS,
    SESSION_COLUMNS,
    event_from_row,
    knowledge_from_row,
    project_from_row,
    session_from_row,
    tag_pattern,
)
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.memories import SqliteMemories, tolerant_expression

MIGRATIONS = [
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
    );
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
    );
    CREATE INDEX brain_knowledge_project ON brain_knowledge (brain_project, kind, confidence);
    CREATE INDEX brain_knowledge_rule ON brain_knowledge (owner_user_id, brain_project, rule_key);
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
    );
    CREATE INDEX brain_sessions_user ON brain_sessions (user_id, seq);
    CREATE TABLE brain_events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE INDEX brain_events_session ON brain_events (session_id, seq);
    CREATE TABLE brain_applications (
        session_id TEXT NOT NULL,
        knowledge_ref TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('injected', 'used')),
        at TEXT NOT NULL,
        PRIMARY KEY (session_id, knowledge_ref, role)
    );
    CREATE VIRTUAL TABLE brain_session_words USING fts5 (body, session_seq UNINDEXED, user_id UNINDEXED,
        tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3 4 5 6')
    """,
]


def _in(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class SqliteBrain:
    def __init__(self, db: SqliteDatabase, memories: SqliteMemories) -> None:
        self.db = db
        self.memories = memories
        db.migrate("brain", MIGRATIONS)

    # --- personal projects ----------------------------------------------------------------------------

    def personal_projects(self, owner_user_id: str) -> list[BrainProjectRecord]:
        rows = self.db.conn.execute(f"SELECT {PROJECT_COLUMNS} FROM brain_projects p WHERE p.owner_user_id = ?"
                                    " ORDER BY p.created_at, p.id", (owner_user_id,)).fetchall()
        return [project_from_row(r) for r in rows]

    def project(self, project_id: str) -> BrainProjectRecord | None:
        row = self.db.conn.execute(f"SELECT {PROJECT_COLUMNS} FROM brain_projects p WHERE p.id = ?",
                                   (project_id,)).fetchone()
        return project_from_row(row) if row else None

    def project_by_name(self, owner_user_id: str, name_key: str) -> BrainProjectRecord | None:
        row = self.db.conn.execute(f"SELECT {PROJECT_COLUMNS} FROM brain_projects p WHERE p.owner_user_id = ?"
                                   " AND p.name_key = ?", (owner_user_id, name_key)).fetchone()
        return project_from_row(row) if row else None

    def add_project(self, project: BrainProjectRecord) -> tuple[BrainProjectRecord, bool]:
        with self.db.transaction() as conn:
            found = self.project_by_name(project.owner_user_id, project.name_key)
            if found is not None:
                return found, False
            try:
                conn.execute("INSERT INTO brain_projects (id, owner_user_id, home, slug, name, name_key, framework,"
                             " language, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (project.id, project.owner_user_id, project.home, project.slug, project.name,
                              project.name_key, project.framework, project.language, project.created_at))
            except sqlite3.IntegrityError:
                raise Conflict(f"slug {project.slug} is taken in {project.home}") from None
            return project, True

    def project_slugs(self, home: str) -> set[str]:
        return {r[0] for r in self.db.conn.execute("SELECT slug FROM brain_projects WHERE home = ?", (home,))}

    # --- knowledge ------------------------------------------------------------------------------------

    def add_knowledge(self, memory: MemoryInput, knowledge: KnowledgeInput,
                      supersedes: str | None = None) -> tuple[KnowledgeRecord, bool]:
        with self.db.transaction() as conn:
            record, created = self.memories.add(memory, supersedes=supersedes)
            exists = conn.execute("SELECT 1 FROM brain_knowledge WHERE ref = ?", (record.ref,)).fetchone()
            if not exists:
                k = knowledge
                conn.execute(
                    "INSERT INTO brain_knowledge (ref, brain_project, project, owner_user_id, kind, trigger_text,"
                    " rule_text, rationale, source, confidence, rule_key, created)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.ref, k.brain_project, record.project, k.owner_user_id, k.kind, k.trigger, k.rule,
                     k.rationale, k.source, k.confidence, k.rule_key, k.created))
            if created and supersedes is not None:
                conn.execute("UPDATE brain_knowledge SET retired_at = ? WHERE ref = ? AND retired_at IS NULL",
                             (knowledge.created, supersedes))
            row = conn.execute(f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.ref = ?",
                               (record.ref,)).fetchone()
            return knowledge_from_row(row), created

    def knowledge(self, refs: Sequence[str]) -> dict[str, KnowledgeRecord]:
        if not refs:
            return {}
        rows = self.db.conn.execute(f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.ref IN ({_in(refs)})",
                                    list(refs)).fetchall()
        return {r[0]: knowledge_from_row(r) for r in rows}

    def find_rule(self, owner_user_id: str, brain_project: str, rule_key: str) -> KnowledgeRecord | None:
        row = self.db.conn.execute(
            f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.owner_user_id = ? AND k.brain_project = ?"
            " AND k.rule_key = ? AND k.retired_at IS NULL", (owner_user_id, brain_project, rule_key)).fetchone()
        return knowledge_from_row(row) if row else None

    def list_knowledge(self, query: KnowledgeFilter) -> list[KnowledgeRecord]:
        if not query.brain_projects:
            return []
        where = [f"k.brain_project IN ({_in(query.brain_projects)})", "k.retired_at IS NULL"]
        params: list[Any] = list(query.brain_projects)
        if query.kinds:
            where.append(f"k.kind IN ({_in(query.kinds)})")
            params += list(query.kinds)
        else:
            where.append("k.kind <> 'action_item'")
        if query.owner_user_id is not None:
            where.append("k.owner_user_id = ?")
            params.append(query.owner_user_id)
        if query.min_successes:
            where.append("k.success_count >= ?")
            params.append(query.min_successes)
        order = "k.confidence DESC, k.created DESC" if query.order == "confidence" else "k.created DESC"
        rows = self.db.conn.execute(f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE {' AND '.join(where)}"
                                    f" ORDER BY {order}, k.ref LIMIT ?", [*params, query.limit]).fetchall()
        return [knowledge_from_row(r) for r in rows]

    def open_action_items(self, brain_project: str, assignee_tag: str, limit: int) -> list[KnowledgeRecord]:
        pattern = tag_pattern(assignee_tag)
        rows = self.db.conn.execute(
            f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.brain_project = ? AND k.kind = 'action_item'"
            " AND k.retired_at IS NULL AND m.tags LIKE ? ESCAPE '\\'"
            " ORDER BY (m.tags LIKE '%\"blocker\"%') DESC, k.created, k.ref LIMIT ?",
            (brain_project, pattern, limit)).fetchall()
        return [knowledge_from_row(r) for r in rows]

    def retire(self, refs: Sequence[str], by_user_id: str, reason: str, at: str) -> int:
        done = 0
        with self.db.transaction() as conn:
            for ref in dict.fromkeys(refs):
                cur = conn.execute("UPDATE brain_knowledge SET retired_at = ? WHERE ref = ? AND retired_at IS NULL",
                                   (at, ref))
                if cur.rowcount:
                    self.memories.forget(ref, by_user_id, reason, at)
                    done += 1
        return done

    def record_use(self, ref: str, success: bool, confidence: float, at: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE brain_knowledge SET used_count = used_count + 1, success_count = success_count + ?,"
                         " failure_count = failure_count + ?, confidence = ?, last_used_at = ? WHERE ref = ?",
                         (int(success), int(not success), confidence, at, ref))

    # --- sessions -------------------------------------------------------------------------------------

    def _index(self, conn: sqlite3.Connection, seq: int, user_id: str, texts: Sequence[str]) -> None:
        conn.executemany("INSERT INTO brain_session_words (body, session_seq, user_id) VALUES (?, ?, ?)",
                         [(t, seq, user_id) for t in texts if t.strip()])

    def add_session(self, session: SessionRecord, injected: Sequence[str] = ()) -> None:
        s = session
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO brain_sessions (id, user_id, token_id, brain_project, client_type, prompt, framework,"
                " started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (s.id, s.user_id, s.token_id, s.brain_project, s.client_type, s.prompt, s.framework, s.started_at))
            self._index(conn, int(cur.lastrowid or 0), s.user_id, [s.prompt])
            if injected:
                self.record_applications(s.id, injected, "injected", s.started_at)

    def session(self, session_id: str) -> SessionRecord | None:
        row = self.db.conn.execute(f"SELECT {SESSION_COLUMNS} FROM brain_sessions s WHERE s.id = ?",
                                   (session_id,)).fetchone()
        return session_from_row(row) if row else None

    def add_event(self, event: EventRecord, text: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO brain_events (id, session_id, event_type, payload, at) VALUES (?, ?, ?, ?, ?)",
                         (event.id, event.session_id, event.event_type, payload_json(event.payload), event.at))
            row = conn.execute("UPDATE brain_sessions SET event_count = event_count + 1 WHERE id = ?"
                               " RETURNING seq, user_id", (event.session_id,)).fetchone()
            self._index(conn, row[0], row[1], [text])

    def events(self, session_id: str, limit: int = 100) -> list[EventRecord]:
        rows = self.db.conn.execute(f"SELECT {EVENT_COLUMNS} FROM brain_events e WHERE e.session_id = ?"
                                    " ORDER BY e.seq LIMIT ?", (session_id, limit)).fetchall()
        return [event_from_row(r) for r in rows]

    def close_session(self, session_id: str, close: SessionClose, texts: Sequence[str]) -> bool:
        with self.db.transaction() as conn:
            row = conn.execute(
                "UPDATE brain_sessions SET ended_at = ?, success = ?, user_feedback = ?, sqs = ?, summary = ?"
                " WHERE id = ? AND ended_at IS NULL RETURNING seq, user_id",
                (close.ended_at, int(close.success), close.user_feedback, close.sqs, close.summary,
                 session_id)).fetchone()
            if row is None:
                return False
            self._index(conn, row[0], row[1], texts)
            return True

    def record_applications(self, session_id: str, refs: Sequence[str], role: str, at: str) -> int:
        added = 0
        with self.db.transaction() as conn:
            for ref in dict.fromkeys(refs):
                cur = conn.execute("INSERT INTO brain_applications (session_id, knowledge_ref, role, at)"
                                   " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", (session_id, ref, role, at))
                if cur.rowcount and role == "injected":
                    conn.execute("UPDATE brain_knowledge SET injected_count = injected_count + 1 WHERE ref = ?",
                                 (ref,))
                added += cur.rowcount
        return added

    def applications(self, session_id: str, role: str) -> list[str]:
        return [r[0] for r in self.db.conn.execute(
            "SELECT knowledge_ref FROM brain_applications WHERE session_id = ? AND role = ? ORDER BY at, knowledge_ref",
            (session_id, role))]

    def recent_sessions(self, user_id: str, brain_projects: Sequence[str] | None, limit: int) -> list[SessionRecord]:
        where, params = _session_scope(user_id, brain_projects)
        rows = self.db.conn.execute(f"SELECT {SESSION_COLUMNS} FROM brain_sessions s WHERE {where}"
                                    " ORDER BY s.seq DESC LIMIT ?", [*params, limit]).fetchall()
        return [session_from_row(r) for r in rows]

    def search_sessions(self, user_id: str, brain_projects: Sequence[str] | None, terms: Sequence[str],
                        since: str | None, limit: int) -> list[SessionHit]:
        if not terms or (brain_projects is not None and not brain_projects):
            return []
        where, params = _session_scope(user_id, brain_projects)
        if since is not None:
            where += " AND s.started_at >= ?"
            params.append(since)
        rows = self.db.conn.execute(
            "WITH pieces AS MATERIALIZED (SELECT session_seq, bm25(brain_session_words) AS score"
            " FROM brain_session_words WHERE brain_session_words MATCH ? AND user_id = ?)"
            f" SELECT {SESSION_COLUMNS}, w.score FROM (SELECT session_seq, min(score) AS score FROM pieces"
            " GROUP BY session_seq) w"
            f" JOIN brain_sessions s ON s.seq = w.session_seq WHERE {where} ORDER BY w.score, s.seq DESC LIMIT ?",
            [tolerant_expression(terms), user_id, *params, limit]).fetchall()
        return [SessionHit(session_from_row(r[:-1]), max(-float(r[-1]), 1e-9)) for r in rows]


def _session_scope(user_id: str, brain_projects: Sequence[str] | None) -> tuple[str, list[Any]]:
    where = "s.user_id = ?"
    params: list[Any] = [user_id]
    if brain_projects is not None:
        where += f" AND s.brain_project IN ({_in(brain_projects) or 'NULL'})"
        params += list(brain_projects)
    return where, params

