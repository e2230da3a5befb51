"""A running `notewell serve`, as it records itself in the store it serves."""

from __future__ import annotations

from dataclasses import dataclass

STDIO_URL = "stdio"
"""The url a `notewell serve --stdio` records: it has no address, one client spawned it and speaks on its pipes."""


@dataclass(frozen=True)
class RunningServer:
    id: str  # random, made when the server starts; its /healthz answers it as serverId (an HTTP server's)
    url: str  # where a client on the server's own machine reaches it: http://127.0.0.1:8765; STDIO_URL over stdio
    host: str  # the machine's name (socket.gethostname())
    pid: int
    started_at: str
    leading_since: str | None = None  # when it took the store's writer lease (it watches the vault); None: it follows
    words_only: str | None = None  # why it runs without meaning (--no-semantic), so embeds nothing; None: it embeds

    @property
    def stdio(self) -> bool:
        return self.url == STDIO_URL

    @property
    def where(self) -> str:
        """How a person finds it: its address, or a stdio server's process and machine."""
        return f"stdio (pid {self.pid} on {self.host})" if self.stdio else self.url
