"""notewell serve: the HTTP server (notewell.http.app: /mcp and every other door), or MCP over stdio (--stdio);
either watches the vault unless --no-watch, and runs the learning loop's jobs unless --no-jobs."""

from __future__ import annotations

import errno
import os
import signal
import socket
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from notewell.cli.app import DbOpt, PortOpt, VaultOpt, app, cli_message, fail, runtime
from notewell.errors import NotewellError
from notewell.http.door import ServeOptions
from notewell.http.ops import METRICS_TOKEN_ENV, metrics_secret_hash
from notewell.malloc_arenas import cap_malloc_arenas
from notewell.mcp import log
from notewell.mcp.registry import TOOLSETS, choose
from notewell.records.servers import STDIO_URL
from notewell.runtime import Runtime
from notewell.services.servers import local_url, new_server_id

if TYPE_CHECKING:  # imported where it serves: `notewell` commands that do not serve start without it
    import uvicorn

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

WatchOpt = Annotated[bool, typer.Option("--watch/--no-watch", help="Sync each change of the vault as it happens "
                                                                   "(default), or serve the store as it is.")]
JobsOpt = Annotated[bool, typer.Option("--jobs/--no-jobs", help="Run the brain's learning loop (KEA's jobs) while "
                                                                "this server holds the store's job lease (default), "
                                                                "or leave them to `notewell worker`.")]
LogLevelOpt = Annotated[
    str | None,
    typer.Option("--log-level", help=f"{', '.join(log.LEVELS)}: request lines are info (default: "
                                     f"${log.LOG_LEVEL_ENV}, else info over HTTP and warning over stdio)."),
]


@app.command("serve")
def serve_command(
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")] = DEFAULT_HOST,
    port: PortOpt = DEFAULT_PORT,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option("--allowed-host", help="A Host header to accept besides localhost, e.g. notes.example.com "
                                            "behind a proxy (repeatable; '*' accepts any)."),
    ] = None,
    toolsets: Annotated[
        list[str] | None,
        typer.Option("--toolsets", help=f"Comma-separated toolsets to offer: {', '.join(TOOLSETS)} (default: all)."),
    ] = None,
    stdio: Annotated[bool, typer.Option("--stdio", help="Serve one client over stdin/stdout instead of HTTP; "
                                                        "acts for the token in NOTEWELL_TOKEN, else the local "
                                                        "owner.")] = False,
    watch: WatchOpt = True,
    jobs: JobsOpt = True,
    semantic: Annotated[bool, typer.Option("--semantic/--no-semantic", help="Find memories, knowledge and sessions "
                                           "by meaning as well as by words (default), or by words only.")] = True,
    log_level: LogLevelOpt = None,
    log_format: Annotated[str | None, typer.Option(
        "--log-format", help=f"{' or '.join(log.FORMATS)}: each line with its UTC time, as op=… text or one JSON "
                             f"object (default: ${log.LOG_FORMAT_ENV}, else text).")] = None,
    secure_cookies: Annotated[bool, typer.Option(
        "--secure-cookies", help="Mark the web pages' session cookie Secure: use it when browsers reach the "
                                 "server over HTTPS (a TLS proxy in front).")] = False,
    serve_metrics: Annotated[bool, typer.Option(
        "--metrics", help="Serve GET /metrics (Prometheus text) to a scraper sending the secret in "
                          "$NOTEWELL_METRICS_TOKEN as a bearer token.")] = False,
    vault: VaultOpt = None,
    db: DbOpt = None,
) -> None:
    """Serve the vault to MCP clients: Streamable HTTP at http://HOST:PORT/mcp with bearer tokens, or --stdio."""
    cap_malloc_arenas()  # before any thread of the server's: docs/performance.md, "Meaning"
    with runtime(vault, db) as rt:
        chosen = choose(toolsets)
        log.setup(log.resolve_level(log_level, "warning" if stdio else "info"), log.resolve_format(log_format))
        rt.indexing.sync_projects()
        if not semantic:
            rt.meaning.turn_off("this server runs with --no-semantic")
        if stdio:
            from notewell.mcp.stdio import serve_stdio, stdio_principal

            principal = stdio_principal(rt)
            server_id = new_server_id()
            _announce(rt, server_id, STDIO_URL)  # embed --status and doctor count it, as an HTTP server
            try:
                watcher = rt.indexing.watch(lambda leading: rt.servers.leading(server_id, leading)) if watch else None
                embedder = rt.meaning.run_in_background()
                runner = rt.job_runner().start() if jobs else None
                try:
                    anyio.run(serve_stdio, rt, chosen, principal)
                finally:
                    if runner is not None:
                        runner.stop()
                    embedder.stop()
                    if watcher is not None:
                        watcher.stop()
            finally:
                _withdraw(rt, server_id)
            return
        secret = metrics_secret_hash(os.environ.get(METRICS_TOKEN_ENV)) if serve_metrics else None
        _serve_http(rt, ServeOptions(chosen, allowed_host or [], watch=watch, jobs=jobs, secure_cookies=secure_cookies,
                                     metrics_secret_hash=secret), host, port)


