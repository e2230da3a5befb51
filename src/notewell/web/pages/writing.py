"""A document's history (its writes, each with its diff, and undo for those who may write) and a plain editor
(a textarea with the version held in the form; a conflict shows both texts). The note writing and journal
services decide everything: a document you may not see is the same 404 as a missing one."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from notewell.errors import Conflict, InvalidArgument, NotFound, VersionConflict
from notewell.web.pages.browse import doc_href
from notewell.web.render import page
from notewell.web.session import (
    SignInRequired,
    call,
    checked_form,
    form_from_this_site,
    principal_if_any,
    services,
    set_message,
    signed_in,
    take_message,
)

FORM_SLACK_BYTES = 64 * 1024  # the editor's form beside its text: the version, the CSRF token


def history_href(project: str, rel: str) -> str:
    return doc_href(project, rel).replace("/doc/", "/history/", 1)


async def history_page(request: Request) -> Response:
    p = await signed_in(request)
    project, rel = request.path_params["project"], request.path_params["path"]
    items, more = await call(services(request).journal.history, p, f"{project}/{rel}")
    if not items:  # no write through Notewell yet: the document must still be one p reads
        await call(services(request).knowledge.read_doc, p, f"{project}/{rel}", 1, 1)
    message = await take_message(request)
    return page(request, "history.html", p, title=f"History of {rel}", project=project, rel=rel, items=items,
                more=more, doc=doc_href(project, rel), message=message)


async def undo(request: Request) -> Response:
    p = await signed_in(request)
    await checked_form(request)
    project, rel = request.path_params["project"], request.path_params["path"]
    entry = request.path_params["entry"]
    try:
        done = await call(services(request).journal.undo, p, entry, tool="web undo", of=f"{project}/{rel}")
    except Conflict as exc:
        await set_message(request, str(exc))
    else:
        await set_message(request, f"Undone: journal entry {entry} ({done.summary})")
    return RedirectResponse(history_href(project, rel), status_code=303)


async def edit_page(request: Request) -> Response:
    p = await signed_in(request)
    project, rel = request.path_params["project"], request.path_params["path"]
    text, version, _ = await call(services(request).notes.read_for_edit, p, f"{project}/{rel}")
    return page(request, "edit.html", p, title=f"Edit {rel}", project=project, rel=rel, text=text, version=version,
                current=None, error="", doc=doc_href(project, rel))


async def save(request: Request) -> Response:
    notes = services(request).notes
    most = notes.max_bytes  # the vault's file limit: a note's characters are at most its bytes
    project, rel = request.path_params["project"], request.path_params["path"]
    p = await principal_if_any(request)
    if p is None:  # the session ended while the editor was open: give the text back, never drop it
        sent = await form_from_this_site(request, max_part_size=6 * most + FORM_SLACK_BYTES)
        if sent is None:
            raise SignInRequired(request.url.path)
        return page(request, "edit.html", None, title=f"Edit {rel}", project=project, rel=rel,
                    text=str(sent.get("content", "")), version=str(sent.get("version", "")), current=None,
                    doc=doc_href(project, rel), status=401, no_store=True,
                    error="Not saved: your session ended (you signed out, or it expired). Your text is below: "
                          "copy it, sign in again in another tab, then open the editor again and save it there.")
    form = await checked_form(request, max_part_size=6 * most + FORM_SLACK_BYTES)  # %XX per byte, CRLF per break
    content = str(form.get("content", ""))
    version = str(form.get("version", ""))
    size = len(content) - content.count("\r\n")  # a browser sends each line break as two characters
    if size > most:
        return page(request, "edit.html", p, title=f"Edit {rel}", project=project, rel=rel, text=content,
                    version=version, current=None, doc=doc_href(project, rel), status=400,
                    error=f"The text is {size:,} characters; a note holds at most {most:,} bytes.")
    try:
        saved = await call(notes.save_edited, p, f"{project}/{rel}", content, tool="web editor",
                           expected_version=version)
    except VersionConflict as exc:  # both texts: what was sent stays in the textarea, the current one below
        current, now, _ = await call(notes.read_for_edit, p, f"{project}/{rel}")
        return page(request, "edit.html", p, title=f"Edit {rel}", project=project, rel=rel, text=content,
                    version=now, current=current, error=exc.detail, doc=doc_href(project, rel), status=409)
    except (InvalidArgument, Conflict) as exc:
        return page(request, "edit.html", p, title=f"Edit {rel}", project=project, rel=rel, text=content,
                    version=version, current=None, error=str(exc), doc=doc_href(project, rel), status=400)
    except NotFound:  # deleted or moved since the editor opened (or never one p sees): the text sent stays
        return page(request, "edit.html", p, title=f"Edit {rel}", project=project, rel=rel, text=content,
                    version=version, current=None, doc=doc_href(project, rel), status=404,
                    error=f"Not saved: there is no note at {project}/{rel} that you may write now (it was deleted "
                          "or moved since the editor opened, or you may not see it). Your text is below: copy it "
                          "before you leave this page.")
    await set_message(request, f"Saved {rel}" if saved is not None else f"Nothing changed: {rel} was not written")
    return RedirectResponse(history_href(project, rel), status_code=303)


ROUTES = [
    Route("/p/{project}/history/{path:path}", history_page, methods=["GET"]),
    Route("/p/{project}/undo/{entry:int}/{path:path}", undo, methods=["POST"]),
    Route("/p/{project}/edit/{path:path}", edit_page, methods=["GET"]),
    Route("/p/{project}/edit/{path:path}", save, methods=["POST"]),
]
