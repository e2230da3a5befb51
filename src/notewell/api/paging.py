"""Pages of a list: ``limit`` and ``offset`` in, ``items`` and a ``next`` link out (also as a Link header)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Query, Request, Response
from pydantic import BaseModel, Field, create_model

from notewell.limits import NOTES_OFFSET_MAX
from notewell.records.models import CAMEL

LIMIT_MAX = 100

Limit = Annotated[int, Query(ge=1, le=LIMIT_MAX, description=f"Items per page, 1 to {LIMIT_MAX}.")]
Offset = Annotated[int, Query(ge=0, le=NOTES_OFFSET_MAX, description="How many items to skip.")]
NEXT = Field(description="The URL of the next page (relative to this server), or null on the last page.")
NEXT_AFTER = Field(description="The cursor of the next page, null on the last: pass it as after (the next URL "
                               "does). It is the key of this page's last item.")


def page_model(item: type[BaseModel], name: str, *, keyed: bool = False) -> type[BaseModel]:
    """A page's model; ``keyed``: the list pages by a cursor too (``after``), named as ``nextAfter``."""
    cursor: dict[str, Any] = {"next_after": (str | None, NEXT_AFTER)} if keyed else {}
    model: type[BaseModel] = create_model(
        name, __config__=CAMEL, __doc__=f"A page of {item.__name__} items.",
        items=(list[item], ...),  # type: ignore[valid-type]
        offset=(int, ...), limit=(int, ...), **cursor, next=(str | None, NEXT))
    return model


def next_link(request: Request, response: Response, offset: int | str | None, *, column: int | None = None,
              param: str = "offset") -> str | None:
    """The URL of the page at ``offset`` (None: no next page), also set as ``Link: <…>; rel="next"``; ``column``
    names where in that line the page starts (a document's part going on with a cut line), else it is dropped;
    ``param`` is the query parameter that takes ``offset`` (a cursor such as the journal's ``before``)."""
    if offset is None:
        return None
    url = request.url.include_query_params(**{param: offset})
    if param == "after":  # a cursor names where the page starts: an offset beside it would be refused
        url = url.remove_query_params("offset")
    url = url.include_query_params(column=column) if column is not None else url.remove_query_params("column")
    # the path percent-encoded from its decoded form: Starlette's URL keeps a document's space, % or é as they are
    # (only ?, # and \ escaped), which made the Link header no URL (and é Latin-1 bytes in it)
    link = f"{quote(request.scope['path'], safe='/')}?{url.query}"
    response.headers["Link"] = f'<{link}>; rel="next"'
    return link


def page(request: Request, response: Response, items: Sequence[Any], offset: int, limit: int, *,
         has_more: bool) -> dict[str, Any]:
    return {"items": list(items), "offset": offset, "limit": limit,
            "next": next_link(request, response, offset + len(items) if has_more else None)}


def keyed_page(request: Request, response: Response, items: Sequence[Any], offset: int, limit: int, *,
               next_after: str | None) -> dict[str, Any]:
    """A page of a list paged by a cursor: its next URL asks for the items after ``next_after`` (None: no next
    page), whether this page was asked for by offset or by cursor."""
    return {"items": list(items), "offset": offset, "limit": limit, "nextAfter": next_after,
            "next": next_link(request, response, next_after, param="after")}


def window(items: Sequence[Any], offset: int, limit: int) -> tuple[Sequence[Any], bool]:
    """One page of a list held whole: (the page, whether more follow)."""
    return items[offset:offset + limit], len(items) > offset + limit
