"""The writing tools of toolset "notes": write_note, edit_note, move_note, delete_note and undo_note_write,
and note_journal that lists what they wrote, mapped onto the note writing and journal services
(docs/writing.md).

They sit in the "notes" toolset beside search_notes (as the issue and DESIGN.md's "notes (writing)" row
name them) but in a module of their own, so Major Vault's seed tool stays as its page words it; each needs
the policy's action note:write (the knowledge:write scope and a write grant or the home), so a token without
that scope lists search_notes and note_journal (which reads, as REST's journal does) alone.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence

from mcp_types import ToolAnnotations

from notewell.access.policy import Action
from notewell.answer_bound import ANSWER_BYTES_MAX, PAGE_BYTES_MAX, json_bytes, leading_items_within
from notewell.errors import InvalidArgument
from notewell.mcp import schema as s
from notewell.mcp.toolset import Arguments, CallContext, JsonObject, ToolSpec
from notewell.records.journal import JournalEntry
from notewell.records.models import record_model
from notewell.runtime import Runtime
from notewell.services.note_diff import DIFF_MAX_CHARS, VERSION_CHARS
from notewell.services.note_edits import OPERATIONS, Edit, check_operation
from notewell.services.note_journal import (
    JOURNAL_ID_MAX,
    JOURNAL_LIMIT_DEFAULT,
    JOURNAL_LIMIT_MAX,
    NoteJournalService,
)
from notewell.services.note_vault import NoteChange
from notewell.services.note_writing import UNLINKED_SHOWN, NoteWritingService

ACTION: Action = "note:write"
# A change that may lose text (an overwrite, a replaced section, a delete) is destructive; a move keeps every byte.
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                              open_world_hint=False)
READING = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
KEEPING = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
NOTE_NOT_FOUND = ("Not found: there is no note at this path, or no project of that name, that this person can "
                  "see. The answer is the same whether it is hidden or does not exist. Pass a path exactly as "
                  "searchKnowledge, listDocs or search_notes return it, project first.")
_SCOPE_REFUSAL = ("If the connection does not hold knowledge:write, the tool is not in the tool list, and a call to "
                  "it returns MCP error -32602: Tool {tool} not found.")
_CONFLICT = ("Error in {tool}: Conflict: <path> changed since version <expected>: it is at version <current> "
             "(<how they differ>); read it again and redo the change.")
_FORBIDDEN = ("Error in {tool}: Forbidden: you may read <project> but not write to it; ask an admin for a write "
              "grant (or write in your home, ~<handle>).")

_PATH = s.string("The note's path, project first, as searchKnowledge returns it: handbook/decisions.md.")
_EXPECTED = s.string(f"The version the change is meant for ({VERSION_CHARS} hex digits, from readDoc or the last "
                     "write). If the note has changed since, nothing is written and the error names the current "
                     "version. Leave it out to change the note as it is now.")
_AT_MOST = (f"the first {UNLINKED_SHOWN} at most; the summary counts them all and says how many this names. In this "
            "answer the three lists (dangling, unlinked, relinked, kept in that order) share what the rest of it "
            f"leaves of {ANSWER_BYTES_MAX // 1024} KB: a list cut to fit is named in note, with where its rest is")
_CHANGE_OUTPUT = s.tool_output({
    "path": s.string("Where the note is now (for delete_note: where it was)."),
    "version": s.nullable(s.string("The note's new version; null once deleted.")),
    "previous_version": s.nullable(s.string("Its version before; null when it was created.")),
    "changed_lines": s.obj({"first": s.integer("First changed line of the new text, from 1."),
                            "last": s.integer("Last changed line; first - 1 when lines were only removed.")}),
    "summary": s.string("The change in a line."),
    "diff": s.string(f"A unified diff of the change, at most {DIFF_MAX_CHARS} characters."),
    "diff_truncated": s.boolean("True when the diff was cut."),
    "journal_id": s.integer("The journal entry recording the change; undo_note_write takes it."),
    "moved_from": s.string("move_note: where the note was."),
    "trash": s.string("delete_note: the copy kept in the trash, vault-relative."),
    "unlinked": s.array(s.string("A place, project/path:line."),
                        "move_note: the lines where a link named a document before the move and no longer "
                        "names it, left as written (in a note you may not write, a link no wording could mend, or "
                        f"update_links false): {_AT_MOST}. Edit them."),
    "relinked": s.array(s.string("A place, project/path:line."),
                        "move_note: the lines where a link to the note, or of it, was rewritten to keep naming what "
                        f"it named (update_links): {_AT_MOST}; each rewritten note has a journal entry of its own."),
    "dangling": s.array(s.string("A symbolic link's vault path, project first."),
                        "move_note: the symbolic links of the vault (in projects you read) that led to the note and "
                        f"now lead nowhere: {_AT_MOST}. They are not re-pointed: point them at the new path, or "
                        "remove them."),
}, ["path", "version", "previous_version", "changed_lines", "summary", "diff", "diff_truncated", "journal_id"])


def _diff_rest(answer: JsonObject) -> str:
    """A change's way to the rest of its diff, cut to the answer's bound (a diff of DIFF_MAX_CHARS characters,
    each four bytes or more as JSON, passes it): readDoc on the lines the write put in; the lines it took out are
    kept in no note to read (the journal keeps them for undo_note_write alone), so the note says so."""
    lines = answer["changed_lines"]
    undo = (f"the lines it took out are not kept anywhere readDoc reads: undo_note_write with journal_id "
            f"{answer['journal_id']} puts them back.")
    if answer["version"] is None or lines["last"] < lines["first"]:
        return f"The diff's removed lines are its own: {undo}"
    return (f"readDoc with path {json.dumps(answer['path'], ensure_ascii=False)} from offset {lines['first']} reads "
            f"the lines the write put in (to line {lines['last']}), as they are now, a part at a time; {undo}")


_CHANGE_WAYS = {"diff": _diff_rest}


def change_dict(c: NoteChange) -> JsonObject:
    out: JsonObject = {"path": c.path, "version": c.version, "previous_version": c.previous_version,
                       "changed_lines": {"first": c.first_line, "last": c.last_line}, "summary": c.summary,
                       "diff": c.diff, "diff_truncated": c.diff_truncated, "journal_id": c.journal_id}
    if c.moved_from is not None:
        out["moved_from"] = c.moved_from
    if c.trash is not None:
        out["trash"] = c.trash
    if c.unlinked:
        out["unlinked"] = list(c.unlinked)
    if c.relinked:
        out["relinked"] = list(c.relinked)
    if c.dangling:
        out["dangling"] = list(c.dangling)
    return _places_within(out)


PLACES_KEPT = ("dangling", "unlinked", "relinked")
"""A move's lists of places in the order they keep their room in an MCP answer: a symlink left dangling has no
tool that finds it again, a line left broken has search_notes, and a rewritten one getLinks, which lists every
note linking to the moved note."""


def _places_within(out: JsonObject) -> JsonObject:
    """The answer, its lists of places (at most UNLINKED_SHOWN each, as REST and the CLI send them whole) sharing
    what the rest of it leaves of the answer's bound, in PLACES_KEPT's order. Fifty places of 700-byte paths in each
    pass it: a list cut here keeps its start, and note names how many it lists and the way to the rest, so the
    door's own cut, which could only say to ask for less (no move can), never reaches them."""
    lists = {name: out[name] for name in PLACES_KEPT if name in out}
    if not lists or json_bytes(out) <= ANSWER_BYTES_MAX:  # the rest alone too long (a write's diff): the door cuts
        return out
    cut: JsonObject = {**out, **{name: [] for name in lists}, "truncated": True,
                       "note": _places_note(out, {name: (len(places), len(places)) for name, places in lists.items()})}
    size = json_bytes(cut)  # with the longest note it may take: every list cut, counts as long as they can be
    kept: dict[str, tuple[int, int]] = {}
    for name, places in lists.items():
        taken = cut[name]
        for place in places:
            size += json_bytes(place) + (2 if taken else 0)  # ", " between two, as json.dumps writes it
            if size > ANSWER_BYTES_MAX:
                break
            taken.append(place)
        if len(taken) < len(places):
            kept[name] = (len(taken), len(places))
            size = ANSWER_BYTES_MAX  # the lists after it keep no place: each list is a start of its own
    cut["note"] = _places_note(out, kept)
    return cut if kept else out


