"""Each door of the HTTP server, adapted from its own package to a Door (see notewell.http.door).

A door's package knows nothing of this one; the adapter here builds it from the runtime and the serve options.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from notewell.api.app import PREFIX as API_PREFIX
from notewell.api.app import build_api
from notewell.http.door import Door, ServeOptions
from notewell.http.hosts import AllowedHosts
from notewell.http.tasks import BackgroundTask
from notewell.mcp.http import build_mcp_http, sweep_sessions
from notewell.runtime import Runtime
from notewell.web.app import build_web_app

HEALTH_PATH = "/healthz"


def health_door(rt: Runtime, options: ServeOptions) -> Door:
    """GET /healthz, unauthenticated: the server is up, which MCP toolsets it offers, its id (the one it
    records in the store it serves, so `notewell doctor` knows its own store's server) and the identity of that
    store (which a copy of the store, carrying the record, does not share: services/servers.py)."""
    store_id = rt.servers.store_id  # read once, as the server opened its store

    async def healthz(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "toolsets": [t.name for t in options.toolsets],
                             "serverId": options.server_id, "storeId": store_id})

    # Open to any Host (notewell.http.hosts): a load balancer's probe names the instance by its address.
    return Door("health", [Route(HEALTH_PATH, endpoint=healthz, methods=["GET"])], open_paths=[HEALTH_PATH])


def mcp_door(rt: Runtime, options: ServeOptions) -> Door:
    """MCP over Streamable HTTP at /mcp, for bearer tokens."""
    mcp = build_mcp_http(rt, options.toolsets, security=AllowedHosts(options.allowed_hosts).transport_security(),
                         json_response=options.json_response)
    sweeper = BackgroundTask("mcp.session_sweeper",
                             lambda: sweep_sessions(mcp.sessions, mcp.cap, options.sweep_every, options.orphan_after))
    return Door("mcp", [mcp.route], lifespan=mcp.run, tasks=[sweeper])


def rest_door(rt: Runtime, _options: ServeOptions) -> Door:
    """The REST API at /api/v1: bearer tokens, checked per request by its own dependency."""
    api = build_api(rt)
    mount = Mount(API_PREFIX, app=api)
    # Every path under the prefix, control characters too, reaches the API, which answers a problem+json 404
    # (Starlette's pattern stops at a newline, and the bare text 404 below would not be the API's answer).
    mount.path_regex = re.compile(mount.path_regex.pattern, re.DOTALL)
    return Door("rest", [mount])


def web_door(rt: Runtime, options: ServeOptions) -> Door:
    """The browser pages at "/", with session cookies and CSRF (mount it last: it matches every path)."""
    return Door("web", [Mount("", app=build_web_app(rt, https_only=options.secure_cookies))])
