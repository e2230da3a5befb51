"""notewell note write | edit | move | delete, notewell journal and notewell undo: writing documents of the
vault as the local owner or --as EMAIL (docs/writing.md), through the same service as the MCP tools and REST."""

from __future__ import annotations

import shlex
from typing import Annotated

import typer
import yaml

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json, runtime
from notewell.cli.piped import text_or_stdin
from notewell.cli.rows import Col, show_rows, shown
from notewell.errors import InvalidArgument
from notewell.services.note_edits import OPERATIONS, Edit, check_operation
from notewell.services.note_journal import JOURNAL_LIMIT_DEFAULT
from notewell.services.note_vault import NoteChange
from notewell.vault.front_matter_yaml import load_yaml

note_app = typer.Typer(help="Write documents of the vault: create, edit, move, delete (undo with 'notewell undo').",
                       no_args_is_help=True)
app.add_typer(note_app, name="note")

AsOpt = Annotated[str | None, typer.Option("--as", help="Act as this user (their role, grants and home) instead of "
                                                        "the local owner.")]
PathArg = Annotated[str, typer.Argument(help="The document's path, project first: handbook/decisions.md.")]
ExpectedOpt = Annotated[str | None, typer.Option("--expected-version", help="Refuse the change if the document is "
                                                                           "no longer at this version.")]


_POSITIONAL = {"path": "PATH", "new_path": "NEW_PATH"}  # a note command's own arguments, named as its help does


def _show(change: NoteChange, json_out: bool) -> None:
    if json_out:
        print_json({"path": change.path, "version": change.version, "previousVersion": change.previous_version,
                    "firstLine": change.first_line, "lastLine": change.last_line, "summary": change.summary,
                    "diff": change.diff, "diffTruncated": change.diff_truncated, "journalId": change.journal_id,
                    "movedFrom": change.moved_from, "trash": change.trash,
                    "unlinked": list(change.unlinked), "relinked": list(change.relinked),
                    "dangling": list(change.dangling)})
        return
    if change.diff:
        console.print(shown(change.diff), markup=False, highlight=False, end="")
    back = (f"to take it back with its links: notewell note move {shlex.quote(change.path)} "
            f"{shlex.quote(change.moved_from)}" if change.relinked and change.moved_from
            else f"'notewell undo {change.journal_id}' puts it back")
    console.print(f"{change.path}: {change.summary}; version {change.version or '(deleted)'}, journal "
                  f"{change.journal_id} ({back})", markup=False, highlight=False)
    for place in change.relinked:
        console.print(f"  link rewritten: {shown(place)}", markup=False, highlight=False)
    for place in change.unlinked:
        console.print(f"  no longer resolves: {shown(place)}", markup=False, highlight=False)
    for link in change.dangling:
        console.print(f"  symbolic link now leads nowhere: {shown(link)}", markup=False, highlight=False)


