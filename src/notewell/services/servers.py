"""Which `notewell serve` processes run on this store, and where.

A server records itself (a random id, the address a client on its own machine reaches, the machine and the
process) when it starts listening, and deletes the record when it stops cleanly. A server killed outright
leaves its record behind: the next server on the same address, or on the same machine once that process
is gone, deletes it, and a record is believed only while its address answers /healthz with its id and with
this store's identity. A stdio
server (`serve --stdio`, spawned by one client) records itself as well, with no address (STDIO_URL): it
embeds, watches and runs jobs as an HTTP server does, so the commands that ask which servers run on the store
(`embed --status`, `doctor`, and `restore` and `repair`, which refuse to run beside one) must count it. Its record
is believed, on its own machine, while its process lives. The command line asks here for the address of the
server that runs (`user login-link`: an HTTP one) and to tell its own store's server from another program on a
port (`doctor`).

A copy of a store (a backup file used as a store, a dump restored into another database, a restore cut short
before it withdrew the source's records) carries the source's records, ids and all, while the source's server
still answers them. So a server's /healthz also says which store it opened (``store_id``: a digest of what the
database itself says it is, never of its rows: Dialect.instance), and a record is believed only where that is
this store's. Where either side cannot tell (a server of an earlier version, a database that will not say), the
record is believed as before: restore and repair must never run beside a real server.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import urllib.request
from dataclasses import dataclass
from functools import cached_property
from urllib.error import URLError

from notewell.records.servers import RunningServer
from notewell.store.base import ServerRepository
from notewell.timestamps import now_iso

HEALTH_TIMEOUT_S = 1.0
HEALTH_PATH = "/healthz"
RESTART_WITH_MEANING = ("fix what it says and restart the server with meaning on (without --no-semantic, and "
                        "semantic = true in its notewell.toml), or run `notewell embed` to embed the queue now")
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a local address is asked directly


def new_server_id() -> str:
    return secrets.token_hex(8)


def local_url(host: str, port: int) -> str:
    """The address a client on this machine uses for a server listening on ``host``:``port`` (one listening on
    every address is reached on the loopback)."""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@dataclass(frozen=True)
class Answer:
    """What a server's /healthz says of itself: its id, and the store it opened (None: it does not say)."""

    server_id: str
    store_id: str | None

    def serves(self, server: RunningServer, store_id: str | None) -> bool:
        """Is this the recorded ``server``, serving the store whose identity is ``store_id``? Believed when
        either side cannot tell which store it is."""
        return self.server_id == server.id and (self.store_id is None or store_id is None or self.store_id == store_id)


def store_digest(instance: str | None) -> str | None:
    """A store's identity as /healthz shows it to anyone who asks: a digest, not the inode or the cluster's
    system identifier."""
    return hashlib.sha256(instance.encode()).hexdigest()[:32] if instance is not None else None


def answer_at(url: str, timeout: float = HEALTH_TIMEOUT_S) -> Answer | None:
    """What ``url``/healthz answers; None when nothing answers there in time, or not a Notewell server."""
    try:
        with _NO_PROXY.open(url.rstrip("/") + HEALTH_PATH, timeout=timeout) as response:
            data = json.loads(response.read(64 * 1024))
    except (URLError, OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    server_id, store_id = data.get("serverId"), data.get("storeId")
    if not isinstance(server_id, str) or not server_id:
        return None
    return Answer(server_id, store_id if isinstance(store_id, str) and store_id else None)


class ServerRegistry:
    """The store's record of its running servers (no Principal: only the process that serves writes its own
    row, and the local command line reads them)."""

    def __init__(self, servers: ServerRepository) -> None:
        self.servers = servers

    @cached_property
    def store_id(self) -> str | None:
        """This store's identity, as its servers' /healthz says it (None: it cannot be told)."""
        return store_digest(self.servers.store_identity())

    def announce(self, server_id: str, url: str, words_only: str | None = None) -> RunningServer:
        """Record this process as the server ``server_id`` listening at ``url`` (``words_only``: why it runs
        without meaning, so embeds nothing); records it replaces (the same address, or a process of this machine
        that is gone) are deleted."""
        me = RunningServer(server_id, url, socket.gethostname(), os.getpid(), now_iso(), words_only=words_only)
        gone = [s.id for s in self.servers.running() if (s.url == url and not me.stdio)
                or (s.host == me.host and (s.pid == me.pid or not _alive(s.pid)))]
        self.servers.add(me, replaces=gone)
        return me

    def words_only(self, server_id: str, why: str) -> None:
        """This process's server ``server_id`` found it must run without meaning after it was recorded (its
        embedding model does not load: the model is loaded when first needed, not as the server starts)."""
        self.servers.set_words_only(server_id, why)

    def withdraw(self, server_id: str) -> None:
        self.servers.remove(server_id)

    def leading(self, server_id: str, leading: bool) -> None:
        """This process's server ``server_id`` took (or let go of) the writer lease now."""
        self.servers.set_leading(server_id, now_iso() if leading else None)

    def leader(self) -> RunningServer | None:
        """The recorded server that holds the writer lease, if one says so."""
        return next((s for s in self.recorded() if s.leading_since is not None), None)

    def recorded(self) -> list[RunningServer]:
        """Every record, the most recently started first, whether or not its server still answers."""
        return self.servers.running()

    def serving(self) -> list[RunningServer]:
        """The recorded servers that run now, as far as this machine can tell, newest first: an HTTP one whose
        address answers with its id, a stdio one of this machine whose process lives (one of another machine
        cannot be asked: it is not counted, as another machine's 127.0.0.1 address is not). An HTTP one that
        says it serves another store (the source of this copy) is not counted."""
        here = socket.gethostname()

        def runs(s: RunningServer) -> bool:
            if s.stdio:
                return s.host == here and _alive(s.pid)
            answer = answer_at(s.url)
            return answer is not None and answer.serves(s, self.store_id)
        return [s for s in self.recorded() if runs(s)]

    def embedding_stalled(self) -> str | None:
        """Why the embedding queue only waits though servers run: every server answering now runs without
        meaning, so none embeds (each named, with why; the fix is ``RESTART_WITH_MEANING``); None when one of them
        embeds, or when none answers (a server started then embeds as it runs). Every server runs an embedding
        runner, leading or not; a stdio server too."""
        serving = self.serving()
        if not serving or any(s.words_only is None for s in serving):
            return None
        named = ", ".join(f"{s.where} ({s.words_only})" for s in serving)
        return f"no running server embeds: {named}"


def _alive(pid: int) -> bool:
    if pid <= 0:  # never a signal to a process group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
