"""Brain rows in SQL both backends run: personal projects, knowledge beside its memories, sessions.

The tables are written once too (brain_schema.py); each backend adds what really differs: how a session's
text is indexed and searched (FTS5 on SQLite, tsvector on PostgreSQL), and on PostgreSQL recording
applications in one round trip.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from notewell.errors import Conflict
from notewell.records.brain import (
    MEETING_SOURCE,
    BrainProjectRecord,
    EventRecord,
    HealthCounts,
    KnowledgeFilter,
    KnowledgeInput,
    KnowledgeRecord,
    NoteItemMove,
    NoteItemRecord,
    SessionClose,
    SessionHit,
    SessionRecord,
    payload_json,
)
from notewell.records.identity import HOME_PREFIX
from notewell.records.jobs import NewJob
from notewell.records.memories import MemoryInput
from notewell.store.base import MemoryRepository
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
from notewell.store.shared.autoskill import ProposalRows
from notewell.store.shared.brain_health import health_counts
from notewell.store.shared.brain_schema import brain_migrations
from notewell.store.shared.dialect import Dialect, marks
from notewell.store.shared.evolution import EvolutionRows
from notewell.store.shared.jobs import insert_job
from notewell.store.shared.kea_funnel import FunnelRows
from notewell.store.shared.meaning import QUEUE_ITEM
from notewell.store.shared.migrations import Migration
from notewell.store.vector_search import Nearest, nearest_rows


class SqlBrain(EvolutionRows, ProposalRows, FunnelRows, ABC):
    """The brain repository less its session index: a backend adds the statements that make it
    (``session_index``), ``index`` and ``search_sessions``."""

    def __init__(self, dialect: Dialect, memories: MemoryRepository, session_index: Migration,
                 later: Sequence[Migration] = ()) -> None:
        self.dialect = dialect
        self.memories = memories
        dialect.migrate("brain", brain_migrations(dialect, session_index, later))

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.dialect.reading() as conn:
            return conn.execute(sql, params).fetchall()

    @abstractmethod
    def index(self, seq: int, user_id: str, texts: Sequence[str]) -> None:
        """Add the searchable pieces of session ``seq`` (joining the caller's transaction)."""

    @abstractmethod
    def search_sessions(self, user_id: str, brain_projects: Sequence[str] | None, terms: Sequence[str],
                        since: str | None, limit: int) -> list[SessionHit]:
        """The user's sessions matching ``terms``, best first."""

    # --- personal projects ----------------------------------------------------------------------------

    def personal_projects(self, owner_user_id: str) -> list[BrainProjectRecord]:
        return [project_from_row(r) for r in self._rows(
            f"SELECT {PROJECT_COLUMNS} FROM brain_projects p WHERE p.owner_user_id = ? ORDER BY p.created_at, p.id",
            (owner_user_id,))]

    def project(self, project_id: str) -> BrainProjectRecord | None:
        rows = self._rows(f"SELECT {PROJECT_COLUMNS} FROM brain_projects p WHERE p.id = ?", (project_id,))
        return project_from_row(rows[0]) if rows else None

    def project_by_name(self, owner_user_id: str, name_key: str) -> BrainProjectRecord | None:
        rows = self._rows(f"SELECT {PROJECT_COLUMNS} FROM brain_projects p WHERE p.owner_user_id = ?"
                          " AND p.name_key = ?", (owner_user_id, name_key))
        return project_from_row(rows[0]) if rows else None

    def add_project(self, project: BrainProjectRecord) -> tuple[BrainProjectRecord, bool]:
        p = project
        try:
            with self.dialect.transaction() as conn:
                row = conn.execute(
                    "INSERT INTO brain_projects (id, owner_user_id, home, slug, name, name_key, framework, language,"
                    f" created_at) VALUES ({marks(9)})"
                    " ON CONFLICT (owner_user_id, name_key) DO NOTHING RETURNING id",
                    (p.id, p.owner_user_id, p.home, p.slug, p.name, p.name_key, p.framework, p.language,
                     p.created_at)).fetchone()
        except self.dialect.integrity_error:
            raise Conflict(f"slug {p.slug} is taken in {p.home}") from None
        if row is not None:
            return project, True
        found = self.project_by_name(p.owner_user_id, p.name_key)
        assert found is not None
        return found, False

    def project_slugs(self, home: str) -> set[str]:
        return {r[0] for r in self._rows("SELECT slug FROM brain_projects WHERE home = ?", (home,))}

    def personal_project_count(self, owner_user_id: str) -> int:
        return int(self._rows("SELECT count(*) FROM brain_projects WHERE owner_user_id = ?", (owner_user_id,))[0][0])

    def project_holdings(self, project_id: str) -> dict[str, int]:
        """What the project holds, by kind (sessions, knowledge items live or retired, skill proposals)."""
        row = self._rows(
            "SELECT (SELECT count(*) FROM brain_sessions WHERE brain_project = ?),"
            " (SELECT count(*) FROM brain_knowledge WHERE brain_project = ?),"
            " (SELECT count(*) FROM brain_skill_proposals WHERE brain_project = ?)", (project_id,) * 3)[0]
        return {"sessions": int(row[0]), "knowledge items": int(row[1]), "skill proposals": int(row[2])}

    def delete_empty_project(self, project_id: str) -> bool:
        """Delete the project if it holds nothing (project_holdings all 0) and exists; whether it was deleted.

        Its row is locked first: a write into the project holds it shared (``_hold_project``) until it commits,
        so the delete waits for writes under way, and then reads what they wrote (PostgreSQL's READ COMMITTED
        takes a new snapshot for each statement); a write that comes after finds the row gone."""
        with self.dialect.transaction() as conn:
            if conn.execute(f"SELECT 1 FROM brain_projects WHERE id = ?{self.dialect.lock}",
                            (project_id,)).fetchone() is None:
                return False
            gone = conn.execute(
                "DELETE FROM brain_projects WHERE id = ?"
                " AND NOT EXISTS (SELECT 1 FROM brain_sessions WHERE brain_project = ?)"
                " AND NOT EXISTS (SELECT 1 FROM brain_knowledge WHERE brain_project = ?)"
                " AND NOT EXISTS (SELECT 1 FROM brain_skill_proposals WHERE brain_project = ?) RETURNING id",
                (project_id,) * 4).fetchone()
            if gone is not None:
                conn.execute("DELETE FROM brain_kea_funnel WHERE brain_project = ?", (project_id,))
            return gone is not None

    def _hold_project(self, conn: Any, brain_project: str) -> None:
        """Inside a write into ``brain_project``: a personal project (``~handle/slug``) still exists, and stays
        so until the write commits (delete_empty_project waits); Conflict when it was deleted meanwhile. An
        ordinary project, and a home itself (``~handle``: a token bound to it, a meeting note's items), is not a
        row of brain_projects."""
        if brain_project.startswith(HOME_PREFIX) and "/" in brain_project and conn.execute(
                f"SELECT 1 FROM brain_projects WHERE id = ?{self.dialect.share_lock}", (brain_project,)).fetchone() \
                is None:
            raise Conflict(f"the brain project {brain_project} was deleted meanwhile; name another project, or "
                           "create it again")

    # --- knowledge ------------------------------------------------------------------------------------

    def add_knowledge(self, memory: MemoryInput, knowledge: KnowledgeInput,
                      supersedes: str | None = None) -> tuple[KnowledgeRecord, bool]:
        k = knowledge
        with self.dialect.transaction() as conn:
            self._hold_project(conn, k.brain_project)
            record, created = self.memories.add(memory, supersedes=supersedes)
            conn.execute(
                "INSERT INTO brain_knowledge (ref, brain_project, project, owner_user_id, kind, trigger_text,"
                f" rule_text, rationale, source, confidence, rule_key, created) VALUES ({marks(12)})"
                " ON CONFLICT (ref) DO NOTHING",
                (record.ref, k.brain_project, record.project, k.owner_user_id, k.kind, k.trigger, k.rule,
                 k.rationale, k.source, k.confidence, k.rule_key, k.created))
            if created and supersedes is not None:
                conn.execute("UPDATE brain_knowledge SET retired_at = ? WHERE ref = ? AND retired_at IS NULL",
                             (k.created, supersedes))
            row = conn.execute(f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.ref = ?",
                               (record.ref,)).fetchone()
            assert row is not None
            return knowledge_from_row(row), created

    def knowledge(self, refs: Sequence[str]) -> dict[str, KnowledgeRecord]:
        if not refs:
            return {}
        rows = self._rows(f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.ref IN ({marks(len(refs))})",
                          list(refs))
        return {r[0]: knowledge_from_row(r) for r in rows}

    def find_rule(self, owner_user_id: str, brain_project: str, rule_key: str,
                  public_only: bool = False) -> KnowledgeRecord | None:
        rows = self._rows(
            f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.owner_user_id = ? AND k.brain_project = ?"
            f" AND k.rule_key = ? AND k.retired_at IS NULL{' AND m.private_to IS NULL' if public_only else ''}",
            (owner_user_id, brain_project, rule_key))
        return knowledge_from_row(rows[0]) if rows else None

    def list_knowledge(self, query: KnowledgeFilter) -> list[KnowledgeRecord]:
        if not query.brain_projects:
            return []
        where = [f"k.brain_project IN ({marks(len(query.brain_projects))})", "k.retired_at IS NULL"]
        params: list[Any] = list(query.brain_projects)
        if query.kinds:
            where.append(f"k.kind IN ({marks(len(query.kinds))})")
            params += list(query.kinds)
        else:
            where.append("k.kind <> 'action_item'")
        if query.owner_user_id is not None:
            where.append("k.owner_user_id = ?")
            params.append(query.owner_user_id)
        if query.viewer is not None:
            where.append("(m.private_to IS NULL OR m.private_to = ?)")
            params.append(query.viewer)
        if query.min_successes:
            where.append("k.success_count >= ?")
            params.append(query.min_successes)
        order = "k.confidence DESC, k.created DESC" if query.order == "confidence" else "k.created DESC"
        return [knowledge_from_row(r) for r in self._rows(
            f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE {' AND '.join(where)}"
            f" ORDER BY {order}, k.ref LIMIT ? OFFSET ?", [*params, query.limit, query.offset])]

    def open_action_items(self, brain_project: str, assignee_tag: str, limit: int) -> list[KnowledgeRecord]:
        return [knowledge_from_row(r) for r in self._rows(
            f"SELECT {KNOWLEDGE_COLUMNS} FROM {KNOWLEDGE_FROM} WHERE k.brain_project = ? AND k.kind = 'action_item'"
            " AND k.retired_at IS NULL AND m.tags LIKE ? ESCAPE '\\'"
            " ORDER BY (m.tags LIKE '%\"blocker\"%') DESC, k.created, k.ref LIMIT ?",
            (brain_project, tag_pattern(assignee_tag), limit))]

    def note_items(self, project: str, path: str) -> list[NoteItemRecord]:
        """The action items (live and retired) of memory path ``path`` in ``project`` that a meeting note yielded."""
        return [NoteItemRecord(knowledge_from_row(r[:-1]), r[-1]) for r in self._rows(
            f"SELECT {KNOWLEDGE_COLUMNS}, m.deleted_by FROM {KNOWLEDGE_FROM} WHERE m.project = ? AND m.path = ?"
            " AND k.source = ? AND k.kind = 'action_item' ORDER BY k.created, k.ref", (project, path, MEETING_SOURCE))]

    def move_note_items(self, moves: Sequence[NoteItemMove]) -> int:
        moved = 0
        with self.dialect.transaction() as conn:
            for move in moves:
                if self.memories.move(move.ref, move.path, move.content, move.content_hash):
                    conn.execute("UPDATE brain_knowledge SET rationale = ? WHERE ref = ? AND source = ?"
                                 " AND kind = 'action_item'", (move.rationale, move.ref, MEETING_SOURCE))
                    moved += 1
        return moved

    def noted_paths(self) -> dict[tuple[str, str], str]:
        """(project, memory path) of every live action item a meeting note yielded -> the newest one's creation."""
        return {(r[0], r[1]): r[2] for r in self._rows(
            "SELECT m.project, m.path, max(k.created) FROM brain_knowledge k JOIN memories m ON m.ref = k.ref"
            " WHERE k.source = ? AND k.kind = 'action_item' AND k.retired_at IS NULL GROUP BY m.project, m.path",
            (MEETING_SOURCE,))}

    def health(self, since: str, user_id: str | None, brain_projects: Sequence[str] | None,
               assignee_tag: str | None) -> HealthCounts:
        return health_counts(self.dialect, since, user_id, brain_projects, assignee_tag)

    def retire(self, refs: Sequence[str], by_user_id: str, reason: str, at: str) -> int:
        """Each live item retired, its memory forgotten; how many. Each memory's row is locked before its item's,
        the order a remember superseding it takes them in (its memory, then its rule: one transaction since
        store.together), or on PostgreSQL the two waited on each other and one failed as a deadlock."""
        done = 0
        with self.dialect.transaction() as conn:
            for ref in dict.fromkeys(refs):
                conn.execute(f"SELECT id FROM memories WHERE ref = ?{self.dialect.lock}", (ref,))
                cur = conn.execute("UPDATE brain_knowledge SET retired_at = ? WHERE ref = ? AND retired_at IS NULL",
                                   (at, ref))
                if cur.rowcount:
                    self.memories.forget(ref, by_user_id, reason, at)
                    done += 1
        return done

    def retire_gone(self, ref: str, at: str) -> bool:
        """The rule held by memory ``ref`` retired, its memory forgotten or superseded already (through the memory
        tools); whether there was a live rule."""
        with self.dialect.transaction() as conn:
            cur = conn.execute("UPDATE brain_knowledge SET retired_at = ? WHERE ref = ? AND retired_at IS NULL",
                               (at, ref))
            return bool(cur.rowcount)

    def record_use(self, ref: str, success: bool, confidence: float, at: str) -> None:
        with self.dialect.transaction() as conn:
            conn.execute("UPDATE brain_knowledge SET used_count = used_count + 1, success_count = success_count + ?,"
                         " failure_count = failure_count + ?, confidence = ?, last_used_at = ? WHERE ref = ?",
                         (int(success), int(not success), confidence, at, ref))

    # --- sessions -------------------------------------------------------------------------------------

    def add_session(self, session: SessionRecord, injected: Sequence[str] = ()) -> None:
        s = session
        with self.dialect.transaction() as conn:
            self._hold_project(conn, s.brain_project)
            row = conn.execute(
                "INSERT INTO brain_sessions (id, user_id, token_id, brain_project, client_type, prompt, framework,"
                f" started_at) VALUES ({marks(8)}) RETURNING seq",
                (s.id, s.user_id, s.token_id, s.brain_project, s.client_type, s.prompt, s.framework,
                 s.started_at)).fetchone()
            assert row is not None
            self.index(int(row[0]), s.user_id, [s.prompt])
            if s.prompt:  # a session with no text yet has nothing to embed: its close queues it if it gets some
                conn.execute(QUEUE_ITEM, ("session", int(row[0])))
            if injected:
                self.record_applications(s.id, injected, "injected", s.started_at)

    def session(self, session_id: str) -> SessionRecord | None:
        rows = self._rows(f"SELECT {SESSION_COLUMNS} FROM brain_sessions s WHERE s.id = ?", (session_id,))
        return session_from_row(rows[0]) if rows else None

    def add_event(self, event: EventRecord, text: str) -> None:
        with self.dialect.transaction() as conn:
            conn.execute(f"INSERT INTO brain_events (id, session_id, event_type, payload, at) VALUES ({marks(5)})",
                         (event.id, event.session_id, event.event_type, payload_json(event.payload), event.at))
            row = conn.execute("UPDATE brain_sessions SET event_count = event_count + 1 WHERE id = ?"
                               " RETURNING seq, user_id", (event.session_id,)).fetchone()
            assert row is not None
            self.index(int(row[0]), row[1], [text])

    def events(self, session_id: str, limit: int, offset: int = 0) -> list[EventRecord]:
        return [event_from_row(r) for r in self._rows(
            f"SELECT {EVENT_COLUMNS} FROM brain_events e WHERE e.session_id = ? ORDER BY e.seq LIMIT ? OFFSET ?",
            (session_id, limit, offset))]

    def close_session(self, session_id: str, close: SessionClose, texts: Sequence[str],
                      job: NewJob | None = None, also: Sequence[NewJob] = ()) -> tuple[bool, int | None]:
        """Close the session if it is open (False otherwise), queueing ``job`` (its id) and ``also`` with it."""
        with self.dialect.transaction() as conn:
            row = conn.execute(
                "UPDATE brain_sessions SET ended_at = ?, success = ?, user_feedback = ?, sqs = ?, summary = ?"
                " WHERE id = ? AND ended_at IS NULL RETURNING seq, user_id, prompt",
                (close.ended_at, close.success, close.user_feedback, close.sqs, close.summary,
                 session_id)).fetchone()
            if row is None:
                return False, None
            self.index(int(row[0]), row[1], texts)
            if row[2] or close.summary:  # its summary changes its meaning: again (still no text: nothing to embed)
                conn.execute(QUEUE_ITEM, ("session", int(row[0])))
            for more in also:
                insert_job(conn, more, close.ended_at)
            return True, (insert_job(conn, job, close.ended_at) if job is not None else None)

    def record_injection(self, session_id: str, refs: Sequence[str], at: str) -> bool:
        """``refs`` recorded as injected into the session, if it is still open (checked under the session row's
        lock, so a close racing the retrieval settles it first or waits); whether it was."""
        with self.dialect.transaction() as conn:
            row = conn.execute(f"SELECT ended_at FROM brain_sessions WHERE id = ?{self.dialect.lock}",
                               (session_id,)).fetchone()
            if row is None or row[0] is not None:
                return False
            self.record_applications(session_id, refs, "injected", at)
            return True

    def record_applications(self, session_id: str, refs: Sequence[str], role: str, at: str) -> int:
        added = 0
        with self.dialect.transaction() as conn:
            for ref in dict.fromkeys(refs):
                cur = conn.execute("INSERT INTO brain_applications (session_id, knowledge_ref, role, at)"
                                   f" VALUES ({marks(4)}) ON CONFLICT DO NOTHING", (session_id, ref, role, at))
                if cur.rowcount and role == "injected":
                    conn.execute("UPDATE brain_knowledge SET injected_count = injected_count + 1 WHERE ref = ?",
                                 (ref,))
                added += cur.rowcount
        return added

    def applications(self, session_id: str, role: str) -> list[str]:
        return [r[0] for r in self._rows(
            "SELECT knowledge_ref FROM brain_applications WHERE session_id = ? AND role = ?"
            " ORDER BY at, knowledge_ref", (session_id, role))]

    def nearest_sessions(self, user_id: str, brain_projects: Sequence[str] | None, since: str | None,
                         vector: bytes, model: str, limit: int) -> list[Nearest[SessionRecord]]:
        """The user's sessions (in these projects, since then) nearest in meaning to ``vector``, best first."""
        where, params = session_scope(user_id, brain_projects, since)
        with self.dialect.reading() as conn:
            best = nearest_rows(conn.execute(
                "SELECT s.seq, v.vector FROM brain_sessions s JOIN vectors v ON v.kind = 'session'"
                f" AND v.item_id = s.seq WHERE v.model = ? AND {where}", [model, *params]).fetchall(), vector, limit)
            if not best:
                return []
            seqs = [seq for seq, _ in best]
            rows = {int(r[0]): session_from_row(r[1:]) for r in conn.execute(
                f"SELECT s.seq, {SESSION_COLUMNS} FROM brain_sessions s WHERE s.seq IN ({marks(len(seqs))})",
                seqs).fetchall()}
        return [Nearest(rows[seq], similarity) for seq, similarity in best if seq in rows]

    def reinforce(self, ref: str, confidence: float, at: str) -> None:
        """A rule learned again (semantic dedup): its confidence raised, its use date renewed; no use counted."""
        with self.dialect.transaction() as conn:
            conn.execute("UPDATE brain_knowledge SET confidence = ?, last_used_at = ? WHERE ref = ?",
                         (confidence, at, ref))

    def recent_sessions(self, user_id: str, brain_projects: Sequence[str] | None, limit: int,
                        since: str | None = None, offset: int = 0) -> list[SessionRecord]:
        """One user's sessions in these projects (started since ``since``), newest first, from the ``offset``-th."""
        where, params = session_scope(user_id, brain_projects, since)
        return [session_from_row(r) for r in self._rows(
            f"SELECT {SESSION_COLUMNS} FROM brain_sessions s WHERE {where} ORDER BY s.seq DESC LIMIT ? OFFSET ?",
            [*params, limit, offset])]


def session_scope(user_id: str, brain_projects: Sequence[str] | None,
                  since: str | None = None) -> tuple[str, list[Any]]:
    """The WHERE clause (over ``brain_sessions s``) of one user's sessions, in these projects, since then."""
    where = "s.user_id = ?"
    params: list[Any] = [user_id]
    if brain_projects is not None:
        where += f" AND s.brain_project IN ({marks(len(brain_projects)) or 'NULL'})"
        params += list(brain_projects)
    if since is not None:
        where += " AND s.started_at >= ?"
        params.append(since)
    return where, params
