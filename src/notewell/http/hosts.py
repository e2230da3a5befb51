"""Which Host headers the server answers (DNS-rebinding protection), for every door at once.

A page on another site can make a browser send requests to a server on the person's own machine by
pointing its own host name at 127.0.0.1 (DNS rebinding); the requests then carry that foreign name as
their Host. So every door answers only to localhost, 127.0.0.1 and [::1] (any port) and to each
``--allowed-host`` (``notes.example.com`` with any port, or ``host:port`` exactly); "*" turns the check off.
Anything else is 421 Misdirected Request before any door runs: the REST API, the web pages and
/install.sh (which writes the Host it was reached by into the script), and /mcp, whose SDK checks the same
names again together with Origin.

/healthz stays open to any Host: a load balancer's probe names the instance by its address, and the answer
holds nothing but "ok" and the toolsets' names.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from notewell.mcp import log

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
MISDIRECTED = (b"Invalid Host header: this server answers only to localhost and the names it was started with "
               b"(notewell serve --allowed-host NAME)")


class AllowedHosts:
    """The Host header values the server answers: localhost always, plus each allowed name (compared exactly,
    as the MCP SDK compares them: browsers send host names in lower case)."""

    def __init__(self, allowed: Sequence[str] = ()) -> None:
        self.any = "*" in allowed
        self.exact: set[str] = set()
        self.any_port: set[str] = set()  # a name that may come with any port
        for host in (*LOCAL_HOSTS, *allowed):
            has_port = host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")
            self.exact.add(host)
            if not has_port:
                self.any_port.add(host)

    def allows(self, host: str | None) -> bool:
        if self.any:
            return True
        if not host:
            return False
        name, _, port = host.rpartition(":")
        return host in self.exact or (port.isdigit() and not host.endswith("]") and name in self.any_port)

    def transport_security(self) -> TransportSecuritySettings:
        """The same names as the MCP SDK's settings (it checks /mcp's Host again, and its Origin)."""
        if self.any:
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        hosts = sorted(self.exact) + [f"{h}:*" for h in sorted(self.any_port)]
        origins = [f"{scheme}://{h}" for scheme in ("http", "https") for h in hosts]
        return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=origins)


class HostCheck:
    """ASGI middleware over the whole application: a request with a Host not allowed is answered 421 (plain
    text, as the MCP SDK answers it), except on the open paths (/healthz)."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts, open_paths: Collection[str] = ()) -> None:
        self.app = app
        self.hosts = hosts
        self.open_paths = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self.open_paths:  # no door takes websockets
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host")
        if self.hosts.allows(host):
            await self.app(scope, receive, send)
            return
        log.event("http.misdirected", method=scope.get("method"), host=(host or "")[:200])
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(MISDIRECTED)).encode())]})
        await send({"type": "http.response.body", "body": MISDIRECTED})
