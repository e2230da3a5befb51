"""Users, projects, grants and tokens as rows: the column lists and row <-> record mapping both backends share.

Dialect-free: no SQL statements and no placeholders live here (SQLite binds ``?``, PostgreSQL ``%s``), only the
column orders the repositories select and insert in and the conversions between those rows and the records.
Flags are bound as Python bools, which SQLite stores as integer 0/1 and PostgreSQL as BOOLEAN; either comes
back through ``bool``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.identity import Grant, Project, TokenRecord, User

USER_COLUMNS = "id, email, name, handle, role, active, created_at"
PROJECT_COLUMNS = ("id, name, description, kind, status, framework, language, owner_user_id, created_at, "
                   "custom_name, custom_description")
GRANT_COLUMNS = "user_id, project_id, level, created_at"
TOKEN_COLUMNS = "id, user_id, name, scopes, project_id, created_at, expires_at, last_used_at, revoked_at"


def user_from_row(row: Sequence[Any]) -> User:
    """A user from a row selected as ``USER_COLUMNS``."""
    return User(id=row[0], email=row[1], name=row[2], handle=row[3], role=row[4], active=bool(row[5]),
                created_at=row[6])


def project_from_row(row: Sequence[Any]) -> Project:
    """A project from a row selected as ``PROJECT_COLUMNS``."""
    return Project(id=row[0], name=row[1], description=row[2], kind=row[3], status=row[4], framework=row[5],
                   language=row[6], owner_user_id=row[7], created_at=row[8], custom_name=bool(row[9]),
                   custom_description=bool(row[10]))


def grant_from_row(row: Sequence[Any]) -> Grant:
    """A grant from a row selected as ``GRANT_COLUMNS``."""
    return Grant(user_id=row[0], project_id=row[1], level=row[2], created_at=row[3])


def token_from_row(row: Sequence[Any]) -> TokenRecord:
    """A token from a row selected as ``TOKEN_COLUMNS`` (scopes are stored space-separated)."""
    return TokenRecord(id=row[0], user_id=row[1], name=row[2], scopes=tuple(row[3].split()), project_id=row[4],
                       created_at=row[5], expires_at=row[6], last_used_at=row[7], revoked_at=row[8])


def project_values(p: Project) -> tuple[Any, ...]:
    """The values to insert for ``p``, in ``PROJECT_COLUMNS`` order."""
    return (p.id, p.name, p.description, p.kind, p.status, p.framework, p.language, p.owner_user_id, p.created_at,
            p.custom_name, p.custom_description)


def token_values(token: TokenRecord) -> tuple[Any, ...]:
    """The values to insert for ``token``, in ``TOKEN_COLUMNS`` order."""
    return (token.id, token.user_id, token.name, " ".join(token.scopes), token.project_id, token.created_at,
            token.expires_at, token.last_used_at, token.revoked_at)
