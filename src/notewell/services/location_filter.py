"""XMemo's path_filter: "a logical path prefix", matched as a prefix of a full location.

A memory's location is ``<project>/<path>`` (``~alice/auth/tokens``), a document's ``<project>/<path>``
(``projects/apollo/plan.md``). A path_filter matches every location that starts with it, character by
character: ``~alice/auth/tok`` finds ``~alice/auth/tokens``, ``projects/apo`` finds ``apollo/...`` and
``apollo2``, ``~al`` every readable project whose id starts so. A filter that ends with ``/`` names a
folder: it and everything below it (``projects/apollo/`` finds ``apollo`` and ``apollo/...``, not
``apollo2``). ``%`` alone (XMemo's documented default) is any location; a trailing ``%`` adds nothing
(every filter is a prefix already) and is accepted; a ``%`` anywhere else is refused. No character is
a wildcard otherwise: the stores compare ranges of code points, never LIKE, so ``_`` and ``%`` inside a
path mean themselves on both backends.

Only projects the caller may read are ever matched; a filter that can match none of them (its project
is hidden, or does not exist) is refused as a scope divergence, the same refusal either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from notewell.errors import Forbidden, InvalidArgument
from notewell.paths import normalize_path
from notewell.services.memory_checks import check_unicode

ANY = "%"
"""XMemo's documented default for path_filter (and memory_type): any."""


class ScopeDivergence(Forbidden):
    """A path_filter outside what the caller may read."""


@dataclass(frozen=True)
class LocationFilter:
    projects: list[str]  # the readable projects the filter can match
    prefix: str = ""  # with a single project: the path prefix inside it ("" for the whole project)
    partial: bool = False  # True: a prefix of characters ("auth/tok"); False: that folder or file and below


def location_filter(path_filter: str | None, readable: Sequence[str]) -> LocationFilter:
    """What ``path_filter`` matches among the ``readable`` projects; ScopeDivergence when nothing can match."""
    if not path_filter or path_filter == ANY:
        return LocationFilter(list(readable))
    check_unicode("path_filter", path_filter)
    stem = path_filter.removesuffix(ANY)
    if ANY in stem:
        raise InvalidArgument("path_filter", "a % may only end the path filter (it adds nothing: every filter is "
                              "a prefix) or stand alone for any path; no other character is a wildcard")
    folder = stem.endswith("/")
    project, slash, prefix = normalize_path(stem, "path_filter").partition("/")
    if not slash and not folder:  # "~al": every readable project whose id starts so
        projects = [r for r in readable if r.startswith(project)]
        if not projects:
            raise divergence(f"no project you may read starts with {project!r}", readable)
        return LocationFilter(projects)
    if project not in readable:
        raise divergence(f"{project!r} is outside the projects you may read", readable)
    return LocationFilter([project], prefix, partial=bool(prefix) and not folder)


def divergence(why: str, readable: Sequence[str]) -> ScopeDivergence:
    return ScopeDivergence(f"scope divergence: {why}; start path_filter with one of them "
                           f"({', '.join(readable) or 'none'}), e.g. {(list(readable) or ['project'])[0]}/decisions, "
                           "or drop it", field="path_filter")
