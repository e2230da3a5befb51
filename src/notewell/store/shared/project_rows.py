"""Which rows of each carried table are one project's, for an export of one project (``notewell export
--project``): the operator's backup of a project, or a team moving it to another store.

A project's rows are its project row and grants; every memory in it, private ones included (the project's
data, whoever may read it), with their ties to documents; the brain's rows that live in it: knowledge (taught,
captured, a meeting's action items) whose store project it is, the coding sessions of it (on a home: of the
personal brain projects under it) with their events, search pieces and the applications of its own knowledge,
autoskill's proposals and KEA's funnel counts for it; the audit entries about it (the project itself, its
notes, what names it as its project) and its notes' journal. The users those rows name come as user rows
(authors, grantees, owners, who acted), with their (empty) homes, so that the export loads into an empty store
and they can work there; never their passwords, tokens or sign-in state, nor what their homes hold.

Each ``?`` is the project's id. A carried table with no entry here stops a project's export with an error
naming it, so a table a later migration adds is never left out of one silently.
"""

from __future__ import annotations

from collections.abc import Mapping

from notewell.errors import NotewellError

_ITS_BRAIN = "(brain_project = ? OR brain_project IN (SELECT id FROM brain_projects WHERE home = ?))"
_ITS_SESSIONS = f"SELECT id FROM brain_sessions WHERE {_ITS_BRAIN}"
_ITS_KNOWLEDGE = "SELECT ref FROM brain_knowledge WHERE project = ?"
_ITS_MEMORIES = "SELECT id FROM memories WHERE project = ?"
_PROJECT = "CAST(? AS TEXT)"
_ITS_AUDIT = (f"target = ? OR substr(target, 1, length({_PROJECT}) + 1) = {_PROJECT} || '/'"  # a note's vault path
              f" OR replace(detail, '\"project\": \"' || {_PROJECT} || '\"', '') <> detail")  # JSON names it
_NAMED_USERS = (  # every user column of the project's rows
    "SELECT author_user_id FROM memories WHERE project = ?",
    "SELECT deleted_by FROM memories WHERE project = ?",
    "SELECT user_id FROM grants WHERE project_id = ?",
    "SELECT owner_user_id FROM projects WHERE id = ?",
    "SELECT owner_user_id FROM brain_projects WHERE home = ?",
    "SELECT owner_user_id FROM brain_knowledge WHERE project = ?",
    f"SELECT user_id FROM brain_sessions WHERE {_ITS_BRAIN}",
    f"SELECT owner_user_id FROM brain_skill_proposals WHERE {_ITS_BRAIN}",
    f"SELECT decided_by FROM brain_skill_proposals WHERE {_ITS_BRAIN}",
    f"SELECT user_id FROM brain_kea_funnel WHERE {_ITS_BRAIN}",
    f"SELECT user_id FROM audit_log WHERE {_ITS_AUDIT}",
    "SELECT user_id FROM note_journal WHERE project = ?",
)
_ITS_USERS = " OR ".join(f"id IN ({named})" for named in _NAMED_USERS)
PROJECT_ROWS: Mapping[str, str | None] = {
    "users": _ITS_USERS,
    # and the homes of its users, without their memories: a person with no home cannot write a private memory
    "projects": f"id = ? OR (kind = 'home' AND owner_user_id IN (SELECT id FROM users WHERE {_ITS_USERS}))",
    "grants": "project_id = ?",
    "memories": "project = ?",
    "memory_documents": f"memory_id IN ({_ITS_MEMORIES})",
    "brain_projects": "home = ?",  # the personal brain projects of a home (an ordinary project is its own)
    "brain_knowledge": "project = ?",
    "brain_sessions": _ITS_BRAIN,
    "brain_events": f"session_id IN ({_ITS_SESSIONS})",
    "brain_session_words": f"session_seq IN (SELECT seq FROM brain_sessions WHERE {_ITS_BRAIN})",
    "brain_applications": f"session_id IN ({_ITS_SESSIONS}) AND knowledge_ref IN ({_ITS_KNOWLEDGE})",
    "brain_skill_proposals": _ITS_BRAIN,  # the session it names may be another project's: kept as its label
    "brain_kea_funnel": _ITS_BRAIN,  # KEA's counts of the sessions and runs in it
    "audit_log": _ITS_AUDIT,
    "note_journal": "project = ?",
    "tokens": None,  # credentials of this server, each its holder's
    "passwords": None,
    "sign_in_links": None,
    "sign_in_failures": None,
    "sign_in_keys": None,
    "idempotency_keys": None,  # answers kept for a client's retries
}


def project_rows(table: str) -> str | None:
    """The WHERE condition (each ``?`` the project's id) of a project's rows of ``table``; None: none are."""
    if table not in PROJECT_ROWS:
        raise NotewellError(f"table {table}: no rule says which of its rows are a project's; add it to PROJECT_ROWS "
                            "(store/shared/project_rows.py) with its condition, or None")
    return PROJECT_ROWS[table]
