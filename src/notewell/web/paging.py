"""The way on of a paged list, one rule for every list of the pages (templates/pager.html draws it): the links to
the pages before and after this one, and a page past the end that says so and leads back to the first, never
to another page past the end. A page number stops at PAGE_MAX (``session.page_number`` refuses more), so the
last page a URL can ask for has no next link: that link would answer 400."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from notewell.web.session import PAGE_MAX


def pages(href: Callable[[int], str], number: int, size: int, shown: int, more: bool) -> dict[str, Any]:
    """Page ``number`` of a list of ``size`` items a page, holding ``shown`` of them, ``more`` following it (one
    more item read to know), as the template's values: ``number``, ``shown`` (the items on the pages before this
    one), ``past_end`` (a page after the first with nothing on it), and ``first_href``, ``prev_href`` and
    ``next_href`` ("" for no link), each the address ``href`` gives a page number."""
    past_end = number > 1 and not shown
    return {"number": number, "shown": (number - 1) * size, "past_end": past_end, "first_href": href(1),
            "prev_href": href(number - 1) if number > 1 and not past_end else "",
            "next_href": href(number + 1) if more and not past_end and number < PAGE_MAX else ""}


def numbered(path: str, field: str = "page") -> Callable[[int], str]:
    """The address of a page of the list at ``path``: ``?<field>=N``, the first page without it."""
    return lambda number: f"{path}?{field}={number}" if number > 1 else path
