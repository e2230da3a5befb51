"""The running servers, in SQL both backends run: each `notewell serve` adds its row when it starts
listening and deletes it when it stops cleanly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notewell.records.servers import RunningServer
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.migrations import Migration

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE running_servers (
            id {key} PRIMARY KEY,
            url TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at {key} NOT NULL
        )
        """,
    ),
    # Step 2: which server holds the writer lease, and since when (doctor, /readyz and /metrics name it).
    (
        "ALTER TABLE running_servers ADD COLUMN leading_since TEXT",
    ),
    # Step 3: why a server runs without meaning (its embedding runner embeds nothing): embed --status and doctor
    # say the queue only waits while every running server is such a one.
    (
        "ALTER TABLE running_servers ADD COLUMN words_only TEXT",
    ),
]

COLUMNS = "id, url, host, pid, started_at, leading_since, words_only"


class SqlServers:
    def __init__(self, dialect: Dialect) -> None:
        self.sql = dialect
        dialect.migrate("servers", dialect.rendered(MIGRATIONS))

    def add(self, server: RunningServer, replaces: Sequence[str] = ()) -> None:
        """Record ``server``, deleting the rows ``replaces`` names (servers known to be gone) in the same
        transaction."""
        with self.sql.transaction() as conn:
            for gone in replaces:
                conn.execute("DELETE FROM running_servers WHERE id = ?", (gone,))
            conn.execute(f"INSERT INTO running_servers ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (server.id, server.url, server.host, server.pid, server.started_at, server.leading_since,
                          server.words_only))

    def set_leading(self, server_id: str, since: str | None) -> None:
        """Record that ``server_id`` took the writer lease at ``since`` (None: it let go); a server taking it
        clears every other's claim (one holds it at a time, and a killed holder never cleared its own)."""
        with self.sql.transaction() as conn:
            if since is not None:
                conn.execute("UPDATE running_servers SET leading_since = NULL WHERE id <> ?", (server_id,))
            conn.execute("UPDATE running_servers SET leading_since = ? WHERE id = ?", (since, server_id))

    def set_words_only(self, server_id: str, why: str) -> None:
        """Record that ``server_id`` runs without meaning from now on, and why (its model turned out not to load)."""
        with self.sql.transaction() as conn:
            conn.execute("UPDATE running_servers SET words_only = ? WHERE id = ?", (why, server_id))

    def remove(self, server_id: str) -> None:
        with self.sql.transaction() as conn:
            conn.execute("DELETE FROM running_servers WHERE id = ?", (server_id,))

    def store_identity(self) -> str | None:
        return self.sql.instance()

    def running(self) -> list[RunningServer]:
        """Every recorded server, the most recently started first."""
        with self.sql.reading() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM running_servers ORDER BY started_at DESC, id").fetchall()
        return [_server(row) for row in rows]


def _server(row: Sequence[Any]) -> RunningServer:
    server_id, url, host, pid, started_at, leading_since, words_only = row
    return RunningServer(str(server_id), str(url), str(host), int(pid), str(started_at),
                         str(leading_since) if leading_since is not None else None,
                         str(words_only) if words_only is not None else None)
