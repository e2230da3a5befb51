"""notewell backup | restore: a consistent copy of the running store, and putting one back (docs/operations.md)."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.app import (
    DbOpt,
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
from notewell.config import is_postgres_url
from notewell.scratch_files import part_path

NewFileArg = Annotated[Path, typer.Argument(help="The backup file to write (a new one: a backup never overwrites).")]
BackupArg = Annotated[Path, typer.Argument(help="The file 'notewell backup' wrote (of this store's backend).")]


@app.command("backup")
def backup_command(file: NewFileArg, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Copy the whole store to FILE while it serves and writes (SQLite: its online backup API; PostgreSQL:
    pg_dump), and record the backup so 'notewell doctor' reports its age."""
    part = part_path(file)
    with (ends_on_interrupt("backup", f"no backup was written: its partial copy {part} is removed, and the store "
                                      "is as it was") as interrupt,
          runtime(vault, db, create=False) as rt):
        err_console.print(f"Backing up {rt.store_url} to {file} (Ctrl-C stops it: no backup is written then)",
                          highlight=False, markup=False, soft_wrap=True)
        was_there = file.exists()  # (the backup is then refused)
        try:
            taken = rt.backups.backup(LOCAL_OWNER, file)
        finally:  # a Ctrl-C landing as the copy was put in place leaves it whole, perhaps not yet recorded
            if not was_there and file.is_file():
                interrupt.left = (f"the backup {file} was written whole; 'notewell doctor' says whether the store "
                                  "recorded it (its last backup)")
        interrupt.left = f"the backup {file} was written whole{' and recorded' if taken.recorded else ''}"
        if json_out:
            print_json({"at": taken.at, "path": taken.path, "bytes": taken.bytes, "recorded": taken.recorded})
            return
        console.print(f"Backed up {rt.store_url} to {taken.path} ({taken.bytes} bytes) as of {taken.at}",
                      highlight=False, markup=False, soft_wrap=True)
        if not taken.recorded:
            console.print("note: the store cannot write (its disk full, or it read-only), so it has no record of "
                          "this backup and 'notewell doctor' will not count it; the file is whole",
                          highlight=False, markup=False, soft_wrap=True)


@app.command("restore")
def restore_command(
    file: BackupArg,
    replace: Annotated[bool, typer.Option("--replace", help="Replace a store that holds rows (stop its servers "
                                                            "first).")] = False,
    vault: VaultOpt = None, db: DbOpt = None,
) -> None:
    """Put a backup back: into a new store, or with --replace over one that holds rows."""
    if (file / "manifest.json").is_file() or (file.is_file() and tarfile.is_tarfile(file)):  # an export
        raise fail(f"FILE: {file} is an export, not a backup; load it with `notewell import {file}`")
    if not file.is_file():  # before the store is opened: a new one would be left behind, empty
        what = "is not there" if not file.exists() else "is not a file"
        raise fail(f"FILE: {file} {what}; name the file `notewell backup` wrote")
    with (ends_on_interrupt("restore", "nothing was restored") as interrupt,
          store_removed_on_failure(vault, db) as filling):
        interrupt.left = "nothing was restored: the interrupt came before the restore's one commit" + filling.undone()
        with runtime(vault, db, arguments={"file": "FILE"}) as rt:
            err_console.print(f"Restoring {file} into {rt.store_url} (Ctrl-C stops it before its commit: nothing is "
                              "restored then)", highlight=False, markup=False, soft_wrap=True)

            def restored() -> None:  # (a Ctrl-C is held meanwhile: said with this, once the store holds the backup)
                filling.keep()
                interrupt.left = f"the restore was done: the store holds the backup {file}"

            rt.backups.restore(LOCAL_OWNER, file, replace=replace, done=restored)
            console.print(f"Restored {rt.store_url} from {file}", highlight=False, markup=False, soft_wrap=True)


_REINDEXED_SOME = ("the tables reindexed before it keep their new indexes, and the one being reindexed keeps its "
                   "old ones (each REINDEX is a transaction of its own); run notewell repair again")


@app.command("repair")
def repair_command(vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Rebuild every index of a damaged store from its rows (stop its servers first), then check the whole
    store for damage left; 'notewell doctor' says when this is needed."""
    with ends_on_interrupt("repair", "nothing was changed") as interrupt, runtime(vault, db, create=False) as rt:
        interrupt.left = (_REINDEXED_SOME if is_postgres_url(rt.store_url) else
                          "nothing was changed: the rebuild is one transaction, and it was rolled back; run "
                          "notewell repair again")
        err_console.print(f"Repairing {rt.store_url} (Ctrl-C stops it)", highlight=False, markup=False,
                          soft_wrap=True)

        def checking(rebuilt: list[str]) -> None:
            interrupt.left = (f"the {len(rebuilt)} indexes were rebuilt, but the check for damage left was cut "
                              "short; run notewell doctor")

        repaired = rt.backups.repair(LOCAL_OWNER, checking)
        interrupt.left = "the repair was done"
        left = repaired.left
        if not repaired.rebuilt and left is None:  # PostgreSQL: no table this role may REINDEX
            raise fail(f"rebuilt nothing: the role connecting to {rt.store_url} owns none of the store's tables; run "
                       "the repair as the role that owns them (or a superuser)")
        if json_out:
            print_json({"rebuilt": repaired.rebuilt, "checked": left is not None,
                        "damaged": left.damaged if left is not None else {}})
        elif repaired.rebuilt:
            console.print(f"Rebuilt {len(repaired.rebuilt)} indexes of {rt.store_url}: {', '.join(repaired.rebuilt)}",
                          highlight=False, markup=False, soft_wrap=True)
        if left is not None and left.damaged:
            raise fail(f"damage is left where no index rebuilds it: {'; '.join(left.damaged.values())}; restore the "
                       "last backup ('notewell restore FILE --replace'), or try 'notewell export DIR' and import it "
                       "into a new store, which stops at a table whose rows are damaged (docs/operations.md, \"A "
                       "damaged store\")")
        if not json_out:
            console.print("The store is whole: no damage found" if left is not None else
                          "PostgreSQL checks its own pages as it reads them", highlight=False, markup=False)