def _places_note(out: JsonObject, kept: Mapping[str, tuple[int, int]]) -> str:
    """What a move's answer cut of its lists of places (``kept``: name -> (places listed, places it had)) and where
    the rest is."""
    path, moved_from = json.dumps(out["path"], ensure_ascii=False), out.get("moved_from", "")
    stem = posixpath.splitext(posixpath.basename(moved_from))[0]
    ways = {"relinked": f"getLinks with path {path} and direction backlinks lists every note linking to it now, "
                        "the rewritten ones among them",
            "unlinked": f"search_notes with query {json.dumps(stem, ensure_ascii=False)} and path "
                        f"{json.dumps(moved_from.split('/', 1)[0], ensure_ascii=False)} finds the lines still naming "
                        f"its old place, and getLinks with path {path} and direction outgoing its own links",
            "dangling": "the others are symbolic links of the vault that led to "
                        f"{json.dumps(moved_from, ensure_ascii=False)} (itself, or a link to it): point them at "
                        "its new path, or remove them"}
    said = [f"{name} lists the first {listed} of its {had} places ({ways[name]})"
            for name, (listed, had) in kept.items()]
    return (f"This answer was cut to stay within {ANSWER_BYTES_MAX // 1024} KB of JSON: " + "; ".join(said) + "."
            if said else "")


