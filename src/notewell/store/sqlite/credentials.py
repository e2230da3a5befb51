"""Browser sign-in credentials on SQLite: password hashes, one-time sign-in links, failed sign-ins, the cookie key.

Only hashes reach this module: argon2id hashes of passwords and SHA-256 hashes of sign-in link secrets.
"""

from __future__ import annotations

import secrets

from notewell.store.sqlite.database import SqliteDatabase

MIGRATIONS = [
    """
    CREATE TABLE passwords (
        user_id TEXT PRIMARY KEY REFERENCES users (id),
        hash TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE sign_in_links (
        hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users (id),
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
    );
    CREATE TABLE sign_in_failures (
        key TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE INDEX sign_in_failures_key ON sign_in_failures (key, at);
    CREATE TABLE web_keys (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )
    """,
]


class SqliteCredentials:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        db.migrate("credentials", MIGRATIONS)

    def set_password(self, user_id: str, password_hash: str, at: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO passwords (user_id, hash, updated_at) VALUES (?, ?, ?)"
                         " ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at",
                         (user_id, password_hash, at))

    def password_hash(self, user_id: str) -> str | None:
        row = self.db.conn.execute("SELECT hash FROM passwords WHERE user_id = ?", (user_id,)).fetchone()
        return str(row[0]) if row else None

    def add_link(self, link_hash: str, user_id: str, created_at: str, expires_at: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sign_in_links WHERE expires_at < ?", (created_at,))
            conn.execute("INSERT INTO sign_in_links (hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                         (link_hash, user_id, created_at, expires_at))

    def link_user(self, link_hash: str, at: str) -> str | None:
        row = self.db.conn.execute(
            "SELECT user_id FROM sign_in_links WHERE hash = ? AND used_at IS NULL AND expires_at > ?",
            (link_hash, at)).fetchone()
        return str(row[0]) if row else None

    def use_link(self, link_hash: str, at: str) -> str | None:
        with self.db.transaction() as conn:
            row = conn.execute(
                "UPDATE sign_in_links SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?"
                " RETURNING user_id", (at, link_hash, at)).fetchone()
        return str(row[0]) if row else None

    def add_failure(self, key: str, at: str, forget_before: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sign_in_failures WHERE key = ? AND at < ?", (key, forget_before))
            conn.execute("INSERT INTO sign_in_failures (key, at) VALUES (?, ?)", (key, at))

    def failures_since(self, key: str, since: str) -> int:
        row = self.db.conn.execute("SELECT count(*) FROM sign_in_failures WHERE key = ? AND at >= ?",
                                   (key, since)).fetchone()
        return int(row[0])

    def signing_key(self, name: str) -> str:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO web_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                         (name, secrets.token_urlsafe(48)))
            row = conn.execute("SELECT value FROM web_keys WHERE name = ?", (name,)).fetchone()
        return str(row[0])
