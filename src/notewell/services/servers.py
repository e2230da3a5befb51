"""Which `notewell serve` processes run on this store, and where.

A server records itself (a random id, the address a client on its own machine reaches, the machine and the
process) when it starts listening, and deletes the record when it stops cleanly. A server killed outright
leaves its record behind: the next server on the same address, or on the same machine once that process
is gone, deletes it, and a record is believed only while its address answers /healthz with its id. A stdio
server (`serve --stdio`, spawned by one client) records itself as well, with no address (STDIO_URL): it
embeds, watches and runs jobs as an HTTP server does, so the commands that ask which servers run on the store
(`embed --status`, `doctor`, and `restore` and `repair`, which refuse to run beside one) must count it. Its record
is believed, on its own machine, while its process lives. The command line asks here for the address of the
server that runs (`user login-link`: an HTTP one) and to tell its own store's server from another program on a
port (`doctor`).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import urllib.request
from urllib.error import URLError

from notewell.records.servers import RunningServer
from notewell.store.base import ServerRepository
from notewell.timestamps import now_iso

HEALTH_TIMEOUT_S = 1.0
HEALTH_PATH = "/healthz"
RESTART_WITH_MEANING = ("restart the server with meaning on (without --no-semantic, and semantic = true in its "
                        "notewell.toml), or run `notewell embed` to embed the queue now")
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a local address is asked directly


def new_server_id() -> str:
    return secrets.token_hex(8)


def local_url(host: str, port: int) -> str:
    """The address a client on this machine uses for a server listening on ``host``:``port`` (one listening on
    every address is reached on the loopback)."""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def server_id_at(url: str, timeout: float = HEALTH_TIMEOUT_S) -> str | None:
    """The serverId ``url``/healthz answers; None when nothing answers there in time, or not a Notewell server."""
    try:
        with _NO_PROXY.open(url.rstrip("/") + HEALTH_PATH, timeout=timeout) as response:
            data = json.loads(response.read(64 * 1024))
    except (URLError, OSError, ValueError):
        return None
    server_id = data.get("serverId") if isinstance(data, dict) else None
    return server_id if isinstance(server_id, str) and server_id else None


class ServerRegistry:
    """The store's record of its running servers (no Principal: only the process that serves writes its own
    row, and the local command line reads them)."""

    def __init__(self, servers: ServerRepository) -> None:
        self.servers = servers

    def announce(self, server_id: str, url: str, words_only: str | None = None) -> RunningServer:
        """Record this process as the server ``server_id`` listening at ``url`` (``words_only``: why it runs
        without meaning, so embeds nothing); records it replaces (the same address, or a process of this machine
        that is gone) are deleted."""
        me = RunningServer(server_id, url, socket.gethostname(), os.getpid(), now_iso(), words_only=words_only)
        gone = [s.id for s in self.servers.running() if (s.url == url and not me.stdio)
                or (s.host == me.host and (s.pid == me.pid or not _alive(s.pid)))]
        self.servers.add(me, replaces=gone)
        return me

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
        cannot be asked: it is not counted, as another machine's 127.0.0.1 address is not)."""
        here = socket.gethostname()

        def runs(s: RunningServer) -> bool:
            return s.host == here and _alive(s.pid) if s.stdio else server_id_at(s.url) == s.id
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
