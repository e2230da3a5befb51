"""Carrying a whole store: export to the format of export_format.py, import into a store of either backend,
and migrate from one store to another, each verified table by table (row counts and SHA-256 of the rows).

What is carried is every table the store's catalog holds but those store/shared/tables.py excludes with a
reason (the documents, which the vault holds; search indexes, rebuilt; the cookie key, a secret). Token
secrets and passwords are carried as the hashes the store keeps. The local owner alone carries a store
(``store:carry``): it holds every home, private memories included.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from notewell.access.authorization import Authorization
from notewell.access.policy import Action
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, NotewellError, NotFound, file_refusal
from notewell.scratch_files import remove_stale_folders, scratch_folder
from notewell.services.export_archive import is_archive, pack, unpack
from notewell.services.export_format import (
    LINE_MAX_BYTES,
    MANIFEST,
    Checksum,
    TableEntry,
    line,
    manifest_text,
    parsed,
    read_manifest,
)
from notewell.store.base import Store
from notewell.store.interrupts import interrupts_held
from notewell.store.shared.tables import Table, TableLoader, TableReader

CARRY: Action = "store:carry"
Chooser = Callable[[TableReader, Table], Iterator[Sequence[Any]]]


@dataclass(frozen=True)
class Carried:
    """One table as carried: its rows and checksum, and (import, migrate) the rows now in the target."""

    name: str
    rows: int
    sha256: str
    loaded: int | None = None


class ChecksumMismatch(NotewellError):
    """What was loaded differs from what was exported (a damaged file, or a store that changed a value)."""


class PortabilityService:
    def __init__(self, store: Store, authorization: Authorization) -> None:
        self.store = store
        self.authorization = authorization

    # --- export -------------------------------------------------------------------------------------------

    def export(self, p: Principal, folder: Path, *, person: str | None = None,
               project: str | None = None) -> list[Carried]:
        """Every carried table into ``folder`` (new or empty), the manifest written last; with ``person`` (an
        email), only that person's rows (store/shared/person.py: what a person may take with them); with
        ``project`` (an id), only that project's (store/shared/project_rows.py). A path ending in .tar is one file
        instead (services/export_archive.py)."""
        self.authorization.authorize(p, CARRY)
        if person is not None and project is not None:
            raise InvalidArgument("project", "--person and --project are two different exports (a person's rows, "
                                             "a project's rows); give one of them")
        if is_archive(folder):
            with _scratch(folder, "export") as scratch:
                try:
                    carried = self.export(p, scratch / "export", person=person, project=project)
                except InvalidArgument as exc:  # a refusal of the disk names the archive asked for, not the scratch
                    if str(scratch) not in exc.detail:
                        raise
                    raise InvalidArgument(exc.field, exc.detail.replace(str(scratch / "export"), str(folder))
                                          ) from None
                pack(scratch / "export", folder)
            return carried
        choose = self._chooser(person, project)
        made = not folder.exists()
        mode = None if made or not folder.is_dir() else stat.S_IMODE(folder.stat().st_mode)  # put back on failure
        entries: list[TableEntry] = []
        written: list[Path] = []
        try:
            _empty_folder(folder)
            with self.store.tables.reading() as reader:
                for table in self.store.tables.tables():
                    written.append(folder / f"{table.name}.jsonl")
                    fd = os.open(written[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "wb") as out:  # private to the owner whatever the umask
                        entries.append(_write_table(table, choose(reader, table), out))
            written += [folder / (MANIFEST + ".part"), folder / MANIFEST]  # (a Ctrl-C as it is renamed)
            _write_atomically(folder / MANIFEST, manifest_text(entries, person, project))
        except BaseException as exc:  # no partial export is left to be taken for one: what it wrote goes
            for path in written:
                path.unlink(missing_ok=True)
            if made:
                with suppress(OSError):
                    folder.rmdir()
            elif mode is not None:  # an empty folder that was there: as it was, its mode too (a review)
                with suppress(OSError):
                    folder.chmod(mode)
            refused = file_refusal("export", folder, exc) if isinstance(exc, OSError) else None
            if refused is not None:
                raise refused from None
            raise
        return [Carried(e.name, e.rows, e.sha256) for e in entries]

    def _chooser(self, person: str | None, project: str | None) -> Chooser:
        """How an export picks each table's rows: all of them, a person's, or a project's."""
        if person is not None:
            found = self.store.identity.user_by_email(person)
            if found is None:
                raise NotFound(f"no user has the email {person}", field="person", remedy="list-users")
            user_id = found.id
            return lambda reader, table: reader.person_rows(table, user_id)
        if project is not None:
            if self.store.identity.project(project) is None:
                raise NotFound(f"no project has the id {project}; 'notewell project list' shows them",
                               field="project")
            return lambda reader, table: reader.project_rows(table, project)
        return lambda reader, table: reader.rows(table)

    # --- import -------------------------------------------------------------------------------------------

    def import_(self, p: Principal, folder: Path, *, merge: bool = False) -> list[Carried]:
        """The export in ``folder`` loaded in one transaction: every file checked against the manifest as it
        is read, and (into an empty store) every table read back and checked again before the commit. A file
        is an export's archive, unpacked first into a private scratch folder beside it."""
        self.authorization.authorize(p, CARRY)
        if is_archive(folder):
            if not folder.is_file():
                raise InvalidArgument("import", f"{folder} does not exist; name the file 'notewell export' wrote")
            with _scratch(folder, "import") as scratch:
                unpack(folder, scratch)
                return self.import_(p, scratch, merge=merge)
        manifest = read_manifest(folder)
        if merge and "users" in manifest:
            self._refuse_other_people(folder, manifest["users"])
        done: list[Carried] = []
        with self.store.tables.loading(merge=merge) as loader:
            target = loader.target()
            _check_fits(manifest, target)
            if not merge:
                _refuse_non_empty(self.store)
            for table in target.values():
                entry = manifest.get(table.name)
                if entry is None:
                    continue
                loaded = loader.insert(table, entry.columns, _FileRows(folder, table, entry))
                if not merge:
                    _verify(loader, table, entry)
                done.append(Carried(entry.name, entry.rows, entry.sha256, loaded))
            # vectors are not carried: the imported memories are embedded again (queued with the load: an import
            # stopped before its commit, by Ctrl-C too, leaves nothing, one that committed leaves nothing undone)
            self.store.meaning.queue_missing()
        return done

    def _refuse_other_people(self, folder: Path, entry: TableEntry) -> None:
        """Under merge, a user of the export whose email or handle the target gives to another id is refused:
        the row would be skipped and what they wrote would name a user the target lacks. A user with the same id
        (the same person, carried before) is the target's row, kept as it is."""
        users = next(t for t in self.store.tables.tables() if t.name == "users")
        for row in _file_rows(folder, users, entry):
            email, handle, user_id = str(row.get("email")), str(row.get("handle")), row.get("id")
            held = self.store.identity.user_by_email(email) or self.store.identity.user_by_handle(handle)
            if held is not None and held.id != user_id:
                raise InvalidArgument("import", f"the export's user {email} (handle {handle}, id {user_id}) is "
                                                f"another account here ({held.email}, handle {held.handle}, id "
                                                f"{held.id}): merging would leave what they wrote naming a user "
                                                "this store lacks; nothing was imported. Import into a new store, "
                                                "or merge into one where that person has no account yet")

    # --- migrate ------------------------------------------------------------------------------------------

    def migrate_from(self, p: Principal, source: PortabilityService) -> list[Carried]:
        """Every carried table of ``source`` copied into this store (empty), then read back and compared."""
        self.authorization.authorize(p, CARRY)
        source.authorization.authorize(p, CARRY)
        done: list[Carried] = []
        with source.store.tables.reading() as reader, self.store.tables.loading() as loader:
            target = loader.target()
            tables = source.store.tables.tables()
            _check_fits({t.name: TableEntry(t.name, t.names, 0, "") for t in tables}, target)
            _refuse_non_empty(self.store, "migrate into a new store (it copies into an empty one only)")
            for table in tables:
                sums = Checksum()
                loaded = loader.insert(target[table.name], table.names, _summed(reader, table, sums))
                entry = TableEntry(table.name, table.names, sums.rows, sums.hexdigest)
                _verify(loader, target[table.name], entry)
                done.append(Carried(table.name, sums.rows, sums.hexdigest, loaded))
            self.store.meaning.queue_missing()  # in the copy's transaction, as an import's
        return done


