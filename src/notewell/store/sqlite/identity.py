"""Users, projects, grants and tokens on SQLite.

Plain SQL on plain columns (text, integer 0/1 for flags, ISO 8601 text for times) so the PostgreSQL
repository can mirror it statement for statement. Token secrets never reach this module: only their
SHA-256 hashes do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from notewell.access.models import Grant, Project, TokenRecord, User, email_key
from notewell.errors import Conflict
from notewell.store.sqlite.database import SqliteDatabase

MIGRATIONS = [
    """
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        handle TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL
    );
    CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        framework TEXT,
        language TEXT,
        owner_user_id TEXT REFERENCES users (id),
        created_at TEXT NOT NULL,
        custom_name INTEGER NOT NULL DEFAULT 0,
        custom_description INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE grants (
        user_id TEXT NOT NULL REFERENCES users (id),
        project_id TEXT NOT NULL REFERENCES projects (id),
        level TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (user_id, project_id)
    );
    CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users (id),
        name TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        scopes TEXT NOT NULL,
        project_id TEXT REFERENCES projects (id),
        created_at TEXT NOT NULL,
        expires_at TEXT,
        last_used_at TEXT,
        revoked_at TEXT
    );
    CREATE INDEX tokens_user ON tokens (user_id)
    """,
    """
    CREATE INDEX projects_kind ON projects (kind, id);
    CREATE INDEX projects_owner ON projects (owner_user_id)
    """,
]

_USER_COLUMNS = "id, email, name, handle, role, active, created_at"
_PROJECT_COLUMNS = ("id, name, description, kind, status, framework, language, owner_user_id, created_at, "
                    "custom_name, custom_description")
_TOKEN_COLUMNS = "id, user_id, name, scopes, project_id, created_at, expires_at, last_used_at, revoked_at"


def _user(row: Sequence[Any]) -> User:
    return User(id=row[0], email=row[1], name=row[2], handle=row[3], role=row[4], active=bool(row[5]),
                created_at=row[6])


def _project(row: Sequence[Any]) -> Project:
    return Project(id=row[0], name=row[1], description=row[2], kind=row[3], status=row[4], framework=row[5],
                   language=row[6], owner_user_id=row[7], created_at=row[8], custom_name=bool(row[9]),
                   custom_description=bool(row[10]))


def _grant(row: Sequence[Any]) -> Grant:
    return Grant(user_id=row[0], project_id=row[1], level=row[2], created_at=row[3])


def _token(row: Sequence[Any]) -> TokenRecord:
    return TokenRecord(id=row[0], user_id=row[1], name=row[2], scopes=tuple(row[3].split()), project_id=row[4],
                       created_at=row[5], expires_at=row[6], last_used_at=row[7], revoked_at=row[8])


def _project_values(p: Project) -> tuple[Any, ...]:
    return (p.id, p.name, p.description, p.kind, p.status, p.framework, p.language, p.owner_user_id, p.created_at,
            int(p.custom_name), int(p.custom_description))


class SqliteIdentity:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        db.migrate("identity", MIGRATIONS)

    # users
    def add_user(self, user: User, home: Project | None = None) -> None:
        """Insert a user and, in the same transaction, their home project."""
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO users ({_USER_COLUMNS}, email_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (user.id, user.email, user.name, user.handle, user.role, int(user.active), user.created_at,
                     email_key(user.email)))
                if home is not None:
                    conn.execute(f"INSERT INTO projects ({_PROJECT_COLUMNS}) VALUES ({_marks(11)})",
                                 _project_values(home))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"user {user.email} (handle {user.handle}) or its home exists already") from exc

    def user(self, user_id: str) -> User | None:
        row = self.db.conn.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
        return _user(row) if row else None

    def user_by_email(self, email: str) -> User | None:
        row = self.db.conn.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE email_key = ?",
                                   (email_key(email),)).fetchone()
        return _user(row) if row else None

    def user_by_handle(self, handle: str) -> User | None:
        row = self.db.conn.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE handle = ?", (handle,)).fetchone()
        return _user(row) if row else None

    def users(self) -> list[User]:
        return [_user(r) for r in self.db.conn.execute(f"SELECT {_USER_COLUMNS} FROM users ORDER BY email_key")]

    def set_user_active(self, user_id: str, active: bool) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE users SET active = ? WHERE id = ?", (int(active), user_id))

    # projects
    def project(self, project_id: str) -> Project | None:
        row = self.db.conn.execute(f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE id = ?",
                                   (project_id,)).fetchone()
        return _project(row) if row else None

    def projects(self) -> list[Project]:
        return [_project(r) for r in self.db.conn.execute(f"SELECT {_PROJECT_COLUMNS} FROM projects ORDER BY id")]

    def projects_for_user(self, user_id: str) -> list[Project]:
        """Every ordinary project and the homes ``user_id`` owns: what anyone's visibility starts from."""
        return [_project(r) for r in self.db.conn.execute(
            f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE kind = 'ordinary' OR owner_user_id = ? ORDER BY id",
            (user_id,))]

    def add_project(self, project: Project) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(f"INSERT INTO projects ({_PROJECT_COLUMNS}) VALUES ({_marks(11)})",
                             _project_values(project))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"project {project.id} exists already") from exc

    def update_project(self, project: Project) -> None:
        """Store every changeable field of ``project`` (all but id, kind, owner and creation time)."""
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE projects SET name = ?, description = ?, status = ?, framework = ?, language = ?,"
                " custom_name = ?, custom_description = ? WHERE id = ?",
                (project.name, project.description, project.status, project.framework, project.language,
                 int(project.custom_name), int(project.custom_description), project.id))

    # grants
    def grant(self, user_id: str, project_id: str) -> Grant | None:
        row = self.db.conn.execute(
            "SELECT user_id, project_id, level, created_at FROM grants WHERE user_id = ? AND project_id = ?",
            (user_id, project_id)).fetchone()
        return _grant(row) if row else None

    def grants_for_user(self, user_id: str) -> list[Grant]:
        return [_grant(r) for r in self.db.conn.execute(
            "SELECT user_id, project_id, level, created_at FROM grants WHERE user_id = ? ORDER BY project_id",
            (user_id,))]

    def grants_for_project(self, project_id: str) -> list[Grant]:
        return [_grant(r) for r in self.db.conn.execute(
            "SELECT user_id, project_id, level, created_at FROM grants WHERE project_id = ? ORDER BY user_id",
            (project_id,))]

    def set_grant(self, grant: Grant) -> None:
        """Insert the grant, or change the level of the one the user holds on that project."""
        with self.db.transaction() as conn:
            updated = conn.execute("UPDATE grants SET level = ? WHERE user_id = ? AND project_id = ?",
                                   (grant.level, grant.user_id, grant.project_id)).rowcount
            if not updated:
                conn.execute("INSERT INTO grants (user_id, project_id, level, created_at) VALUES (?, ?, ?, ?)",
                             (grant.user_id, grant.project_id, grant.level, grant.created_at))

    def remove_grant(self, user_id: str, project_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM grants WHERE user_id = ? AND project_id = ?",
                                (user_id, project_id)).rowcount > 0

    # tokens
    def add_token(self, token: TokenRecord, secret_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT INTO tokens ({_TOKEN_COLUMNS}, secret_hash) VALUES ({_marks(10)})",
                (token.id, token.user_id, token.name, " ".join(token.scopes), token.project_id, token.created_at,
                 token.expires_at, token.last_used_at, token.revoked_at, secret_hash))

    def token(self, token_id: str) -> TokenRecord | None:
        row = self.db.conn.execute(f"SELECT {_TOKEN_COLUMNS} FROM tokens WHERE id = ?", (token_id,)).fetchone()
        return _token(row) if row else None

    def token_with_hash(self, token_id: str) -> tuple[TokenRecord, str] | None:
        """The token and its stored secret hash, for authentication."""
        row = self.db.conn.execute(f"SELECT {_TOKEN_COLUMNS}, secret_hash FROM tokens WHERE id = ?",
                                   (token_id,)).fetchone()
        return (_token(row), row[9]) if row else None

    def tokens(self, user_id: str | None = None) -> list[TokenRecord]:
        if user_id is None:
            rows = self.db.conn.execute(f"SELECT {_TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id")
        else:
            rows = self.db.conn.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM tokens WHERE user_id = ? ORDER BY created_at, id", (user_id,))
        return [_token(r) for r in rows]

    def revoke_token(self, token_id: str, at: str) -> bool:
        """Mark the token revoked; False when it is unknown or revoked already."""
        with self.db.transaction() as conn:
            return conn.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                (at, token_id)).rowcount > 0

    def touch_token(self, token_id: str, at: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", (at, token_id))


def _marks(n: int) -> str:
    return ", ".join("?" * n)