def bind_or_fail(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything says the server runs; a port in use is one error line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):  # the port: taken, or below 1024 without the right
            raise fail(f"--port: cannot listen on {host}:{port} ({exc.strerror}); stop what uses it, or pass "
                       "another --port (make serve: PORT=...)") from None
        raise fail(f"--host: cannot listen on {host}:{port} ({exc.strerror or exc}); pass an address of this "
                   "machine (127.0.0.1, 0.0.0.0, ::, or one of its interfaces)") from None
    sock.listen(2048)
    return sock


def _serve_http(rt: Runtime, options: ServeOptions, host: str, port: int) -> None:
    import uvicorn

    from notewell.http.app import build_app
    from notewell.http.server import server_config
    from notewell.mcp.http import MCP_PATH

    if host not in ("127.0.0.1", "localhost", "::1") and not options.allowed_hosts:
        log.logger.warning(log.line("serve.hosts", host=host, message="clients must use localhost unless you pass "
                                "--allowed-host with the name they connect to"))
    try:
        app = build_app(rt, options)
    except NotewellError as exc:
        raise fail(cli_message(exc)) from None
    sock = bind_or_fail(host, port)
    _announce(rt, options.server_id, local_url(host, port))  # login-link and doctor find it there
    # the log's own form (its time, text or JSON), as every other line on stderr: docs/operations.md
    base = local_url(host, port).rstrip("/")
    log.event("serve.listening", listen=f"{host}:{port}", mcp=f"{base}{MCP_PATH}", rest=f"{base}/api/v1",
              docs=f"{base}/api/v1/docs", web=f"{base}/", toolsets=",".join(t.name for t in options.toolsets),
              watching=options.watch, message="Ctrl-C stops it")
    server = uvicorn.Server(server_config(app, host, port))
    previous = signal.signal(signal.SIGTERM, _stop_cleanly(server))
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        _withdraw(rt, options.server_id)


def _stop_cleanly(server: uvicorn.Server) -> Callable[[int, FrameType | None], None]:
    """SIGTERM (systemd's stop, docker stop) as Ctrl-C, whenever it comes: uvicorn's own handler, once installed,
    shuts down gracefully and raises the signal again after restoring this one, which by default killed the process
    (exit 143) before the record of this server was cleared. This handler only asks the server to exit, as uvicorn's
    does: a SIGTERM before uvicorn listens is then honoured at its first tick. (It raised SystemExit, which Python
    swallows when the signal lands in a weakref callback or a __del__: the server then served on, deaf to SIGTERM.)"""

    def stop(_signum: int, _frame: FrameType | None) -> None:
        server.should_exit = True

    return stop


def _announce(rt: Runtime, server_id: str, url: str) -> None:
    """Record this process as the server ``server_id`` at ``url`` (STDIO_URL over stdio), saying why it runs
    without meaning when it does (its embedding runner then embeds nothing: embed --status and doctor say so):
    switched off, or, once it is first needed, its model does not load (NOTEWELL_EMBEDDING_MODEL astray in this
    server's environment, the package missing here: the commands an operator runs may load theirs)."""
    words_only = rt.meaning.unavailable if rt.meaning.switched_off else None  # switched off: no model is loaded
    rt.servers.announce(server_id, url, words_only)
    rt.meaning.when_missing(lambda why: rt.servers.words_only(server_id, f"its embedding model does not load: {why}"))


def _withdraw(rt: Runtime, server_id: str) -> None:
    """Clear this server's record at a clean stop; a store gone away meanwhile leaves it to the next server on
    this address (a record whose address does not answer with its id is not believed)."""
    try:
        rt.servers.withdraw(server_id)
    except Exception as exc:  # the database went away during shutdown: say so, and stop anyway
        log.logger.warning(log.line("serve.withdraw", outcome="kept", message="this server's record stays in the "
                                f"store ({' '.join(str(exc).split())[:200]})"))