def _refusals(tool: str, *extra: str) -> tuple[str, ...]:
    return (f"Error in {tool}: {NOTE_NOT_FOUND}", _FORBIDDEN.format(tool=tool), _CONFLICT.format(tool=tool), *extra,
            "A path with a . or .. part (never folded away: projects/../handbook/x.md is refused), names a "
            "hidden file or folder (.notewell/ among them), is excluded by "
            "an ignore file, passes through a symlink or is not of an indexed type is refused as invalid "
            "arguments naming the argument.", _SCOPE_REFUSAL.format(tool=tool))


def _write_note(svc: NoteWritingService) -> ToolSpec:
    def write_note(ctx: CallContext, args: Arguments) -> JsonObject:
        return change_dict(svc.write_note(ctx.principal, args.required_string("path"), args.required_string("content"),
                                          tool="write_note", overwrite=args.boolean("overwrite"),
                                          expected_version=args.string("expected_version")))

    return ToolSpec(
        name="write_note", title="Write a note", action=ACTION, annotations=DESTRUCTIVE, call=write_note,
        description="Creates a note with this content (and its folders) in a project you may write. It refuses to "
                    "replace an existing note unless overwrite is true; then pass expected_version too, so a note "
                    "changed since you read it is not lost. The change is searchable when the call returns.",
        input_schema=s.tool_input({
            "path": _PATH,
            "content": s.string("The whole text of the note (markdown)."),
            "overwrite": s.boolean("True: replace the note if it exists.", default=False),
            "expected_version": _EXPECTED,
        }, ["path", "content"]),
        output_schema=_CHANGE_OUTPUT, cut_ways=_CHANGE_WAYS, not_found=NOTE_NOT_FOUND,
        refusals=_refusals("write_note", "Error in write_note: Conflict: <path> exists already; edit it with "
                                         "edit_note, or pass overwrite (with its expected_version).",
                           "Error in write_note: Conflict: there is no note at <path>, so none at version <expected>; "
                           "leave out expected_version to create it."),
    )


def _fields(args: Arguments) -> Mapping[str, object]:
    fields = args.raw.get("fields")
    if fields is None:
        return {}
    if not isinstance(fields, dict) or not all(isinstance(k, str) for k in fields):
        raise InvalidArgument("fields", "must be an object of front matter fields, such as {\"status\": \"done\"}")
    return fields


