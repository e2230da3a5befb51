"""Users, projects, grants and tokens on SQLite.

Plain SQL on plain columns (text, integer 0/1 for flags, ISO 8601 text for times) so the PostgreSQL
repository can mirror it statement for statement. Token secrets never reach this module: only their
SHA-256 hashes do.
"""

from __future__ import annotations

import sqlite3

from notewell.errors import Conflict
from notewell.records.identity import Grant, Project, TokenRecord, User, email_key
from notewell.store.identity_rows import (
    GRANT_COLUMNS,
    PROJECT_COLUMNS,
    TOKEN_COLUMNS,
    USER_COLUMNS,
    grant_from_row,
    project_from_row,
    project_values,
    token_from_row,
    token_values,
    user_from_row,
)
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
                    f"INSERT INTO users ({USER_COLUMNS}, email_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (user.id, user.email, user.name, user.handle, user.role, int(user.active), user.created_at,
                     email_key(user.email)))
                if home is not None:
                    conn.execute(f"INSERT INTO projects ({PROJECT_COLUMNS}) VALUES ({_marks(11)})",
                                 project_values(home))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"user {user.email} (handle {user.handle}) or its home exists already") from exc

    def user(self, user_id: str) -> User | None:
        row = self.db.conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
        return user_from_row(row) if row else None

    def user_by_email(self, email: str) -> User | None:
        row = self.db.conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE email_key = ?",
                                   (email_key(email),)).fetchone()
        return user_from_row(row) if row else None

    def user_by_handle(self, handle: str) -> User | None:
        row = self.db.conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE handle = ?", (handle,)).fetchone()
        return user_from_row(row) if row else None

    def users(self) -> list[User]:
        return [user_from_row(r)
                for r in self.db.conn.execute(f"SELECT {USER_COLUMNS} FROM users ORDER BY email_key")]

    def set_user_active(self, user_id: str, active: bool) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE users SET active = ? WHERE id = ?", (int(active), user_id))

    # projects
    def project(self, project_id: str) -> Project | None:
        row = self.db.conn.execute(f"SELECT {PROJECT_COLUMNS} FROM projects WHERE id = ?",
                                   (project_id,)).fetchone()
        return project_from_row(row) if row else None

    def projects(self) -> list[Project]:
        return [project_from_row(r)
                for r in self.db.conn.execute(f"SELECT {PROJECT_COLUMNS} FROM projects ORDER BY id")]

    def projects_for_user(self, user_id: str) -> list[Project]:
        """Every ordinary project and the homes ``user_id`` owns: what anyone's visibility starts from."""
        return [project_from_row(r) for r in self.db.conn.execute(
            f"SELECT {PROJECT_COLUMNS} FROM projects WHERE kind = 'ordinary' OR owner_user_id = ? ORDER BY id",
            (user_id,))]

    def add_project(self, project: Project) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(f"INSERT INTO projects ({PROJECT_COLUMNS}) VALUES ({_marks(11)})",
                             project_values(project))
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
            f"SELECT {GRANT_COLUMNS} FROM grants WHERE user_id = ? AND project_id = ?",
            (user_id, project_id)).fetchone()
        return grant_from_row(row) if row else None

    def grants_for_user(self, user_id: str) -> list[Grant]:
        return [grant_from_row(r) for r in self.db.conn.execute(
            f"SELECT {GRANT_COLUMNS} FROM grants WHERE user_id = ? ORDER BY project_id",
            (user_id,))]

    def grants_for_project(self, project_id: str) -> list[Grant]:
        return [grant_from_row(r) for r in self.db.conn.execute(
            f"SELECT {GRANT_COLUMNS} FROM grants WHERE project_id = ? ORDER BY user_id",
            (project_id,))]

    def set_grant(self, grant: Grant) -> None:
        """Insert the grant, or change the level of the one the user holds on that project."""
        with self.db.transaction() as conn:
            updated = conn.execute("UPDATE grants SET level = ? WHERE user_id = ? AND project_id = ?",
                                   (grant.level, grant.user_id, grant.project_id)).rowcount
            if not updated:
                conn.execute(f"INSERT INTO grants ({GRANT_COLUMNS}) VALUES (?, ?, ?, ?)",
                             (grant.user_id, grant.project_id, grant.level, grant.created_at))

    def remove_grant(self, user_id: str, project_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM grants WHERE user_id = ? AND project_id = ?",
                                (user_id, project_id)).rowcount > 0

    # tokens
    def add_token(self, token: TokenRecord, secret_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT INTO tokens ({TOKEN_COLUMNS}, secret_hash) VALUES ({_marks(10)})",
                (*token_values(token), secret_hash))

    def token(self, token_id: str) -> TokenRecord | None:
        row = self.db.conn.execute(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE id = ?", (token_id,)).fetchone()
        return token_from_row(row) if row else None

    def token_with_hash(self, token_id: str) -> tuple[TokenRecord, str] | None:
        """The token and its stored secret hash, for authentication."""
        row = self.db.conn.execute(f"SELECT {TOKEN_COLUMNS}, secret_hash FROM tokens WHERE id = ?",
                                   (token_id,)).fetchone()
        return (token_from_row(row), row[9]) if row else None

    def tokens(self, user_id: str | None = None) -> list[TokenRecord]:
        if user_id is None:
            rows = self.db.conn.execute(f"SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id")
        else:
            rows = self.db.conn.execute(
                f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE user_id = ? ORDER BY created_at, id", (user_id,))
        return [token_from_row(r) for r in rows]

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
