"""The stdio door, for clients that spawn the server: one caller for the life of the process.

The caller is the token in NOTEWELL_TOKEN, or without one the local owner (admin, every scope), which
is said on stderr so nobody mistakes a token-less launch for a restricted one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import cast

import anyio
from mcp.server.stdio import stdio_server

from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.mcp import log
from notewell.mcp.server import NotewellMCP, PrincipalSource
from notewell.mcp.stdio_eof import ReadUntilAnswered, Unanswered, WriteNotingAnswers
from notewell.mcp.stdio_input import BoundedLines, claimed_stdin
from notewell.mcp.stdio_malformed import AnsweringMalformed
from notewell.mcp.toolset import Toolset
from notewell.runtime import Runtime

TOKEN_ENV = "NOTEWELL_TOKEN"


def stdio_principal(rt: Runtime) -> Principal:
    """The caller for a stdio server; Unauthenticated when NOTEWELL_TOKEN is set but not valid."""
    secret = os.environ.get(TOKEN_ENV, "").strip()
    if not secret:
        sys.stderr.write(f"notewell: no {TOKEN_ENV} set: serving as the local owner (admin, every scope, every "
                         "ordinary project). Set NOTEWELL_TOKEN to act as one person.\n")
        return LOCAL_OWNER
    return rt.authentication.authenticate(secret)


def _caller(rt: Runtime, principal: Principal, secret: str) -> PrincipalSource:
    """Each request checks the token again (a revoke or a deactivation counts on the next call, as over HTTP)."""
    if principal.local_owner:
        return lambda _ctx: principal
    return lambda _ctx: rt.authentication.authenticate(secret)


async def serve_stdio(rt: Runtime, toolsets: Sequence[Toolset], principal: Principal) -> None:
    secret = os.environ.get(TOKEN_ENV, "").strip()
    mcp = NotewellMCP(rt, toolsets, _caller(rt, principal, secret))
    log.event("mcp.session.open", transport="stdio", user=principal.handle, tokenId=principal.token_id)
    unanswered = Unanswered()
    with claimed_stdin() as wire:
        lines = BoundedLines(wire)
        # the SDK's transport only iterates its stdin, so the bounded lines stand in for its file
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read_stream, write_stream):
            reading = ReadUntilAnswered(AnsweringMalformed(read_stream, write_stream, lines.take_refusal),
                                        unanswered)
            await mcp.server.run(reading, WriteNotingAnswers(write_stream, unanswered),
                                 mcp.server.create_initialization_options())
    log.event("mcp.session.close", transport="stdio", user=principal.handle, tokenId=principal.token_id)