def _write_table(table: Table, rows: Iterator[Sequence[Any]], out: BinaryIO) -> TableEntry:
    sums = Checksum()
    for row in rows:
        raw = line(table.names, row)
        sums.add(raw)
        out.write(raw)
    return TableEntry(table.name, table.names, sums.rows, sums.hexdigest)


def _summed(reader: TableReader, table: Table, sums: Checksum) -> Iterator[dict[str, Any]]:
    """The source's rows by column, each counted into ``sums`` as its line."""
    for row in reader.rows(table):
        sums.add(line(table.names, row))
        yield dict(zip(table.names, row, strict=True))


@dataclass(frozen=True)
class _FileRows:
    """A table's file as rows, read (and checked) again each time it is iterated: a merge reads a file of rows
    without a key twice, first to recognise the rows the target holds (store/shared/merge_match.py)."""

    folder: Path
    table: Table
    entry: TableEntry

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return _file_rows(self.folder, self.table, self.entry)


def _file_rows(folder: Path, table: Table, entry: TableEntry) -> Iterator[dict[str, Any]]:
    """The rows of a table's file, its count and SHA-256 checked against the manifest once it is read."""
    path = folder / f"{table.name}.jsonl"
    if not path.is_file():
        raise InvalidArgument("import", f"{path} is missing though the manifest names it; export again")
    blobs = [c.name for c in table.columns if c.kind == "blob" and c.name in entry.columns]
    sums = Checksum()
    with path.open("rb") as lines:
        while raw := lines.readline(LINE_MAX_BYTES + 1):
            if len(raw) > LINE_MAX_BYTES or not raw.endswith(b"\n"):
                raise InvalidArgument("import", f"{path} line {sums.rows + 1} is cut short or over "
                                                f"{LINE_MAX_BYTES} bytes; export again")
            sums.add(raw)
            yield parsed(raw, table.name, sums.rows, blobs)
    if (sums.rows, sums.hexdigest) != (entry.rows, entry.sha256):
        raise ChecksumMismatch(f"import: {path} holds {sums.rows} rows with SHA-256 {sums.hexdigest}, the manifest "
                               f"says {entry.rows} with {entry.sha256}: the file was changed or cut; nothing was "
                               "imported")


