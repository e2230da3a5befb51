"""notewell search: KnowledgeService's search from the command line, as the local owner (every ordinary
project) or, with --as EMAIL, as that person (their home and grants too)."""

from __future__ import annotations

from typing import Annotated

import typer

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, fail, print_json, runtime
from notewell.cli.rows import Col, show_rows
from notewell.services.knowledge import CaseMode, SearchResult


@app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="The text (or with --regex, the RE2 pattern) to look for.")],
    regex: Annotated[bool, typer.Option("--regex", help="Read the query as an RE2 regular expression.")] = False,
    project: Annotated[list[str] | None, typer.Option("--project", "-p", help="Search this project (repeatable).")]
    = None,
    path: Annotated[str | None, typer.Option("--path", help="A folder or file, vault-relative: projects/apollo.")]
    = None,
    file_type: Annotated[
        list[str] | None, typer.Option("--type", "-t", help="Only this file type: md, txt (repeatable).")
    ] = None,
    all_lines: Annotated[bool, typer.Option("--all-lines", help="Every matching line, not the first per file.")]
    = False,
    smart_case: Annotated[bool, typer.Option("--smart-case", help="A capital letter makes the search case-sensitive.")]
    = False,
    case_sensitive: Annotated[bool, typer.Option("--case-sensitive", help="Match case exactly.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="How many matches at most.")] = 40,
    offset: Annotated[int, typer.Option("--offset", help="How many matches to skip.")] = 0,
    as_user: Annotated[str | None, typer.Option("--as", help="Search as this user (their email): their home and "
                                                "grants; default: the local owner, every ordinary project.")]
    = None,
    vault: VaultOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Search the vault: a case-insensitive substring by default, or an RE2 regex with --regex."""
    if smart_case and case_sensitive:
        raise fail("--smart-case and --case-sensitive: choose one")
    case: CaseMode = "sensitive" if case_sensitive else "smart" if smart_case else "insensitive"
    with runtime(vault, db, create=False) as rt:
        result = rt.knowledge.search(rt.authentication.acting_as(as_user), query, projects=project or [],
                                     path=path or "", file_types=file_type or [], regex=regex, case=case,
                                     all_lines=all_lines, limit=limit, offset=offset)
    if json_out:
        _print_json(result)
    else:
        _print_rows(result)


def _print_json(result: SearchResult) -> None:
    print_json({
        "query": result.query,
        "matches": [{"project": m.project, "path": m.vault_path, "line": m.line, "text": m.text,
                     "shortened": m.shortened} for m in result.matches],
        "offset": result.offset,
        "hasMore": result.has_more,
        "scanned": result.scanned,
        "complete": result.complete,
    })


def _print_rows(result: SearchResult) -> None:
    """A table on a wide terminal; else ``path:line: text`` lines, as grep prints them."""
    rows = [(m.vault_path, m.line, m.text + (" …" if m.shortened else "")) for m in result.matches]
    notes = [f"{len(result.matches)} match{'es' if len(result.matches) != 1 else ''}"]
    if result.has_more:
        notes.append(f"more after this page: --offset {result.offset + len(result.matches)}")
    if result.scanned:
        notes.append("scanned every document (the pattern holds no literal to narrow the search)")
    if not result.complete:
        notes.append("the scan stopped at its time budget: results are incomplete")
    after = f" after --offset {result.offset}" if result.offset else ""
    empty = "; ".join([f"No results for {result.query!r}{after}", *notes[1:]])
    # the path whole, so it can be copied and passed on as it is
    show_rows([Col("path", whole=True), Col("line", whole=True, justify="right"), Col("text")], rows,
              empty=empty, note="; ".join(notes), line=lambda row: f"{row[0]}:{row[1]}: {row[2]}")