def _edit_note(svc: NoteWritingService) -> ToolSpec:
    def edit_note(ctx: CallContext, args: Arguments) -> JsonObject:
        operation = check_operation(args.required_string("operation"))
        content = args.string("content", default="") or ""
        if operation not in ("set_front_matter",) and "content" not in args.raw:
            raise InvalidArgument("content", f"is required for {operation}: the text to add or put in place")
        edit = Edit(operation, content, old=args.string("old"), heading=args.string("heading"), fields=_fields(args))
        return change_dict(svc.edit_note(ctx.principal, args.required_string("path"), edit, tool="edit_note",
                                         expected_version=args.string("expected_version")))

    return ToolSpec(
        name="edit_note", title="Edit a note", action=ACTION, annotations=DESTRUCTIVE, call=edit_note,
        description="Changes part of a note and keeps every other line as it is. operation: append (at the end), "
                    "prepend (at the start, after the front matter), replace (old, an exact passage that must occur "
                    "exactly once, becomes content), insert_under_heading (content goes at the end of the text "
                    "directly under heading), replace_section (the section under heading, up to the next heading of "
                    "the same or a higher level, becomes content), set_front_matter (fields set; null removes one). "
                    "A heading is named with its level, as written: '## Decisions'; headings inside code blocks do "
                    "not count.",
        input_schema=s.tool_input({
            "path": _PATH,
            "operation": s.string("What to do.", enum=list(OPERATIONS)),
            "content": s.string("The text to add or put in place (every operation but set_front_matter)."),
            "old": s.string("replace: the exact passage to replace; it must occur exactly once (overlapping "
                            "occurrences count: \"aa\" occurs twice in \"xaaay\")."),
            "heading": s.string("insert_under_heading, replace_section: the heading with its level, '## Decisions'."),
            "fields": {"type": "object", "description": "set_front_matter: the fields to set, such as "
                                                        "{\"status\": \"done\"}; a null value removes the field."},
            "expected_version": _EXPECTED,
        }, ["path", "operation"]),
        output_schema=_CHANGE_OUTPUT, cut_ways=_CHANGE_WAYS, not_found=NOTE_NOT_FOUND,
        refusals=_refusals("edit_note", "A passage that occurs no time or several times, a heading the note lacks "
                                        "(the error lists its headings) or has twice, an edit that changes "
                                        "nothing, or an argument the operation does not take (heading with append, "
                                        "fields with replace, ...: the error says which operations take it) is "
                                        "refused as invalid arguments naming the argument."),
    )


def _move_note(svc: NoteWritingService) -> ToolSpec:
    def move_note(ctx: CallContext, args: Arguments) -> JsonObject:
        return change_dict(svc.move_note(ctx.principal, args.required_string("path"), args.required_string("new_path"),
                                         tool="move_note", expected_version=args.string("expected_version"),
                                         update_links=args.boolean("update_links", True)))

    return ToolSpec(
        name="move_note", title="Move or rename a note", action=ACTION, annotations=KEEPING, call=move_note,
        description="Moves or renames a note within its project; it never replaces a note already at new_path. "
                    "Links to it and its own relative links are rewritten to follow it (update_links), those your "
                    "token reads: a token without knowledge:read sees no link, so none is rewritten (the summary "
                    "says so).",
        input_schema=s.tool_input({
            "path": _PATH,
            "new_path": s.string("Where it goes, project first (the same project)."),
            "expected_version": _EXPECTED,
            "update_links": s.boolean("Rewrite the links that named the note (in the notes you may read and write) "
                                      "and its own relative links so that they keep naming what they named (default "
                                      "true); "
                                      "false moves the note alone and lists the links it breaks in unlinked.",
                                      default=True),
        }, ["path", "new_path"]),
        output_schema=_CHANGE_OUTPUT, cut_ways=_CHANGE_WAYS, not_found=NOTE_NOT_FOUND,
        refusals=_refusals("move_note", "Error in move_note: Conflict: <new_path> exists already; a move never "
                                        "overwrites a note."),
    )


def _delete_note(svc: NoteWritingService) -> ToolSpec:
    def delete_note(ctx: CallContext, args: Arguments) -> JsonObject:
        return change_dict(svc.delete_note(ctx.principal, args.required_string("path"), tool="delete_note",
                                           expected_version=args.string("expected_version")))

    return ToolSpec(
        name="delete_note", title="Delete a note", action=ACTION, annotations=DESTRUCTIVE, call=delete_note,
        description="Deletes a note: its bytes go to the trash (.notewell/trash/) and the journal, and "
                    "undo_note_write with the answer's journal_id brings it back.",
        input_schema=s.tool_input({"path": _PATH, "expected_version": _EXPECTED}, ["path"]),
        output_schema=_CHANGE_OUTPUT, cut_ways=_CHANGE_WAYS, not_found=NOTE_NOT_FOUND,
        refusals=_refusals("delete_note"),
    )


