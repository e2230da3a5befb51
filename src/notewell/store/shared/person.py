"""Which rows of each carried table are one person's, for an export of what a person may take with them.

A person's rows are their user row and home, the memories they wrote (their private ones included: no one
else's), their brain projects, taught knowledge, coding sessions with events, search pieces, applications,
autoskill's proposals, KEA's funnel of their sessions, and the audit entries of what they did. Grants, tokens,
passwords, sign-in state and idempotency keys are the team's or the server's, not the person's. A carried
table with no entry here stops a person's export with an error naming it, so a table a later migration adds is
never left out of one silently.
"""

from __future__ import annotations

from collections.abc import Mapping

from notewell.errors import NotewellError

_THEIR_SESSIONS = "session_id IN (SELECT id FROM brain_sessions WHERE user_id = ?)"
PERSON_ROWS: Mapping[str, str | None] = {
    "users": "id = ?",
    "projects": "kind = 'home' AND owner_user_id = ?",
    "memories": "author_user_id = ?",
    "memory_documents": "memory_id IN (SELECT id FROM memories WHERE author_user_id = ?)",
    "brain_projects": "owner_user_id = ?",
    "brain_knowledge": "owner_user_id = ?",
    "brain_sessions": "user_id = ?",
    "brain_events": _THEIR_SESSIONS,
    "brain_session_words": "user_id = ?",
    "brain_applications": _THEIR_SESSIONS,
    "brain_skill_proposals": "owner_user_id = ?",  # autoskill's proposed edits to their recipes
    "brain_kea_funnel": "user_id = ?",  # what KEA extracted from their sessions, per day
    "audit_log": "user_id = ?",
    "grants": None,  # the team's decision, not the person's
    "tokens": None,  # credentials of this server
    "passwords": None,
    "sign_in_links": None,
    "sign_in_failures": None,
    "sign_in_keys": None,
    "idempotency_keys": None,  # answers kept for a client's retries
    "note_journal": None,  # the history of the team's documents (their earlier text), not the person's
}


def person_rows(table: str) -> str | None:
    """The WHERE condition (each ``?`` the person's user id) of a person's rows of ``table``; None: none are."""
    if table not in PERSON_ROWS:
        raise NotewellError(f"table {table}: no rule says which of its rows are a person's; add it to PERSON_ROWS "
                            "(store/shared/person.py) with its condition, or None")
    return PERSON_ROWS[table]