@note_app.command("write")
def note_write(
    path: PathArg,
    content: Annotated[str, typer.Argument(help="The whole text ('-' reads standard input).")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the document if it exists.")] = False,
    expected_version: ExpectedOpt = None,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Create a document (refused over an existing one unless --overwrite)."""
    with runtime(vault, db, arguments={**_POSITIONAL, "content": "CONTENT"}) as rt:
        _show(rt.notes.write_note(rt.authentication.acting_as(as_user), path, text_or_stdin(content),
                                  tool="notewell note", overwrite=overwrite, expected_version=expected_version),
              json_out)


def _fields(items: list[str]) -> dict[str, object]:
    fields: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidArgument("fields", f"{item!r}: write --field KEY=VALUE (KEY= removes the field)")
        try:
            fields[key.strip()] = load_yaml(value) if value else None
        except yaml.YAMLError as err:
            raise InvalidArgument("fields", f"{item!r}: the value is not YAML ({err})") from err
    return fields


@note_app.command("edit")
def note_edit(
    path: PathArg,
    operation: Annotated[str, typer.Argument(help=f"One of {', '.join(OPERATIONS)}.")],
    content: Annotated[str, typer.Option("--content", "-c", help="The text to add or put in place ('-' reads "
                                                                 "standard input).")] = "",
    old: Annotated[str | None, typer.Option("--old", help="replace: the exact passage, occurring once.")] = None,
    heading: Annotated[str | None, typer.Option("--heading", help="The heading with its level: '## Decisions'.")]
    = None,
    field: Annotated[list[str] | None, typer.Option("--field", help="set_front_matter: KEY=VALUE (repeatable; "
                                                                    "KEY= removes it).")] = None,
    expected_version: ExpectedOpt = None,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Change part of a document and keep every other line as it is."""
    with runtime(vault, db, arguments=_POSITIONAL) as rt:
        edit = Edit(check_operation(operation), text_or_stdin(content), old=old, heading=heading,
                    fields=_fields(field or []))
        _show(rt.notes.edit_note(rt.authentication.acting_as(as_user), path, edit, tool="notewell note",
                                 expected_version=expected_version), json_out)


@note_app.command("move")
def note_move(
    path: PathArg,
    new_path: Annotated[str, typer.Argument(help="Where it goes, project first (the same project).")],
    expected_version: ExpectedOpt = None,
    update_links: Annotated[bool, typer.Option("--update-links/--keep-links",
                                               help="Rewrite the links that named the document (in the documents "
                                                    "you may write) and its own relative links to keep naming what "
                                                    "they named, or leave every other document as it is.")] = True,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Move or rename a document within its project; never over another. Links follow it."""
    with runtime(vault, db, arguments=_POSITIONAL) as rt:
        _show(rt.notes.move_note(rt.authentication.acting_as(as_user), path, new_path, tool="notewell note",
                                 expected_version=expected_version, update_links=update_links), json_out)


@note_app.command("delete")
def note_delete(
    path: PathArg, expected_version: ExpectedOpt = None,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Delete a document into the trash (.notewell/trash/); 'notewell undo' brings it back."""
    with runtime(vault, db, arguments=_POSITIONAL) as rt:
        _show(rt.notes.delete_note(rt.authentication.acting_as(as_user), path, tool="notewell note",
                                   expected_version=expected_version), json_out)


@app.command("journal")
def journal(
    path: Annotated[str | None, typer.Option("--path", help="One document, project first.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="At or after this time: ISO 8601.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many entries, newest first.")]
    = JOURNAL_LIMIT_DEFAULT,
    before: Annotated[int | None, typer.Option("--before", min=1, help="Only entries older than this id (the "
                                                                      "next page).")] = None,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """The journal of document writes, newest first: who, through what, the versions before and after."""
    with runtime(vault, db) as rt:
        entries = rt.journal.entries(rt.authentication.acting_as(as_user), path=path, since=since, before=before,
                                     limit=limit)
    if json_out:
        print_json([{"id": e.id, "at": e.at, "userId": e.user_id, "tokenId": e.token_id, "tool": e.tool,
                     "action": e.action, "project": e.project, "path": e.path, "newPath": e.new_path,
                     "beforeVersion": e.before_version, "afterVersion": e.after_version, "undoes": e.undoes}
                    for e in entries])
        return
    show_rows([Col("id", whole=True), Col("at", whole=True), Col("action"), Col("document", whole=True),
               Col("by"), Col("tool"), Col("after")],
              [(str(e.id), e.at, e.action + (f" of {e.undoes}" if e.undoes else ""),
                f"{e.project}/{e.path}" + (f" -> {e.new_path}" if e.new_path else ""), e.user_id, e.tool,
                e.after_version or "(gone)") for e in entries],
              empty="No writes in the journal",
              note=f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}" + (
                  f"; older ones may follow: --before {entries[-1].id}" if len(entries) == limit else ""))


@app.command("undo")
def undo(
    entry: Annotated[int, typer.Argument(min=1, help="The journal entry to undo (see 'notewell journal').")],
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Undo one write: refused, with the reason, if the document changed since."""
    with runtime(vault, db) as rt:
        _show(rt.journal.undo(rt.authentication.acting_as(as_user), entry, tool="notewell undo"), json_out)
