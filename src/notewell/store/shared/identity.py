"""Users, projects, grants and tokens, in SQL both backends run.

Plain columns (text, flags, ISO 8601 text for times) and the row <-> record mapping. Token secrets never
reach this module: only their SHA-256 hashes do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.errors import Conflict
from notewell.records.identity import Grant, GrantLevel, Project, Role, TokenRecord, User, email_key
from notewell.store.shared.dialect import Dialect, marks
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE users (
            id {key} PRIMARY KEY,
            email TEXT NOT NULL,
            email_key {key} NOT NULL UNIQUE,
            name TEXT NOT NULL,
            handle {key} NOT NULL UNIQUE,
            role TEXT NOT NULL,
            active {flag} NOT NULL DEFAULT {true},
            created_at {key} NOT NULL
        )
        """,
        """
        CREATE TABLE projects (
            id {key} PRIMARY KEY,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            framework TEXT,
            language TEXT,
            owner_user_id {key} REFERENCES users (id),
            created_at {key} NOT NULL,
            custom_name {flag} NOT NULL DEFAULT {false},
            custom_description {flag} NOT NULL DEFAULT {false}
        )
        """,
        """
        CREATE TABLE grants (
            user_id {key} NOT NULL REFERENCES users (id),
            project_id {key} NOT NULL REFERENCES projects (id),
            level TEXT NOT NULL,
            created_at {key} NOT NULL,
            PRIMARY KEY (user_id, project_id)
        )
        """,
        """
        CREATE TABLE tokens (
            id {key} PRIMARY KEY,
            user_id {key} NOT NULL REFERENCES users (id),
            name TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            scopes TEXT NOT NULL,
            project_id {key} REFERENCES projects (id),
            created_at {key} NOT NULL,
            expires_at {key},
            last_used_at TEXT,
            revoked_at TEXT
        )
        """,
        "CREATE INDEX tokens_user ON tokens (user_id)",
    ),
    # Steps 2 and 3 bring both backends to the same indexes: SQLite had the projects indexes and not
    # grants_project, PostgreSQL the other way round (created in its first step, hence IF NOT EXISTS).
    (
        "CREATE INDEX IF NOT EXISTS projects_kind ON projects (kind, id)",
        "CREATE INDEX IF NOT EXISTS projects_owner ON projects (owner_user_id)",
    ),
    (
        "CREATE INDEX IF NOT EXISTS grants_project ON grants (project_id)",
    ),
    # Step 4: each user's session generation. A browser session carries the generation it began in;
    # signing out, a new password, a new role or deactivation moves it on, and an older session has ended.
    (
        "ALTER TABLE users ADD COLUMN session_generation INTEGER NOT NULL DEFAULT 0",
    ),
    # Step 5: each token's last MCP tool call (its name and when), the signal the token lists show.
    (
        "ALTER TABLE tokens ADD COLUMN last_tool TEXT",
        "ALTER TABLE tokens ADD COLUMN last_tool_at TEXT",
    ),
]

USER_COLUMNS = "id, email, name, handle, role, active, created_at"
PROJECT_COLUMNS = ("id, name, description, kind, status, framework, language, owner_user_id, created_at, "
                   "custom_name, custom_description")
GRANT_COLUMNS = "user_id, project_id, level, created_at"
TOKEN_COLUMNS = ("id, user_id, name, scopes, project_id, created_at, expires_at, last_used_at, revoked_at, last_tool, "
                 "last_tool_at")

# The same columns of a table named by its alias, for the statements that join it.
_USER_U = ", ".join(f"u.{c}" for c in USER_COLUMNS.split(", "))
_PROJECT_P = ", ".join(f"p.{c}" for c in PROJECT_COLUMNS.split(", "))
_TOKEN_T = ", ".join(f"t.{c}" for c in TOKEN_COLUMNS.split(", "))
_GRANT_G = ", ".join(f"g.{c}" for c in GRANT_COLUMNS.split(", "))


