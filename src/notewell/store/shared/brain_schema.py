"""The brain's tables, written once as DDL templates (shared/dialect.py's words), and its migration steps.

Step 1: these tables with the backend's session text index (an FTS5 table on SQLite, tsvector rows under a GIN
index on PostgreSQL). Steps 2 to 1 + BACKEND_STEPS: each backend's own (PostgreSQL's step 2 keeps each piece's
text; SQLite's is empty), so that the steps after them, shared (``LATER``), have one number on both backends. A
later step is appended to ``LATER`` (or a backend's own, once BACKEND_STEPS grows by one and every backend
fills its slot), never written into an earlier one."""

from __future__ import annotations

from collections.abc import Sequence

from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

TABLES = (
    """
    CREATE TABLE brain_projects (
        id {key} PRIMARY KEY,
        owner_user_id TEXT NOT NULL,
        home {key} NOT NULL,
        slug {key} NOT NULL,
        name TEXT NOT NULL,
        name_key {key} NOT NULL,
        framework TEXT,
        language TEXT,
        created_at {key} NOT NULL,
        UNIQUE (owner_user_id, name_key),
        UNIQUE (home, slug)
    )
    """,
    """
    CREATE TABLE brain_knowledge (
        ref {key} PRIMARY KEY,
        brain_project {key} NOT NULL,
        project {key} NOT NULL,
        owner_user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('reflex', 'recipe', 'heuristic', 'principle', 'anti_principle',
                                           'action_item')),
        trigger_text TEXT NOT NULL,
        rule_text TEXT NOT NULL,
        rationale TEXT NOT NULL,
        source TEXT NOT NULL,
        confidence {real} NOT NULL,
        rule_key {key} NOT NULL,
        injected_count INTEGER NOT NULL DEFAULT 0,
        used_count INTEGER NOT NULL DEFAULT 0,
        success_count INTEGER NOT NULL DEFAULT 0,
        failure_count INTEGER NOT NULL DEFAULT 0,
        created {key} NOT NULL,
        last_used_at TEXT,
        retired_at TEXT
    )
    """,
    "CREATE INDEX brain_knowledge_project ON brain_knowledge (brain_project, kind, confidence)",
    "CREATE INDEX brain_knowledge_rule ON brain_knowledge (owner_user_id, brain_project, rule_key)",
    """
    CREATE TABLE brain_sessions (
        seq {rowid},
        id {key} NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        token_id TEXT,
        brain_project {key} NOT NULL,
        client_type TEXT NOT NULL,
        prompt TEXT NOT NULL,
        framework TEXT,
        started_at {key} NOT NULL,
        ended_at TEXT,
        success {flag},
        user_feedback TEXT,
        sqs {real},
        summary TEXT,
        event_count INTEGER NOT NULL DEFAULT 0
    )
    """,
    "CREATE INDEX brain_sessions_user ON brain_sessions (user_id, seq)",
    """
    CREATE TABLE brain_events (
        seq {rowid},
        id {key} NOT NULL UNIQUE,
        session_id {key} NOT NULL,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL,
        at TEXT NOT NULL
    )
    """,
    "CREATE INDEX brain_events_session ON brain_events (session_id, seq)",
    """
    CREATE TABLE brain_applications (
        session_id {key} NOT NULL,
        knowledge_ref {key} NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('injected', 'used')),
        at {key} NOT NULL,
        PRIMARY KEY (session_id, knowledge_ref, role)
    )
    """,
)


BACKEND_STEPS = 1
LATER: tuple[tuple[str, ...], ...] = (
    (  # step 3: autoskill's proposals (services/autoskill.py), each waiting for a person's yes or no
        """
        CREATE TABLE brain_skill_proposals (
            id {serial},
            proposal_key {key} NOT NULL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ('merge', 'demote', 'add_steps')),
            knowledge_ref {key} NOT NULL,
            other_ref TEXT,
            owner_user_id TEXT NOT NULL,
            brain_project {key} NOT NULL,
            session_id TEXT NOT NULL,
            new_kind TEXT NOT NULL,
            new_rule TEXT NOT NULL,
            reason TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'rejected')),
            created_at {key} NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            result_ref TEXT
        )
        """,
        "CREATE INDEX brain_skill_proposals_owner ON brain_skill_proposals (owner_user_id, state, id)",
    ),
    (  # step 4: KEA's funnel (services/kea.py), summed per person, brain project, UTC day and mode
        """
        CREATE TABLE brain_kea_funnel (
            user_id {key} NOT NULL,
            brain_project {key} NOT NULL,
            day {key} NOT NULL,
            mode {key} NOT NULL CHECK (mode IN ('refine', 'mine', 'cross')),
            runs {int64} NOT NULL,
            submitted {int64} NOT NULL,
            llm_findings {int64} NOT NULL,
            filter_passed {int64} NOT NULL,
            persisted {int64} NOT NULL,
            PRIMARY KEY (user_id, brain_project, day, mode)
        )
        """,
        "CREATE INDEX brain_kea_funnel_day ON brain_kea_funnel (day)",
    ),
    (  # step 5: what the brain learned by itself from a person's sessions is that person's private memory
        # (services/kea.py): the rules learned before it was so are made private to their owner. They are known by
        # what the brain wrote and a person could not (a mined rule's tags are [type, "mined", "session:<id>"], a
        # cross-session rule's trigger is kea_cross.CROSS_TRIGGER), never by a tag alone, which a person's teach
        # could carry; compared with = and substr, which both backends take as case-sensitive (LIKE is not, on
        # SQLite)
        """
        UPDATE memories SET private_to = (SELECT k.owner_user_id FROM brain_knowledge k WHERE k.ref = memories.ref)
        WHERE private_to IS NULL AND ref IN (
            SELECT k.ref FROM brain_knowledge k
            WHERE k.kind <> 'action_item' AND (
                (k.trigger_text = 'working in this project'
                 AND substr(memories.tags, length(memories.tags) - 9) = ', "cross"]')
                OR substr(memories.tags, 1, length(k.kind) + 27) = '["' || k.kind || '", "mined", "session:ses_'))
        """,
    ),
)


def brain_migrations(dialect: Dialect, session_index: Migration, own: Sequence[Migration] = ()) -> list[Migration]:
    """The brain's steps on ``dialect``, whose session text index is made by the statements ``session_index``;
    ``own``: the backend's own steps after the first (at most BACKEND_STEPS; the slots it leaves are empty)."""
    if len(own) > BACKEND_STEPS:
        raise ValueError(f"a backend has {BACKEND_STEPS} own brain step(s), not {len(own)}; raise BACKEND_STEPS")
    padded = [*own, *([()] * (BACKEND_STEPS - len(own)))]
    return [(*(dialect.render(statement) for statement in TABLES), *session_index), *padded,
            *(tuple(dialect.render(statement) for statement in step) for step in LATER)]
