"""notewell export | import | migrate: the whole store as files (docs/operations.md), and from one store to another."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.app import (
    DbOpt,
    Filling,
    Interrupt,
    JsonOpt,
    VaultOpt,
    app,
    console,
    ends_on_interrupt,
    err_console,
    fail,
    print_json,
    runtime,
    store_removed_on_failure,
)
from notewell.cli.rows import Col, show_rows
from notewell.config import is_postgres_url
from notewell.runtime import Runtime
from notewell.services.export_archive import is_archive
from notewell.services.export_format import MANIFEST
from notewell.services.portability import Carried

NewFolderArg = Annotated[Path, typer.Argument(help="Where to write the export: a new or empty folder, or a new file "
                                                   "ending in .tar.")]
ExportArg = Annotated[Path, typer.Argument(help="The export 'notewell export' wrote: its folder, or its .tar file.")]
SQLITE_PREFIX = "sqlite:"


def _show(carried: Sequence[Carried], verb: str, json_out: bool, *, merged: bool = False) -> None:
    if json_out:
        print_json({"tables": [{"table": c.name, "rows": c.rows, "sha256": c.sha256, "loaded": c.loaded}
                               for c in carried]})
        return
    loaded = any(c.loaded is not None for c in carried)
    show_rows([Col("table", whole=True), Col("rows"), *([Col("loaded")] if loaded else []), Col("sha256", whole=True)],
              [(c.name, str(c.rows), *([str(c.loaded)] if loaded else []), c.sha256) for c in carried],
              empty="No tables",
              note=(f"{verb} {len(carried)} tables, {sum(c.rows for c in carried)} rows: "
                    f"{sum(c.loaded or 0 for c in carried)} added, the others held already" if merged else
                    f"{verb} {len(carried)} tables, {sum(c.rows for c in carried)} rows; counts and SHA-256 checked"))


@app.command("export")
def export_command(
    folder: NewFolderArg,
    person: Annotated[str | None, typer.Option("--person", help="Only what this person (an email) may take with "
                                                              "them: their memories, sessions, knowledge, home.")]
    = None,
    project: Annotated[str | None, typer.Option("--project", help="Only this project's rows (an id): the project, "
                                                                "its grants, memories (private ones included), "
                                                                "brain rows, audit entries, and the users they "
                                                                "name.")] = None,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Write everything the store holds that the vault does not (users, grants, token hashes, memories, sessions,
    knowledge, the audit log, ...) as JSON Lines per table plus a manifest with counts and SHA-256."""
    archive = is_archive(folder)
    whole = folder if archive else folder / MANIFEST  # there once the export is done (written last)
    was_there = whole.exists()  # (the export is then refused)
    left = f"nothing was exported: {folder} {'is as it was' if folder.exists() else 'is not there'} (what it " \
           "wrote is removed)"
    with ends_on_interrupt("export", left) as interrupt, runtime(vault, db, create=False) as rt:
        err_console.print(f"Exporting {rt.store_url} to {folder} (Ctrl-C stops it: nothing of the export is left "
                          "then)", highlight=False, markup=False, soft_wrap=True)
        try:
            carried = rt.portability.export(LOCAL_OWNER, folder, person=person, project=project)
        finally:  # a Ctrl-C landing as the export ended (its last file in place) leaves it whole
            if not was_there and whole.is_file():
                interrupt.left = f"the export was done: {folder} holds every table and its manifest"
        _show(carried, f"Exported to {folder}:", json_out)


