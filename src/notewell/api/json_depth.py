"""No JSON body may nest deeper than notewell.json_bounds.JSON_DEPTH_MAX: a global dependency of the REST
application, as refuse_nul is. It refuses the request as invalid arguments (400 naming the body's field)
before any handler or service sees the value; a body FastAPI could not parse at all is its own 400."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from notewell.json_bounds import check_json_depth


async def refuse_deep_json(request: Request) -> None:
    if not await request.body() or "json" not in request.headers.get("content-type", "json"):
        return
    try:
        body: Any = await request.json()  # parsed once: Starlette keeps what FastAPI parsed for the body
    except (ValueError, RecursionError):  # only an operation without a body gets here, and it reads none
        return
    if isinstance(body, dict):
        for name, value in body.items():
            check_json_depth(str(name), value)
    else:
        check_json_depth("body", body)