def _undo(journal: NoteJournalService) -> ToolSpec:
    def undo_note_write(ctx: CallContext, args: Arguments) -> JsonObject:
        entry = args.integer("journal_id", 0, 1, JOURNAL_ID_MAX)
        return change_dict(journal.undo(ctx.principal, entry, tool="undo_note_write"))

    return ToolSpec(
        name="undo_note_write", title="Undo a note write", action=ACTION, annotations=DESTRUCTIVE, call=undo_note_write,
        description="Undoes one write of the journal (journal_id, as a write answered it): the note gets back the "
                    "bytes it had before, a deleted note comes back, a moved one moves back, its links with it. "
                    "Refused when the note changed since that write; undo the later writes first.",
        input_schema=s.tool_input({"journal_id": s.integer("The journal entry to undo.", minimum=1,
                                                           maximum=JOURNAL_ID_MAX)},
                                  ["journal_id"]),
        output_schema=_CHANGE_OUTPUT, cut_ways=_CHANGE_WAYS,
        refusals=("Error in undo_note_write: Not found: journal entry <id>: it does not exist or is in a project "
                  "this person cannot see.",
                  "Error in undo_note_write: Conflict: <path> changed since journal entry <id> (...); undo the "
                  "later entries first, or edit it.",
                  "Error in undo_note_write: Conflict: journal entry <id> was undone already, by entry <id>.",
                  _SCOPE_REFUSAL.format(tool="undo_note_write")),
    )


_ENTRY = s.View({
    "id": "The entry's id: undo_note_write takes it.",
    "at": "When the write was made (UTC, ISO 8601).",
    "user_id": "Who wrote: the person's user id.",
    "token_id": "The token the write came through; null for a web session or the command line.",
    "tool": "The call that wrote: write_note, PATCH, web editor, notewell undo, ...",
    "action": s.Shown("What the write did.", extra={"enum": ["write", "edit", "move", "delete", "undo"]}),
    "project": "The note's project.",
    "path": "Where the note was before the write, inside the project.",
    "new_path": "A move's destination inside the project; null otherwise.",
    "before_version": "The note's version before the write; null when it was created.",
    "after_version": "Its version after; null when it was deleted.",
    "undoes": "For an undo: the entry it undid; null otherwise.",
}, omit=("before",), by_alias=False)


def _journal(journal: NoteJournalService) -> ToolSpec:
    def note_journal(ctx: CallContext, args: Arguments) -> JsonObject:
        limit = args.integer("limit", JOURNAL_LIMIT_DEFAULT, 1, JOURNAL_LIMIT_MAX)
        before = args.integer("before", 0, 1, JOURNAL_ID_MAX) or None
        entries = journal.entries(ctx.principal, path=args.string("path"), since=args.string("since"), before=before,
                                  limit=limit)
        model = record_model(JournalEntry)
        out: JsonObject = {"entries": [model.model_validate(e).model_dump(mode="json", exclude={"before"},
                                                                          by_alias=False) for e in entries]}
        fits = leading_items_within(out, out["entries"], PAGE_BYTES_MAX)
        if fits < len(entries) or len(entries) == limit:
            del out["entries"][max(fits, 1):]
            shown = out["entries"]
            out["truncated"] = True
            out["note"] = (f"{len(shown)} entries, newest first; older ones may follow: call note_journal again "
                           f"with before {shown[-1]['id']} (and the same path and since).")
        return out

    return ToolSpec(
        name="note_journal", title="The journal of note writes", action="knowledge:read", annotations=READING,
        call=note_journal,
        description="Lists the writes made to notes through Notewell (by agents and people), newest first, in the "
                    "projects this person reads: who wrote, through which call, what it did and the versions "
                    "before and after. Give path for one note's history (where it was or where a move took it), "
                    "since for the writes at or after a time, before for the entries older than one (the next "
                    "page). undo_note_write takes an entry's id.",
        input_schema=s.tool_input({
            "path": s.string("One note, project first, as searchKnowledge returns it."),
            "since": s.string("Only writes at or after this time (ISO 8601: 2026-05-01 or 2026-05-01T09:00:00Z)."),
            "limit": s.integer("At most this many entries.", minimum=1, maximum=JOURNAL_LIMIT_MAX,
                               default=JOURNAL_LIMIT_DEFAULT),
            "before": s.integer("Only entries older than this one (an entry's id): the next page, as the note of a "
                                "full one names it.", minimum=1, maximum=JOURNAL_ID_MAX),
        }, []),
        output_schema=s.tool_output({
            "entries": s.array(s.record(record_model(JournalEntry), _ENTRY)),
            "note": s.string("Present when older entries may follow: the before that asks for them."),
        }, ["entries"]),
        refusals=("A since that is not a time is refused as invalid arguments naming since.",
                  "A path in a project this person cannot see gives an empty list, as a note never written."),
    )


def tools(rt: Runtime) -> Sequence[ToolSpec]:
    return [_write_note(rt.notes), _edit_note(rt.notes), _move_note(rt.notes), _delete_note(rt.notes),
            _undo(rt.journal), _journal(rt.journal)]