@app.command("import")
def import_command(
    folder: ExportArg,
    merge: Annotated[bool, typer.Option("--merge", help="Load into a store that holds rows already, skipping "
                                                        "the rows it holds (by key; by content for rows without "
                                                        "one: see docs/operations.md).")] = False,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Load an export into an empty store of either backend, checking every table against the manifest;
    then run 'notewell index' to index the vault's documents."""
    if not folder.exists():  # before the store is opened: a new one would be left behind, empty
        raise fail(f"FOLDER: {folder} is not there; name the folder or .tar file `notewell export` wrote")
    with (ends_on_interrupt("import", "nothing was imported") as interrupt,
          store_removed_on_failure(vault, db) as filling):
        interrupt.left = "nothing was imported: the load is one transaction, and it was rolled back" + filling.undone()
        with runtime(vault, db) as rt:
            err_console.print(f"Importing {folder} into {rt.store_url} (Ctrl-C stops it: nothing is imported then)",
                              highlight=False, markup=False, soft_wrap=True)
            carried = rt.portability.import_(LOCAL_OWNER, folder, merge=merge)
            filling.keep()
            interrupt.left = "the import was done: every table loaded and checked"
            _show(carried, f"Imported from {folder}:", json_out, merged=merge)


def _store(value: str, flag: str) -> str:
    """A --from/--to value as --db takes it: sqlite:PATH is PATH; one that names no store is refused (an empty
    one fell back to the vault's own store)."""
    store = value[len(SQLITE_PREFIX):] if value.startswith(SQLITE_PREFIX) else value
    if not store.strip():
        raise fail(f"{flag}: names no store; give sqlite:PATH or postgresql://user@host:port/database")
    return store


@app.command("migrate")
def migrate_command(
    source: Annotated[str, typer.Option("--from", help="The store to copy: sqlite:PATH or postgresql://...")],
    target: Annotated[str, typer.Option("--to", help="The empty store to fill: sqlite:PATH or postgresql://...")],
    vault: VaultOpt = None, json_out: JsonOpt = False,
) -> None:
    """Copy every table from one store to another (SQLite to PostgreSQL or back), checking counts and SHA-256
    table by table; with --vault, then index the vault's documents into the target."""
    into, origin = _store(target, "--to"), _store(source, "--from")
    if "://" not in origin and not is_postgres_url(origin) and not Path(origin).expanduser().is_file():
        raise fail(f"--from: no store at {origin}; name the store to copy: sqlite:PATH of an existing file, or "
                   "postgresql://user@host:port/database")
    with (ends_on_interrupt("migrate", "nothing was copied") as interrupt,
          store_removed_on_failure(vault, into) as filling):
        interrupt.left = "nothing was copied: the copy is one transaction, and it was rolled back" + filling.undone()
        with (runtime(vault, origin, create=False, db_flag="--from") as src,
              runtime(vault, into, db_flag="--to", arguments={"import": "--to"}) as dst):
            _migrate(src, dst, target, vault, json_out, filling, interrupt)


def _migrate(src: Runtime, dst: Runtime, target: str, vault: str | None, json_out: bool, filling: Filling,
             interrupt: Interrupt) -> None:
    """The copy, then (with --vault) the vault indexed into it; ``interrupt`` says how far it came."""
    err_console.print(f"Migrating {src.store_url} to {dst.store_url} (Ctrl-C stops it: nothing is copied)",
                      highlight=False, markup=False, soft_wrap=True)
    carried = dst.portability.migrate_from(LOCAL_OWNER, src.portability)
    filling.keep()  # indexing the vault below may fail; the copy stays
    shown = dst.store_url if "://" in target else target  # a database URL's password as ***
    hidden = " (the --to URL: its password is not shown)" if "://" in target and shown != target else ""
    interrupt.left = f"the copy was done: every table copied and checked into {shown}{hidden}"
    _show(carried, f"Migrated {src.store_url} to {dst.store_url}:", json_out)
    if vault is None:
        if not json_out:
            err_console.print(f"Now index the vault into the target: notewell index --vault VAULT --db {shown}"
                              f"{hidden}", highlight=False, markup=False, soft_wrap=True)  # (a note: stderr)
        return
    interrupt.left += (f", but indexing the vault into it was cut short; run notewell index --vault {vault} "
                       f"--db {shown}")
    report = dst.indexing.sync()
    if not json_out:
        console.print(report.summary(listed=False), highlight=False, markup=False)
