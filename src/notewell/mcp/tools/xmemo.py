"""XMemo's argument style, shared by its tools in the memory toolset (search_memory, recall, search_knowledge).

- ``limit``: XMemo refuses only a negative limit. Any other is accepted: above the tool's maximum it is
  served as the maximum, and 0 asks for no results; either way the answer's ``note`` says so.
- ``path_filter``: a logical path prefix, matched as a prefix of the full location (services.location_filter).
"""

from __future__ import annotations

from dataclasses import dataclass

from notewell.mcp import schema as s
from notewell.mcp.toolset import Arguments, JsonObject


@dataclass(frozen=True)
class Limit:
    value: int  # what the service is asked for: from 0 to the maximum
    note: str | None = None  # what the answer says about it: served as the maximum, or 0


def limit_of(args: Arguments, default: int, maximum: int) -> Limit:
    given = args.integer("limit", default, 0, None)
    if given > maximum:
        return Limit(maximum, f"limit {given} is more than the maximum of {maximum}, so at most {maximum} results "
                              "are returned.")
    if given == 0:
        return Limit(0, f"limit 0 asks for no results, so none are returned; give a limit from 1 (default "
                        f"{default}) to {maximum}.")
    return Limit(given)


def limit_schema(default: int, maximum: int) -> JsonObject:
    return s.integer(f"Maximum number of results (default {default}). Above {maximum}, {maximum} are returned and "
                     "the note says so; 0 returns none; a negative limit is refused.", default=default, minimum=0)


def path_filter_schema(what: str, example: str, finds: str) -> JsonObject:
    return s.string(f"Optional logical path prefix: the {what}'s full location (its project, then its path inside "
                    f"it) must start with it, character by character (\"{example}\" finds {finds}); end it with / "
                    "for that folder and everything below it only. % (the default) is any path; a project "
                    "you may not read is refused as a scope divergence.", default="%")


DIVERGENCE = ("Error in {tool}: path_filter: scope divergence: the path_filter can match no project this token may "
              "read (the project it names is hidden, or does not exist: the same answer either way). Start it with "
              "a project you can read, or drop it.")


def words_only(why: str | None) -> str | None:
    """The note of a tolerant search that could not use meaning (services/meaning.words_only says why), or None."""
    return None if why is None else f"Found by words only, not by meaning: {why}."


def with_notes(out: JsonObject, *notes: str | None) -> JsonObject:
    """``out`` with its ``note``: the given sentences, in order, when there are any."""
    said = [n for n in notes if n]
    if said:
        out["note"] = " ".join(said)
    return out
