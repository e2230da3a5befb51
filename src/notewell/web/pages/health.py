"""The loop's health (External Brain): the seed's signals drawn as charts, for the signed-in person, or for the
whole team (``?scope=team``, admins only); the same numbers as GET /api/v1/brain/health."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from notewell.services.brain_health import HEALTH_DAYS_DEFAULT, HEALTH_DAYS_MAX
from notewell.web.health_charts import day_bars, funnel_bars, row_bars
from notewell.web.render import page
from notewell.web.session import call, services, signed_in, whole_number


async def health_page(request: Request) -> Response:
    p = await signed_in(request)
    team = request.query_params.get("scope") == "team"
    given = whole_number(request.query_params.get("days", ""), 3)
    days = given if given is not None and 1 <= given <= HEALTH_DAYS_MAX else HEALTH_DAYS_DEFAULT
    health = await call(services(request).brain.health, p, days=days, team=team)
    closed = [(d.day, d.count) for d in health.sessions_closed]
    loop = [("injected", health.injected), ("used", health.used)]
    capture = list(health.capture.items())
    stages = list(health.stages.items())
    funnel = [(mode, f.runs, [("submitted", f.submitted), ("llmFindings", f.llm_findings),
                              ("filterPassed", f.filter_passed), ("persisted", f.persisted)])
              for mode, f in health.funnel.items()]
    charts = {
        "closed": day_bars("Sessions closed per day", closed),
        "loop": row_bars("Injected and used", loop),
        "capture": row_bars("Capture yield by source", capture),
        "stages": row_bars("Skills by stage", stages),
        "funnel": funnel_bars("The extraction funnel (KEA)", [(mode, steps) for mode, _, steps in funnel]),
    }
    return page(request, "health.html", p, title="Loop health", health=health, team=team, charts=charts,
                closed=closed, loop=loop, capture=capture, stages=stages, funnel=funnel,
                days_max=HEALTH_DAYS_MAX)


ROUTES = [Route("/brain/health", health_page, methods=["GET"])]
