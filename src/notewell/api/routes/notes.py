"""Writing documents (docs/writing.md): create or replace (PUT), edit (PATCH, the operations of edit_note),
delete (DELETE, into the trash), move, and the journal with undo. A write names the version it is meant for
in ``If-Match`` (the ETag a read or the last write answered with); a document changed since is refused with
412 and its current ETag, never overwritten."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from notewell.answer_bound import PAGE_BYTES_MAX, leading_items_within
from notewell.api.any_path import DOCUMENT
from notewell.api.conditional import CONDITION_MAX_CHARS
from notewell.api.context import Caller, Services
from notewell.api.paging import next_link
from notewell.api.problems import responses
from notewell.errors import InvalidArgument, NotFound, VersionConflict
from notewell.records.models import CAMEL, dump, record_model
from notewell.services.note_edits import OPERATIONS, Edit, check_operation
from notewell.services.note_journal import JOURNAL_ID_MAX, JOURNAL_LIMIT_DEFAULT, JOURNAL_LIMIT_MAX
from notewell.services.note_vault import AnyOf, NoteChange

router = APIRouter(tags=["writing"])
ChangeModel = record_model(NoteChange, "DocumentChange")
WRITE_ERRORS = responses(400, 401, 403, 404, 409, 412, 422)
CONTENT_MAX_CHARS = 4_000_000  # the body limit bounds it first; the service caps the note's bytes
IfMatch = Annotated[str | None, Header(alias="If-Match", max_length=CONDITION_MAX_CHARS,
                                       description="The version (ETag) the write is meant for, or a comma-separated "
                                                   "list of them (any one matching), or * (any version).")]
_TAG = re.compile(r'(?P<weak>W/)?"(?P<quoted>[^"\s]+)"|[^"\s]+')  # "v", W/"v", or a bare v


class PutDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    content: str = Field(max_length=CONTENT_MAX_CHARS, description="The whole text of the document.")
    overwrite: StrictBool = Field(default=False, description="Replace the document if it exists (send If-Match too).")


class PatchDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    operation: str = Field(description=f"One of {', '.join(OPERATIONS)} (as edit_note).")
    content: str = Field(default="", max_length=CONTENT_MAX_CHARS, description="The text to add or put in place.")
    old: str | None = Field(default=None, max_length=CONTENT_MAX_CHARS,
                            description="replace: the exact passage, occurring exactly once.")
    heading: str | None = Field(default=None, max_length=1000, description="The heading with its level: ## Plan.")
    fields: dict[str, Any] = Field(default_factory=dict, description="set_front_matter: fields; null removes one.")


class MoveDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", **CAMEL)
    path: str = Field(min_length=1, max_length=4096, description="The document's path inside the project of the URL, "
                                                                 "without the project's name: notes/plan.md.")
    new_path: str = Field(min_length=1, max_length=4096, description="Where it goes, inside the same project.")
    update_links: bool = Field(True, description="Rewrite the links that named the document (in the documents the "
                                                 "caller may read and write) and its own relative links so that "
                                                 "they keep naming what they named; false moves it alone (its "
                                                 "answer's unlinked lists the links it breaks).")


class JournalEntryModel(BaseModel):
    """One write of the journal: who, through which call, what it did, the versions before and after."""

    model_config = ConfigDict(**CAMEL)
    id: int
    at: str
    user_id: str
    token_id: str | None
    tool: str
    action: str
    project: str
    path: str
    new_path: str | None
    before_version: str | None
    after_version: str | None
    undoes: int | None


class JournalPage(BaseModel):
    model_config = ConfigDict(**CAMEL)
    entries: list[JournalEntryModel]
    next: str | None = Field(None, description="The next page's URL (older entries) when this one is full, also "
                                               "given as a Link header; null otherwise.")


def expected(if_match: str | None) -> tuple[AnyOf | None, list[str]]:
    """(the versions an If-Match header names, its weak tags); (None, []) without one. The header is a list (RFC
    9110, 13.1.1): "a", "b" (or a bare a), the write proceeding when the document is at any of them, or * alone,
    whichever version it is at. A weak tag (W/"a") matches no version (strong comparison): it is kept to be
    named when nothing matched (``conditional``). A member that is none of these is refused, naming If-Match."""
    if if_match is None or not if_match.strip():
        return None, []
    members = [member.strip() for member in if_match.split(",") if member.strip()]
    if not members:
        raise InvalidArgument("If-Match", 'names no entity tag: send the ETag of the last read or write ("v")')
    if members == ["*"]:
        return AnyOf(any_version=True), []
    strong: list[str] = []
    weak: list[str] = []
    for member in members:
        found = _TAG.fullmatch(member)
        if found is None or member == "*":
            raise InvalidArgument("If-Match", f"{member[:40]!r} is no entity tag: send the ETag of the last read or "
                                              'write ("v"), a comma-separated list of them, or * alone')
        (weak if found["weak"] else strong).append(found["quoted"] if found["quoted"] is not None else member)
    return AnyOf(tuple(strong)), [f'W/"{tag}"' for tag in weak]


def conditional(if_match: str | None, write: Callable[[AnyOf | None], NoteChange]) -> NoteChange:
    """``write`` done with the versions If-Match names, the caller's rights and the document's existence checked
    first by the service; a refusal of a list that held weak tags says why they did not match."""
    versions, weak = expected(if_match)
    try:
        return write(versions)
    except VersionConflict as exc:
        now = exc.current_version
        if not weak or (not now and versions is not None and versions.versions):  # the service's words say it
            raise
        state, fix = ((f'the document is at version "{now}"', "send the ETag without W/, as the last read or write "
                       "gave it") if now else ("no document is there", "send it without If-Match to create it"))
        raise HTTPException(412, f"If-Match: {', '.join(weak)[:120]} is a weak ETag, which never matches a write's "
                                 f"If-Match (RFC 9110, 13.1.1: strong comparison), and {state}; {fix}",
                            headers={"ETag": f'"{now}"'} if now else None) from None


def _answer(response: Response, change: NoteChange) -> Any:
    if change.version:
        response.headers["ETag"] = f'"{change.version}"'
    return dump(ChangeModel, change)


@router.put(DOCUMENT, response_model=ChangeModel,
            responses={**WRITE_ERRORS, 201: {"model": ChangeModel, "description": "Created: no document had the path "
                                                                                   "(Location is its URL)"}},
            summary="Create a document (201), or replace it whole with overwrite and If-Match (200)")
def put_document(caller: Caller, svc: Services, project: str, path: str, body: PutDocument, request: Request,
                 response: Response, if_match: IfMatch = None) -> Any:
    change = conditional(if_match, lambda versions: svc.notes.write_note(
        caller, f"{project}/{path}", body.content, tool="PUT", overwrite=body.overwrite, expected_version=versions))
    if change.previous_version is None:  # created: 201, as the schema says (schemathesis' stateful phase found it
        response.status_code = 201       # undocumented), with the document's URL, the one written to
        response.headers["Location"] = request.url.path
    return _answer(response, change)


@router.patch(DOCUMENT, response_model=ChangeModel, responses=WRITE_ERRORS,
              summary="Edit part of a document: append, prepend, replace, a heading's section, front matter")
def patch_document(caller: Caller, svc: Services, project: str, path: str, body: PatchDocument, response: Response,
                   if_match: IfMatch = None) -> Any:
    edit = Edit(check_operation(body.operation), body.content, old=body.old, heading=body.heading, fields=body.fields)
    return _answer(response, conditional(if_match, lambda versions: svc.notes.edit_note(
        caller, f"{project}/{path}", edit, tool="PATCH", expected_version=versions)))


@router.delete(DOCUMENT, response_model=ChangeModel, responses=WRITE_ERRORS,
               summary="Delete a document into the trash (the journal's undo brings it back)")
def delete_document(caller: Caller, svc: Services, project: str, path: str, response: Response,
                    if_match: IfMatch = None) -> Any:
    return _answer(response, conditional(if_match, lambda versions: svc.notes.delete_note(
        caller, f"{project}/{path}", tool="DELETE", expected_version=versions)))


@router.post("/projects/{project}/moves", response_model=ChangeModel, responses=WRITE_ERRORS,
             summary="Move or rename a document inside its project; never over another")
def move_document(caller: Caller, svc: Services, project: str, body: MoveDocument, response: Response,
                  if_match: IfMatch = None) -> Any:
    try:
        change = conditional(if_match, lambda versions: svc.notes.move_note(
            caller, f"{project}/{body.path}", f"{project}/{body.new_path}", tool="POST moves",
            expected_version=versions, update_links=body.update_links))
    except NotFound as exc:  # the project named twice, as MCP's and the CLI's paths name it first
        inside = body.path.removeprefix(f"{project}/")
        if inside == body.path:
            raise
        raise NotFound(f"{exc}; path and newPath are inside the project of the URL, without its name: send "
                       f"path {inside!r}") from None
    return _answer(response, change)


@router.get("/journal", response_model=JournalPage, responses=responses(400, 401, 403, 422),
            summary="The journal of document writes, newest first, in the projects the caller reads")
def journal(caller: Caller, svc: Services, request: Request, response: Response,
            path: Annotated[str | None, Query(max_length=4096, description="One document, project first.")] = None,
            since: Annotated[str | None, Query(max_length=40, description="At or after: ISO 8601.")] = None,
            limit: Annotated[int, Query(ge=1, le=JOURNAL_LIMIT_MAX)] = JOURNAL_LIMIT_DEFAULT,
            before: Annotated[int | None, Query(
                ge=1, le=JOURNAL_ID_MAX,
                description="Only entries older than this one (an entry's id): the next page, as `next` names it.")]
            = None) -> Any:
    entries = svc.journal.entries(caller, path=path, since=since, before=before, limit=limit)
    page: dict[str, Any] = {"entries": [JournalEntryModel.model_validate(e, from_attributes=True).model_dump(
        mode="json", by_alias=True) for e in entries],
        "next": "x" * (len(request.url.path) + len(request.url.query) + 40)}  # room for the next page's link
    shown = max(1, leading_items_within(page, page["entries"], PAGE_BYTES_MAX))  # a page within 32 KB, as MCP's
    del page["entries"][shown:]
    # a full page, or one ended early: older entries may follow
    following = entries[shown - 1].id if shown < len(entries) or len(entries) == limit else None
    return {**page, "next": next_link(request, response, following, param="before")}


@router.post("/journal/{entry_id}/undo", response_model=ChangeModel, responses=WRITE_ERRORS,
             summary="Undo one write, if the document is still as that write left it")
def undo(caller: Caller, svc: Services, entry_id: Annotated[int, Path(ge=1, le=JOURNAL_ID_MAX)],
         response: Response) -> Any:
    return _answer(response, svc.journal.undo(caller, entry_id, tool="POST undo"))