def _verify(loader: TableLoader, table: Table, entry: TableEntry) -> None:
    """The target's rows of ``table`` (the carried columns) hash as the source's did."""
    carried = Table(table.name, tuple(c for c in table.columns if c.name in entry.columns), table.order)
    sums = Checksum()
    for row in loader.rows(carried):
        sums.add(line(carried.names, row))
    if (sums.rows, sums.hexdigest) != (entry.rows, entry.sha256):
        raise ChecksumMismatch(f"table {table.name}: the target holds {sums.rows} rows with SHA-256 {sums.hexdigest} "
                               f"after loading {entry.rows} with {entry.sha256}; nothing was written")


def _check_fits(manifest: Mapping[str, TableEntry], target: Mapping[str, Table]) -> None:
    """Every carried table and column has its place in the target (a newer export's would not)."""
    for entry in manifest.values():
        table = target.get(entry.name)
        if table is None:
            raise InvalidArgument("import", f"table {entry.name} has no place in this store; the export was made "
                                            "by a newer Notewell: upgrade, then import")
        missing = sorted(set(entry.columns) - set(table.names))
        if missing:
            raise InvalidArgument("import", f"table {entry.name}: column(s) {', '.join(missing)} have no place in "
                                            "this store; the export was made by a newer Notewell: upgrade, then import")


def _refuse_non_empty(store: Store, way: str = "import into a new store, or merge") -> None:
    held = store.tables.held()
    if held:
        raise InvalidArgument("import", f"the target store is not empty: {', '.join(held[:5])}"
                                        f"{' …' if len(held) > 5 else ''}; {way}")


@contextmanager
def _scratch(archive: Path, field: str) -> Iterator[Path]:
    """A private scratch folder beside ``archive``, removed afterwards; one the disk refuses is named as such; the
    ones a killed run of the same command left there (kill -9: no cleanup ran) are removed first. An
    import whose archive lies in a folder it may not write (a read-only mount of backups) unpacks in the
    system's temporary folder instead."""
    if not archive.parent.is_dir():  # (an export's .tar named in a folder that is not there, or under a file)
        raise InvalidArgument(field, f"{archive.parent} is not a folder; create it, or name a .tar file in a "
                                     "folder that exists")
    remove_stale_folders(archive.parent, f".notewell-{field}-")  # a killed run's (scratch_files.py)
    made: tempfile.TemporaryDirectory[str] | None = None
    try:
        with interrupts_held():  # made and named together: a Ctrl-C between the two left the folder behind
            try:
                made = scratch_folder(archive.parent, f".notewell-{field}-")
            except OSError as exc:
                if field == "import" and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    system = Path(tempfile.gettempdir())
                    remove_stale_folders(system, f"notewell-{field}-")
                    made = scratch_folder(system, f"notewell-{field}-")
                else:
                    refused = file_refusal(field, archive.parent, exc)
                    if refused is None:
                        raise
                    raise refused from None
        yield Path(made.name)
    finally:
        if made is not None:
            with interrupts_held():  # removed whole: a Ctrl-C inside its removal left part of the export there
                made.cleanup()


def _empty_folder(folder: Path) -> None:
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InvalidArgument("export", f"{folder} exists and is not an empty folder; name a new folder")
    try:
        folder.mkdir(mode=0o700, exist_ok=True)  # it holds every home's memories; a missing parent is a typo
        folder.chmod(0o700)  # an empty folder made before keeps its own mode otherwise
    except OSError as exc:
        raise InvalidArgument("export", f"cannot create {folder} ({exc.strerror}); name another folder") from None


def _write_atomically(path: Path, text: str) -> None:
    scratch = path.with_name(path.name + ".part")
    with os.fdopen(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
        out.write(text)  # private to the owner whatever the umask: it holds every home's memories
    os.replace(scratch, path)
