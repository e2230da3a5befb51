"""The operator's door: GET /readyz for load balancers, and GET /metrics for a Prometheus scraper.

/readyz answers 200 when the store answers within ``READY_TIMEOUT_S`` (with the index's size and the writer
lease's holder), 503 otherwise, or when the store cannot write (its disk full, it read-only: the reason names
which, and the fix), or when a newer Notewell has upgraded the store's schema past this server's
code: a balancer takes such a server out of rotation, and back when it returns or is upgraded. /metrics is off
unless ``notewell serve --metrics`` is given, and then wants ``Authorization: Bearer`` with the secret of
``$NOTEWELL_METRICS_TOKEN`` (kept here as its SHA-256 only, compared in constant time): the sizes and routes
it shows are the operator's business. Both answer any Host (a scraper names a server by its address).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from notewell import metrics
from notewell.errors import ConfigError
from notewell.http.door import Door, ServeOptions
from notewell.runtime import Runtime

READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
METRICS_TOKEN_ENV = "NOTEWELL_METRICS_TOKEN"
METRICS_TOKEN_MIN_CHARS = 16
READY_TIMEOUT_S = 5.0


def metrics_secret_hash(secret: str | None) -> str:
    """The SHA-256 of the scraper's secret, after checking there is one long enough."""
    if not secret or len(secret.strip()) < METRICS_TOKEN_MIN_CHARS:
        raise ConfigError(f"--metrics: set {METRICS_TOKEN_ENV} to a secret of {METRICS_TOKEN_MIN_CHARS}+ characters "
                          "(the scraper sends it as a bearer token), e.g. $(openssl rand -hex 24)")
    return hashlib.sha256(secret.strip().encode()).hexdigest()


def _bearer_hash(request: Request) -> str:
    scheme, _, secret = request.headers.get("authorization", "").partition(" ")
    return hashlib.sha256(secret.strip().encode()).hexdigest() if scheme.lower() == "bearer" and secret else ""


def ops_door(rt: Runtime, options: ServeOptions) -> Door:
    async def readyz(_request: Request) -> JSONResponse:
        try:
            ready = await asyncio.wait_for(run_in_threadpool(rt.health.ready), READY_TIMEOUT_S)
        except Exception as exc:  # the answer a balancer reads: why, without the URL or a traceback
            metrics.STORE_ERRORS.inc()
            reason = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
            return JSONResponse({"status": "unready", "reason": f"store unreachable ({reason})",
                                 "serverId": options.server_id}, status_code=503)
        if ready.schema_ahead:  # a newer Notewell upgraded the store: this server may misread it
            return JSONResponse({"status": "unready", "reason": "the store's schema is newer than this server's ("
                                 f"{', '.join(ready.schema_ahead)}): upgrade this server",
                                 "serverId": options.server_id}, status_code=503)
        if ready.cannot_write:  # reads would work, writes not: out of rotation until an operator frees it
            return JSONResponse({"status": "unready", "reason": f"the store cannot write: {ready.cannot_write}",
                                 "serverId": options.server_id}, status_code=503)
        leader = ready.leader
        return JSONResponse({"status": "ready", "documents": ready.documents, "indexBytes": ready.index_bytes,
                             "serverId": options.server_id,
                             "leader": None if leader is None else {"serverId": leader.id, "host": leader.host,
                                                                    "pid": leader.pid, "url": leader.url,
                                                                    "since": leader.leading_since}})

    async def scrape(request: Request) -> Response:
        expected = options.metrics_secret_hash
        if expected is None or not hmac.compare_digest(_bearer_hash(request), expected):
            return JSONResponse({"error": "unauthorized: send Authorization: Bearer $" + METRICS_TOKEN_ENV},
                                status_code=401, headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
        body = await run_in_threadpool(metrics.render, rt.health.sizes)
        return Response(body, media_type=metrics.CONTENT_TYPE)

    routes = [Route(READY_PATH, endpoint=readyz, methods=["GET"])]
    paths = [READY_PATH]
    if options.metrics_secret_hash is not None:
        routes.append(Route(METRICS_PATH, endpoint=scrape, methods=["GET"]))
        paths.append(METRICS_PATH)
    return Door("ops", routes, open_paths=paths)
