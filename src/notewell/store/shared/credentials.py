"""Browser sign-in credentials, in SQL both backends run: password hashes, one-time sign-in links, counted
sign-in attempts (a failure stays counted, a success is taken back), browser sessions.

Only hashes reach this module: argon2id hashes of passwords and SHA-256 hashes of sign-in link and session
secrets. Nothing stored here signs anyone in: whoever reads these tables (a backup) holds no secret.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from notewell.records.identity import WebSession
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

TYPED_KEYS_DROPPED = ("DELETE FROM sign_in_failures WHERE key LIKE 'email:%'",
                      "DELETE FROM sign_in_keys WHERE key LIKE 'email:%'")
"""The throttle's keys an earlier version made of what was typed as an email (an import of its export too)."""

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE passwords (
            user_id {key} PRIMARY KEY REFERENCES users (id),
            hash TEXT NOT NULL,
            updated_at {key} NOT NULL
        )
        """,
        """
        CREATE TABLE sign_in_links (
            hash {key} PRIMARY KEY,
            user_id {key} NOT NULL REFERENCES users (id),
            created_at {key} NOT NULL,
            expires_at {key} NOT NULL,
            used_at {key}
        )
        """,
        """
        CREATE TABLE sign_in_failures (
            key {key} NOT NULL,
            at {key} NOT NULL
        )
        """,
        "CREATE INDEX sign_in_failures_key ON sign_in_failures (key, at)",
        """
        CREATE TABLE web_keys (
            name {key} PRIMARY KEY,
            value TEXT NOT NULL
        )
        """,
    ),
    # Step 2: a sign-in attempt is counted before its password is checked, under an id of its own that a
    # success takes back; sign_in_keys has a row per counted key (an email, an address), locked while an
    # attempt is counted, so concurrent attempts on one key are counted one at a time on both backends.
    (
        "ALTER TABLE sign_in_failures ADD COLUMN attempt {key}",
        "CREATE INDEX sign_in_failures_attempt ON sign_in_failures (attempt)",
        """
        CREATE TABLE sign_in_keys (
            key {key} PRIMARY KEY
        )
        """,
    ),
    # Step 3: browser sessions kept here, each by the SHA-256 of the secret its cookie carries, with its user,
    # the user's session generation when it began and when it ends unless renewed. The cookies signed with a
    # key of web_keys end (their users sign in again), and the key goes: whoever read it from a backup could
    # sign a cookie for anyone.
    (
        """
        CREATE TABLE web_sessions (
            hash {key} PRIMARY KEY,
            user_id {key} NOT NULL REFERENCES users (id),
            generation INTEGER NOT NULL,
            created_at {key} NOT NULL,
            expires_at {key} NOT NULL,
            message TEXT
        )
        """,
        "CREATE INDEX web_sessions_expires ON web_sessions (expires_at)",
        "CREATE INDEX web_sessions_user ON web_sessions (user_id)",
        "DROP TABLE web_keys",
    ),
    # The throttle's keys named the email as typed (a password typed into that field stayed in the store): they
    # name the user's id now, or for no user a bucket its secret keys (access/sign_in.py); the typed ones go.
    (
        *TYPED_KEYS_DROPPED,
        """
        CREATE TABLE sign_in_secrets (
            name {key} PRIMARY KEY,
            value TEXT NOT NULL
        )
        """,
    ),
]
WEB_SESSION_COLUMNS = "user_id, generation, expires_at, message"


class SqlCredentials:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("credentials", dialect.rendered(MIGRATIONS))

    def set_password(self, user_id: str, password_hash: str, at: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("INSERT INTO passwords (user_id, hash, updated_at) VALUES (?, ?, ?)"
                         " ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at",
                         (user_id, password_hash, at))

    def password_hash(self, user_id: str) -> str | None:
        with self.sql.reading() as conn:
            row = conn.execute("SELECT hash FROM passwords WHERE user_id = ?", (user_id,)).fetchone()
        return str(row[0]) if row else None

    def add_link(self, link_hash: str, user_id: str, created_at: str, expires_at: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM sign_in_links WHERE expires_at < ?", (created_at,))
            conn.execute("INSERT INTO sign_in_links (hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                         (link_hash, user_id, created_at, expires_at))

    def link_user(self, link_hash: str, at: str) -> str | None:
        with self.sql.reading() as conn:
            row = conn.execute(
                "SELECT user_id FROM sign_in_links WHERE hash = ? AND used_at IS NULL AND expires_at > ?",
                (link_hash, at)).fetchone()
        return str(row[0]) if row else None

    def use_link(self, link_hash: str, at: str) -> str | None:
        with self.sql.transaction() as conn:
            row = conn.execute(
                "UPDATE sign_in_links SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?"
                " RETURNING user_id", (at, link_hash, at)).fetchone()
        return str(row[0]) if row else None

    def secret(self, name: str) -> str:
        """The store's random secret ``name``, made the first time it is asked for (by whichever server asks
        first: every server then reads the same)."""
        with self.sql.transaction() as conn:
            conn.execute("INSERT INTO sign_in_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                         (name, secrets.token_hex(32)))
            row = conn.execute("SELECT value FROM sign_in_secrets WHERE name = ?", (name,)).fetchone()
        return str(row[0])

    def count_attempt(self, limits: Sequence[tuple[str, int]], attempt: str, at: str, since: str) -> str | None:
        """Count one attempt (id ``attempt``) against every key, unless a key has its limit counted at or
        after ``since``: then nothing is counted and that key is returned. One transaction, each key's row
        in sign_in_keys locked first (in key order), so concurrent attempts never pass a limit together."""
        keys = sorted(dict(limits).items())
        with self.sql.transaction() as conn:
            for key, _ in keys:
                conn.execute("INSERT INTO sign_in_keys (key) VALUES (?)"
                             " ON CONFLICT (key) DO UPDATE SET key = excluded.key", (key,))
            for key, limit in keys:
                conn.execute("DELETE FROM sign_in_failures WHERE key = ? AND at < ?", (key, since))
                if conn.execute("SELECT count(*) FROM sign_in_failures WHERE key = ?", (key,)).fetchone()[0] >= limit:
                    return key
            for key, _ in keys:
                conn.execute("INSERT INTO sign_in_failures (key, at, attempt) VALUES (?, ?, ?)", (key, at, attempt))
        return None

    def forgive_attempt(self, attempt: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM sign_in_failures WHERE attempt = ?", (attempt,))

    # browser sessions
    def add_web_session(self, session_hash: str, session: WebSession, created_at: str, sweep: int) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM web_sessions WHERE hash IN (SELECT hash FROM web_sessions WHERE expires_at <= ?"
                         " ORDER BY expires_at LIMIT ?)", (created_at, sweep))
            conn.execute(f"INSERT INTO web_sessions (hash, {WEB_SESSION_COLUMNS}, created_at)"
                         " VALUES (?, ?, ?, ?, ?, ?)",
                         (session_hash, session.user_id, session.generation, session.expires_at,
                          None if session.message is None else self.sql.text(session.message), created_at))

    def web_session(self, session_hash: str, at: str) -> WebSession | None:
        with self.sql.reading() as conn:
            row = conn.execute(f"SELECT {WEB_SESSION_COLUMNS} FROM web_sessions WHERE hash = ? AND expires_at > ?",
                               (session_hash, at)).fetchone()
        return WebSession(user_id=row[0], generation=int(row[1]), expires_at=row[2], message=row[3]) if row else None

    def renew_web_session(self, session_hash: str, expires_at: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE web_sessions SET expires_at = ? WHERE hash = ? AND expires_at < ?",
                         (expires_at, session_hash, expires_at))

    def set_web_session_message(self, session_hash: str, message: str | None) -> None:
        with self.sql.transaction() as conn:
            conn.execute("UPDATE web_sessions SET message = ? WHERE hash = ?",
                         (None if message is None else self.sql.text(message), session_hash))

    def end_web_session(self, session_hash: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM web_sessions WHERE hash = ?", (session_hash,))

    def end_web_sessions(self, user_id: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM web_sessions WHERE user_id = ?", (user_id,))
