"""Your memories: the newest or a search, one memory, forgetting it with a reason (the memory service decides)."""

from __future__ import annotations

from collections import deque
from itertools import islice
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, NotewellError, spelled
from notewell.records.brain import KnowledgeRecord
from notewell.services.brain_errors import BrainValidation
from notewell.services.memory import Memory, MemoryResult, MemoryService
from notewell.web.paging import pages
from notewell.web.render import page
from notewell.web.session import (
    call,
    checked_form,
    page_number,
    searched_text,
    services,
    set_message,
    signed_in,
    take_message,
)

NEWEST = 50
SCAN_MAX = 100_000  # memories looked at for the newest list


def _newest(memory: MemoryService, p: Principal, number: int) -> tuple[list[Memory], bool]:
    """Page ``number`` of the newest NEWEST memories, and whether older ones follow (one more kept to know)."""
    newest: deque[Memory] = deque(islice(memory.export(p), SCAN_MAX), maxlen=NEWEST * number + 1)
    ordered, start = list(reversed(newest)), NEWEST * (number - 1)
    return ordered[start:start + NEWEST], len(ordered) > start + NEWEST


async def memories_page(request: Request) -> Response:
    return await _memories(request, await signed_in(request))


async def _memories(request: Request, p: Principal, *, refused: str = "", status: int = 200) -> Response:
    """The page; ``refused`` is why a form sent from it was not taken (shown as the page's error). Its two lists
    page apart: ``?page=N`` the memories, ``?taught=N`` the taught knowledge."""
    svc = services(request).memory
    q, error = searched_text(request)
    number, taught = page_number(request), page_number(request, "taught")
    memories: list[Memory] = []
    more = more_found = False
    found_by: dict[str, str] = {}  # a search's: how each memory was found
    words_only: str | None = None
    try:
        if q and not error:
            with spelled(query="q"):
                found = await call(svc.recall, p, q, limit=NEWEST)  # by words and by meaning (docs/memory.md)
            memories = [r.memory for r in found.results]
            found_by = {r.memory.ref: _found_by(r) for r in found.results}
            words_only, more_found = found.words_only, found.more
        elif not q:
            memories, more = await call(_newest, svc, p, number)
    except NotewellError as exc:
        error = str(exc)
    message = await take_message(request)
    knowledge: list[KnowledgeRecord] = []
    if not q and services(request).authorization.allowed(p, "sessions:use"):  # one more: whether older follow
        knowledge = await call(services(request).brain.knowledge, p, limit=NEWEST + 1, offset=NEWEST * (taught - 1))
    return page(request, "memories.html", p, title="Memories", q=q, memories=memories, error=refused or error,
                knowledge=knowledge[:NEWEST], message=message, found_by=found_by, more_found=more_found,
                words_only=words_only, status=status, **_pages(q, number, taught, memories, more),
                **_taught_pages(q, number, taught, knowledge))


def _on_pages(number: int, taught: int) -> str:
    """/memories at page ``number`` of its memories and ``taught`` of its taught knowledge."""
    asked = [f"{name}={n}" for name, n in (("page", number), ("taught", taught)) if n > 1]
    return "/memories" + ("?" + "&".join(asked) if asked else "")


def _pages(q: str, number: int, taught: int, memories: list[Memory], more: bool) -> dict[str, Any]:
    """The newest list's way on (``?page=N``, the taught knowledge's page kept); a search's list is one page."""
    return pages(lambda n: _on_pages(n, taught), 1 if q else number, NEWEST, len(memories), more)


def _taught_pages(q: str, number: int, taught: int, knowledge: list[KnowledgeRecord]) -> dict[str, Any]:
    """The taught knowledge's way on (``?taught=N``), the memories' page kept; one item more was read to know."""
    found = pages(lambda n: _on_pages(number, n), 1 if q else taught, NEWEST, len(knowledge[:NEWEST]),
                  len(knowledge) > NEWEST)
    return {"taught_past_end": found["past_end"], "taught_shown": found["shown"], "taught_newest": found["first_href"],
            "taught_prev": found["prev_href"], "taught_next": found["next_href"]}


def _found_by(result: MemoryResult) -> str:
    """How a search found a memory, as the page says it: "words", "meaning (similarity 0.59)" or both."""
    return " and ".join(f"meaning (similarity {result.similarity:.2f})"
                        if how == "meaning" and result.similarity is not None else how for how in result.found_by)


async def memory_page(request: Request) -> Response:
    p = await signed_in(request)
    memory = await call(services(request).memory.get, p, request.path_params["ref"])
    return page(request, "memory.html", p, title=memory.title, m=memory, error="")


async def forget(request: Request) -> Response:
    p = await signed_in(request)
    form = await checked_form(request)
    svc = services(request).memory
    ref = request.path_params["ref"]
    reason = str(form.get("reason", ""))
    try:
        if not reason.strip():  # the page asks for one (XMemo's forget takes none; a person here gives one)
            raise InvalidArgument("reason", "say why it is forgotten; it is kept with the memory")
        await call(svc.forget, p, ref, reason)
    except InvalidArgument as exc:
        memory = await call(svc.get, p, ref)
        return page(request, "memory.html", p, title=memory.title, m=memory, error=str(exc), status=400)
    await set_message(request, f"Forgotten: {ref}")
    return RedirectResponse("/memories", status_code=303)


async def retire(request: Request) -> Response:
    """Forget an item of taught knowledge (the brain retires it and forgets its memory, with the reason). A
    refusal is the page's error, as forget's is: never the status line a success leaves."""
    p = await signed_in(request)
    form = await checked_form(request)
    ref = request.path_params["ref"]
    reason = str(form.get("reason", ""))
    try:
        if not reason.strip():  # spaces pass the field's `required`
            raise InvalidArgument("reason", "say why it is forgotten; it is kept with the knowledge")
        await call(services(request).brain.retire, p, ref, reason)
    except BrainValidation as exc:  # its field, in the words forget's refusals use (no brain code first)
        return await _memories(request, p, refused=str(exc).removeprefix(f"{exc.code}: "), status=400)
    except InvalidArgument as exc:
        return await _memories(request, p, refused=str(exc), status=400)
    await set_message(request, f"Forgotten: {ref}")
    return RedirectResponse("/memories", status_code=303)


ROUTES = [
    Route("/memories", memories_page, methods=["GET"]),
    Route("/memories/{ref}", memory_page, methods=["GET"]),
    Route("/memories/{ref}/forget", forget, methods=["POST"]),
    Route("/knowledge/{ref}/retire", retire, methods=["POST"]),
]
