"""notewell memory add | search | recall | context | forget | export, as the local owner or --as EMAIL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
import yaml

from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, print_json, runtime
from notewell.cli.piped import text_or_stdin
from notewell.cli.rows import Col, show_rows, shown
from notewell.errors import InvalidArgument
from notewell.services import memory as m
from notewell.services.context_pack import PackedItem

memory_app = typer.Typer(help="Agent memory: add, search (strict), recall (tolerant), context packs, forget, export.",
                         no_args_is_help=True)
app.add_typer(memory_app, name="memory")

AsOpt = Annotated[str | None, typer.Option("--as", help="Act as this user (their role, grants and home) instead of "
                                                        "the local owner.")]
PathFilterOpt = Annotated[str | None, typer.Option("--path-filter", help="Only locations that start with this, "
                                                                        "project first: projects/apollo/dec.")]
TypeOpt = Annotated[str | None, typer.Option("--type", help="Only durable or working memories.")]
PreferWorkingOpt = Annotated[bool, typer.Option("--prefer-working", help="Recent working memories first.")]


def _memory_json(mem: m.Memory) -> dict[str, object]:
    """A memory in --json: camelCase, as every --json output and the MCP results."""
    return {"ref": mem.ref, "project": mem.project, "path": mem.path, "memoryType": mem.memory_type,
            "title": mem.title, "content": mem.content, "tags": list(mem.tags), "created": mem.created,
            "updated": mem.updated, "expiresAt": mem.expires_at, "supersededBy": mem.superseded_by,
            "private": mem.private}


def _front_matter(mem: m.Memory) -> dict[str, object]:
    """An exported memory's front matter, in the field names of docs/memory.md."""
    return {"ref": mem.ref, "project": mem.project, "path": mem.path, "memory_type": mem.memory_type,
            "title": mem.title, "tags": list(mem.tags), "created": mem.created, "updated": mem.updated,
            "expires_at": mem.expires_at, "superseded_by": mem.superseded_by, "private": mem.private}


def _more(found: m.MemorySearch, limit: int) -> str:
    """What to do when more memories match than --limit let through, as MCP's note says it: another word
    narrows a strict query but widens a tolerant one, so only search is told to add one."""
    if not found.more:
        return ""
    strict = found.mode == "strict"
    raise_it = f"raise --limit (up to {m.SEARCH_LIMIT_MAX}), or " if limit < m.SEARCH_LIMIT_MAX else ""
    return (f"\nMore memories match {'every word ' if strict else ''}than the {len(found.results)} shown: "
            f"{raise_it}narrow with {'another word, ' if strict else ''}--path-filter or --type.")


def _show(found: m.MemorySearch, limit: int, json_out: bool) -> None:
    words_only = f"; found by words only: {found.words_only}" if found.words_only else ""
    if json_out:
        print_json({"query": found.query, "mode": found.mode, "terms": found.terms,
                    **({"wordsOnly": found.words_only} if found.words_only else {}),
                    "results": [{**_memory_json(r.memory), "score": r.score, "why": r.why,
                                 "foundBy": list(r.found_by), "similarity": r.similarity,
                                 "documents": list(r.documents)} for r in found.results], "more": found.more})
        return
    # a ref is never cut: it is what `memory forget` takes
    show_rows([Col("ref", whole=True), Col("location", whole=True), Col("type"), Col("title"), Col("why")],
              [(r.memory.ref, r.memory.location, r.memory.memory_type, r.memory.title, r.why) for r in found.results],
              empty=f"No results for {found.query!r} ({found.mode} matching{words_only})",
              note=f"{len(found.results)} result(s), {found.mode} matching{words_only}{_more(found, limit)}")