class SqlIdentity:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("identity", dialect.rendered(MIGRATIONS))

    def _one(self, sql: str, params: Sequence[Any]) -> Any:
        with self.sql.reading() as conn:
            return conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.sql.reading() as conn:
            return conn.execute(sql, params).fetchall()

    # users
    def add_user(self, user: User, home: Project | None = None) -> None:
        """Insert a user and, in the same transaction, their home project."""
        try:
            with self.sql.transaction() as conn:
                conn.execute(
                    f"INSERT INTO users ({USER_COLUMNS}, email_key) VALUES ({marks(8)})",
                    (user.id, user.email, user.name, user.handle, user.role, user.active, user.created_at,
                     email_key(user.email)))
                if home is not None:
                    conn.execute(f"INSERT INTO projects ({PROJECT_COLUMNS}) VALUES ({marks(11)})",
                                 _project_values(home))
        except self.sql.integrity_error as exc:
            raise Conflict(f"user {user.email} (handle {user.handle}) or its home exists already") from exc

    def user(self, user_id: str) -> User | None:
        row = self._one(f"SELECT {USER_COLUMNS} FROM users WHERE id = ?", (user_id,))
        return _user(row) if row else None

    def user_by_email(self, email: str) -> User | None:
        row = self._one(f"SELECT {USER_COLUMNS} FROM users WHERE email_key = ?", (email_key(email),))
        return _user(row) if row else None

    def user_by_handle(self, handle: str) -> User | None:
        row = self._one(f"SELECT {USER_COLUMNS} FROM users WHERE handle = ?", (handle,))
        return _user(row) if row else None

    def users(self) -> list[User]:
        return [_user(r) for r in self._all(f"SELECT {USER_COLUMNS} FROM users ORDER BY email_key")]

    def users_by_id(self, user_ids: Sequence[str]) -> dict[str, User]:
        """The users of these ids, by id, in one statement (a page of tokens names up to its size of them)."""
        if not user_ids:
            return {}
        clause, params = self.sql.one_of("id", list(dict.fromkeys(user_ids)))
        return {(u := _user(r)).id: u for r in self._all(f"SELECT {USER_COLUMNS} FROM users WHERE {clause}", params)}

    def users_page(self, limit: int, offset: int) -> list[User]:
        """Users by email key, ``limit`` of them from the ``offset``-th: a page reads its own rows alone."""
        return [_user(r) for r in self._all(
            f"SELECT {USER_COLUMNS} FROM users ORDER BY email_key LIMIT ? OFFSET ?", (limit, offset))]

    def other_active_admins(self, user_id: str) -> int:
        """How many active admins there are besides ``user_id``, counted in SQL (the last-admin check's question:
        no user's row is read)."""
        row = self._one("SELECT COUNT(*) FROM users WHERE role = 'admin' AND active = ? AND id <> ?", (True, user_id))
        return int(row[0])

    def set_user_active(self, user_id: str, active: bool) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE users SET active = ? WHERE id = ?", (active, user_id))

    def set_user_role(self, user_id: str, role: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE users SET role = ? WHERE id = ?", (role, user_id))

    def session_generation(self, user_id: str) -> int | None:
        row = self._one("SELECT session_generation FROM users WHERE id = ?", (user_id,))
        return int(row[0]) if row else None

    def end_sessions(self, user_id: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE users SET session_generation = session_generation + 1 WHERE id = ?", (user_id,))

    # projects
    def project(self, project_id: str) -> Project | None:
        row = self._one(f"SELECT {PROJECT_COLUMNS} FROM projects WHERE id = ?", (project_id,))
        return _project(row) if row else None

    def projects(self) -> list[Project]:
        return [_project(r) for r in self._all(f"SELECT {PROJECT_COLUMNS} FROM projects ORDER BY id")]

    def ordinary_projects_page(self, limit: int, offset: int) -> list[Project]:
        """The ordinary projects (archived ones too; never a home) by id, ``limit`` of them from the ``offset``-th:
        a page of the projects a manager oversees reads its own rows alone."""
        return [_project(r) for r in self._all(
            f"SELECT {PROJECT_COLUMNS} FROM projects WHERE kind = 'ordinary' ORDER BY id LIMIT ? OFFSET ?",
            (limit, offset))]

    def projects_seen_by(self, user_id: str) -> list[tuple[Project, GrantLevel | None]]:
        """Every ordinary project and the homes ``user_id`` owns (what anyone's visibility starts from), each with
        the level of ``user_id``'s grant on it (None: no grant), in one statement."""
        return [(_project(r), r[11]) for r in self._all(
            f"SELECT {_PROJECT_P}, g.level FROM projects p"
            " LEFT JOIN grants g ON g.project_id = p.id AND g.user_id = ?"
            " WHERE p.kind = 'ordinary' OR p.owner_user_id = ? ORDER BY p.id", (user_id, user_id))]

    def project_with_grant(self, project_id: str, user_id: str) -> tuple[Project | None, GrantLevel | None]:
        """The project and the level of ``user_id``'s grant on it (None: none), in one statement."""
        row = self._one(f"SELECT {_PROJECT_P}, g.level FROM projects p"
                        " LEFT JOIN grants g ON g.project_id = p.id AND g.user_id = ? WHERE p.id = ?",
                        (user_id, project_id))
        return (_project(row), row[11]) if row else (None, None)

    def add_project(self, project: Project) -> None:
        try:
            with self.sql.transaction() as conn:
                conn.execute(f"INSERT INTO projects ({PROJECT_COLUMNS}) VALUES ({marks(11)})",
                             _project_values(project))
        except self.sql.integrity_error as exc:
            raise Conflict(f"project {project.id} exists already") from exc

    def update_project(self, project: Project) -> None:
        """Store every changeable field of ``project`` (all but id, kind, owner and creation time)."""
        with self.sql.transaction() as conn:
            conn.execute(
                "UPDATE projects SET name = ?, description = ?, status = ?, framework = ?, language = ?,"
                " custom_name = ?, custom_description = ? WHERE id = ?",
                (project.name, project.description, project.status, project.framework, project.language,
                 project.custom_name, project.custom_description, project.id))

    # grants
    def grant(self, user_id: str, project_id: str) -> Grant | None:
        row = self._one(f"SELECT {GRANT_COLUMNS} FROM grants WHERE user_id = ? AND project_id = ?",
                        (user_id, project_id))
        return _grant(row) if row else None

    def grants_for_user(self, user_id: str) -> list[Grant]:
        return [_grant(r) for r in self._all(
            f"SELECT {GRANT_COLUMNS} FROM grants WHERE user_id = ? ORDER BY project_id", (user_id,))]

    def grants_for_project(self, project_id: str) -> list[Grant]:
        return [_grant(r) for r in self._all(
            f"SELECT {GRANT_COLUMNS} FROM grants WHERE project_id = ? ORDER BY user_id", (project_id,))]

    def project_members(self, project_id: str, limit: int, offset: int) -> list[tuple[Grant, User]]:
        """The grants on the project with their users, by the users' email keys, ``limit`` of them from the
        ``offset``-th, in one statement: a page reads its own rows alone (by the grants_project index)."""
        return [(_grant(r), _user(r[4:])) for r in self._all(
            f"SELECT {_GRANT_G}, {_USER_U} FROM grants g JOIN users u ON u.id = g.user_id WHERE g.project_id = ?"
            " ORDER BY u.email_key LIMIT ? OFFSET ?", (project_id, limit, offset))]

    def set_grant(self, grant: Grant) -> None:
        """Insert the grant, or change the level of the one the user holds on that project."""
        with self.sql.transaction() as conn:
            conn.execute(
                f"INSERT INTO grants ({GRANT_COLUMNS}) VALUES ({marks(4)})"
                " ON CONFLICT (user_id, project_id) DO UPDATE SET level = excluded.level",
                (grant.user_id, grant.project_id, grant.level, grant.created_at))

    def remove_grant(self, user_id: str, project_id: str) -> bool:
        with self.sql.transaction() as conn:
            return conn.execute("DELETE FROM grants WHERE user_id = ? AND project_id = ?",
                                (user_id, project_id)).rowcount > 0

    # tokens
    def add_token(self, token: TokenRecord, secret_hash: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute(f"INSERT INTO tokens ({TOKEN_COLUMNS}, secret_hash) VALUES ({marks(12)})",
                         (*_token_values(token), secret_hash))

    def token(self, token_id: str) -> TokenRecord | None:
        row = self._one(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE id = ?", (token_id,))
        return _token(row) if row else None

    def token_with_hash(self, token_id: str) -> tuple[TokenRecord, str] | None:
        """The token and its stored secret hash, for authentication."""
        row = self._one(f"SELECT {TOKEN_COLUMNS}, secret_hash FROM tokens WHERE id = ?", (token_id,))
        return (_token(row), row[11]) if row else None

    def token_holder(self, token_id: str) -> tuple[TokenRecord, str, User | None] | None:
        """The token, its stored secret hash and its user (None: gone), in one statement: authentication's read."""
        row = self._one(f"SELECT {_TOKEN_T}, t.secret_hash, {_USER_U} FROM tokens t"
                        " LEFT JOIN users u ON u.id = t.user_id WHERE t.id = ?", (token_id,))
        if row is None:
            return None
        return _token(row), row[11], _user(row[12:]) if row[12] is not None else None

    def tokens(self, user_id: str | None = None) -> list[TokenRecord]:
        if user_id is None:
            rows = self._all(f"SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id")
        else:
            rows = self._all(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE user_id = ? ORDER BY created_at, id",
                             (user_id,))
        return [_token(r) for r in rows]

    def tokens_newest(self, user_id: str | None, limit: int, offset: int) -> list[TokenRecord]:
        """Tokens (one user's, or everyone's) newest first, ``limit`` of them from the ``offset``-th: a page reads
        its own rows alone."""
        return self._tokens_page(user_id, limit, offset, "created_at DESC, id DESC")

    def tokens_oldest(self, user_id: str | None, limit: int, offset: int) -> list[TokenRecord]:
        """A page of ``tokens`` as it orders them, oldest first."""
        return self._tokens_page(user_id, limit, offset, "created_at, id")

    def _tokens_page(self, user_id: str | None, limit: int, offset: int, order: str) -> list[TokenRecord]:
        mine, params = ("WHERE user_id = ? ", [user_id]) if user_id is not None else ("", [])
        return [_token(r) for r in self._all(
            f"SELECT {TOKEN_COLUMNS} FROM tokens {mine}ORDER BY {order} LIMIT ? OFFSET ?", [*params, limit, offset])]

    def add_token_below(self, token: TokenRecord, secret_hash: str, limit: int) -> int:
        """Insert the token only while its user holds fewer than ``limit`` tokens neither revoked nor expired at
        its ``created_at`` (``TokenRecord.state``'s rule, counted in SQL: a person's revoked and expired tokens
        stay, without end, and are never read); the count found, before the insert, either way.

        The count and the insert are one transaction that holds the user's row (PostgreSQL: ``FOR UPDATE``;
        SQLite: BEGIN IMMEDIATE holds the whole store), so two mints for one person, from two servers or two
        threads, count one after the other: the second sees the first's token, and ``limit`` holds."""
        with self.sql.transaction() as conn:
            conn.execute(f"SELECT id FROM users WHERE id = ?{self.sql.lock}", (token.user_id,))
            held = int(conn.execute("SELECT COUNT(*) FROM tokens WHERE user_id = ? AND revoked_at IS NULL"
                                    " AND (expires_at IS NULL OR expires_at > ?)",
                                    (token.user_id, token.created_at)).fetchone()[0])
            if held < limit:
                conn.execute(f"INSERT INTO tokens ({TOKEN_COLUMNS}, secret_hash) VALUES ({marks(12)})",
                             (*_token_values(token), secret_hash))
        return held

    def live_token_counts(self, now: str) -> list[tuple[Role | None, bool, tuple[str, ...], int]]:
        """Everyone's tokens neither revoked nor expired at ``now`` (``TokenRecord.state``'s rule), counted in SQL by
        what else their next call depends on: their user's role (None: the user is gone), whether that user is
        active, and their scopes. A row per such kind, a few dozen at most however many tokens there are."""
        return [(r[0], bool(r[1]), tuple(r[2].split()), int(r[3])) for r in self._all(
            "SELECT u.role, u.active, t.scopes, COUNT(*) FROM tokens t LEFT JOIN users u ON u.id = t.user_id"
            " WHERE t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?)"
            " GROUP BY u.role, u.active, t.scopes ORDER BY u.role, u.active, t.scopes", (now,))]

    def revoke_token(self, token_id: str, at: str) -> bool:
        """Mark the token revoked; False when it is unknown or revoked already."""
        with self.sql.transaction() as conn:
            return conn.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                (at, token_id)).rowcount > 0

    def touch_token(self, token_id: str, at: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", (at, token_id))

    def record_tool_call(self, token_id: str, tool: str, at: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE tokens SET last_tool = ?, last_tool_at = ? WHERE id = ?"
                         " AND (last_tool_at IS NULL OR last_tool_at <= ?)", (tool, at, token_id, at))


# Rows <-> records. Flags are bound as Python bools, which SQLite stores as 0/1 and PostgreSQL as BOOLEAN;
# either comes back through bool().

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
    """Scopes are stored space-separated."""
    return TokenRecord(id=row[0], user_id=row[1], name=row[2], scopes=tuple(row[3].split()), project_id=row[4],
                       created_at=row[5], expires_at=row[6], last_used_at=row[7], revoked_at=row[8],
                       last_tool=row[9], last_tool_at=row[10])


def _project_values(p: Project) -> tuple[Any, ...]:
    return (p.id, p.name, p.description, p.kind, p.status, p.framework, p.language, p.owner_user_id, p.created_at,
            p.custom_name, p.custom_description)


def _token_values(token: TokenRecord) -> tuple[Any, ...]:
    return (token.id, token.user_id, token.name, " ".join(token.scopes), token.project_id, token.created_at,
            token.expires_at, token.last_used_at, token.revoked_at, token.last_tool, token.last_tool_at)