@memory_app.command("add")
def memory_add(
    content: Annotated[str, typer.Argument(help="The text to remember, verbatim ('-' reads standard input).")],
    project: Annotated[str | None, typer.Option("--project", "-p", help="The project to write to (default: "
                                                                        "your home; the local owner must name one).")]
    = None,
    path: Annotated[str, typer.Option("--path", help="Logical path inside the project, e.g. apollo/decisions.")] = "",
    title: Annotated[str | None, typer.Option("--title", help="Title (default: the first line).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="A tag (repeatable).")] = None,
    memory_type: Annotated[str, typer.Option("--type", help="durable or working.")] = "durable",
    supersedes: Annotated[str | None, typer.Option("--supersedes", help="Ref of the memory this one replaces.")]
    = None,
    expires_at: Annotated[str | None, typer.Option("--expires-at", help="Working memories: ISO 8601 expiry.")]
    = None,
    private: Annotated[bool, typer.Option("--private", help="Only its author will see it, whatever anyone's "
                                                            "role (default: every reader of the project).")] = False,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Remember something. The same content at the same project and path returns the existing ref."""
    with runtime(vault, db, arguments={"content": "CONTENT"}) as rt:
        done = rt.memory.remember(rt.authentication.acting_as(as_user), text_or_stdin(content), path=path,
                                  memory_type=memory_type, title=title, tags=tag, project=project,
                                  supersedes=supersedes, expires_at=expires_at, private=private)
    if json_out:
        print_json({**_memory_json(done.memory), "deduplicated": not done.created, "superseded": done.superseded})
        return
    what = "stored" if done.created else "already there (same content, project and path)"
    console.print(f"{done.memory.ref} {what} in {done.memory.location}", highlight=False)


@memory_app.command("search")
def memory_search(
    query: Annotated[str, typer.Argument(help="Every word must appear as a whole word.")],
    limit: Annotated[int, typer.Option("--limit", help="At most this many (1-50).")] = m.SEARCH_LIMIT_DEFAULT,
    path_filter: PathFilterOpt = None, memory_type: TypeOpt = None,
    prefer_working: PreferWorkingOpt = False,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Strict search: only memories holding every word of the query."""
    with runtime(vault, db) as rt:
        found = rt.memory.search_memory(rt.authentication.acting_as(as_user), query, limit=limit,
                                        path_filter=path_filter, memory_type=memory_type,
                                        prefer_working=prefer_working)
    _show(found, limit, json_out)


@memory_app.command("recall")
def memory_recall(
    query: Annotated[str, typer.Argument(help="Any word, stem or prefix matches.")],
    limit: Annotated[int, typer.Option("--limit", help="At most this many (1-50).")] = m.RECALL_LIMIT_DEFAULT,
    path_filter: PathFilterOpt = None, memory_type: TypeOpt = None,
    prefer_working: PreferWorkingOpt = False,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Tolerant recall, ranked by relevance blended with recency and memory type."""
    with runtime(vault, db) as rt:
        found = rt.memory.recall(rt.authentication.acting_as(as_user), query, limit=limit, path_filter=path_filter,
                                    memory_type=memory_type, prefer_working=prefer_working)
    _show(found, limit, json_out)


@memory_app.command("context")
def memory_context(
    query: Annotated[str, typer.Argument(help="What the context is for.")],
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="The budget (estimated tokens).")]
    = m.CONTEXT_TOKENS_DEFAULT,
    documents: Annotated[bool, typer.Option("--documents", help="Also pack the best document passages.")] = False,
    path_filter: PathFilterOpt = None, memory_type: TypeOpt = None,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Pack the best memories (and passages) into one block of at most --max-tokens."""
    with runtime(vault, db) as rt:
        pack = rt.memory.recall_context(rt.authentication.acting_as(as_user), query, max_tokens=max_tokens,
                                           include_documents=documents, path_filter=path_filter,
                                           memory_type=memory_type)
    if json_out:
        print_json({"query": pack.query, "context": pack.text, "tokensUsed": pack.tokens_used,
                    "maxTokens": pack.max_tokens, **({"wordsOnly": pack.words_only} if pack.words_only else {}),
                    "items": [_packed_json(i) for i in pack.items], "leftOut": [vars(o) for o in pack.left_out]})
        return
    typer.echo(shown(pack.text), nl=False)  # stored text: never a terminal command
    words_only = f"; found by words only: {pack.words_only}" if pack.words_only else ""
    console.print(f"{pack.tokens_used} of {pack.max_tokens} tokens, {len(pack.items)} item(s), "
                  f"{len(pack.left_out)} left out or shortened{words_only}", style="dim", highlight=False,
                  markup=False)


def _packed_json(item: PackedItem) -> dict[str, object]:
    """A context pack's item in --json, camelCase as every --json output (found_by was the one snake_case key)."""
    return {"kind": item.kind, "ref": item.ref, "title": item.title, "tokens": item.tokens,
            "complete": item.complete, "label": item.label, "documents": list(item.documents),
            "foundBy": list(item.found_by), "similarity": item.similarity}


@memory_app.command("forget")
def memory_forget(
    ref: Annotated[str, typer.Argument(help="The memory's ref.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the audit log).")],
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Forget a memory: it leaves every search."""
    with runtime(vault, db) as rt:
        gone = rt.memory.forget(rt.authentication.acting_as(as_user), ref, reason)
    if json_out:
        print_json({"ref": gone.ref, "project": gone.project, "forgotten": True, "forgottenAt": gone.deleted_at})
        return
    console.print(f"{gone.ref} forgotten", highlight=False)


def _markdown(mem: m.Memory) -> str:
    front = {k: v for k, v in _front_matter(mem).items() if v not in (None, [])}
    if mem.deleted_at:
        front.update(deleted_at=mem.deleted_at, delete_reason=mem.delete_reason)
    return "---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False) + "---\n" + mem.content + (
        "" if mem.content.endswith("\n") else "\n")


@memory_app.command("export")
def memory_export(
    folder: Annotated[Path, typer.Argument(help="Write one <project>/<ref>.md per memory here.")],
    everything: Annotated[bool, typer.Option("--all", help="Also superseded and forgotten memories.")] = False,
    as_user: AsOpt = None, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Export the memories you may read as markdown files with YAML front matter."""
    written: list[str] = []
    with runtime(vault, db) as rt:
        for mem in rt.memory.export(rt.authentication.acting_as(as_user), include_inactive=everything):
            target = folder / mem.project / f"{mem.ref}.md"
            try:  # private to the owner whatever the umask: private memories are among them
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                target.parent.mkdir(mode=0o700, exist_ok=True)
                with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                               encoding="utf-8") as out:
                    out.write(_markdown(mem))
            except OSError as exc:
                raise InvalidArgument("FOLDER", f"cannot write {target} ({exc}); choose a writable folder") from None
            written.append(str(target))
    if json_out:
        print_json({"folder": str(folder), "files": written})
        return
    console.print(f"{len(written)} memor{'y' if len(written) == 1 else 'ies'} written under {folder}",
                  highlight=False)
