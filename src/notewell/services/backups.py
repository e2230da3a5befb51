"""Backups of a running store and their restore (docs/operations.md, "Backup and restore"), and the repair of a
damaged one ("A damaged store").

The copy is the backend's (SQLite's online backup API, PostgreSQL's pg_dump): consistent while servers go on
writing. Each backup taken is recorded in the store with its time, so ``notewell doctor`` reports the age of
the last one. Like an export, a backup holds every home: the local owner alone takes or restores one.

A restore is refused while a server works on the store (what it acknowledged meanwhile would be lost without a
word): one that answers at its recorded address, a stdio one of this machine whose process lives (started with
--no-watch --no-jobs, it holds no lease and has no address to ask), or any process holding one of the store's
leases (the vault watcher's, the job runner's: held by a serving notewell on any machine sharing a PostgreSQL
database, where its recorded local address cannot be asked). The restore holds both leases while it runs, so no
server takes them up meanwhile. The backup's own record of running servers (the source store's) is cleared after
it, so that ``notewell doctor`` and sign-in links never point at another store's server; and its record of backups
(the source's history) is replaced by the backup restored, its time and file, so the doctor reports that one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from notewell.access.authorization import Authorization
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, NotewellError, StoreCannotWrite, StoreDamaged, Unavailable
from notewell.records.backups import BackupRecord
from notewell.records.integrity import Integrity
from notewell.records.servers import RunningServer
from notewell.services.portability import CARRY
from notewell.services.servers import ServerRegistry
from notewell.store.base import Store
from notewell.store.health import integrity, rebuild_indexes
from notewell.store.leadership import Leadership, Role
from notewell.timestamps import now_iso

LEASES: tuple[Role, ...] = ("watcher", "jobs")


@dataclass(frozen=True)
class Repaired:
    """What a repair rebuilt, and the damage a full check found after it (None: PostgreSQL, not checked here)."""

    rebuilt: list[str]
    left: Integrity | None


class BackupService:
    def __init__(self, store: Store, authorization: Authorization, servers: ServerRegistry,
                 lease: Callable[[Role], Leadership]) -> None:
        self.store = store
        self.authorization = authorization
        self.servers = servers
        self.lease = lease

    def backup(self, p: Principal, path: Path) -> BackupRecord:
        """A consistent copy of the store at ``path`` (a new file), recorded in the store."""
        self.authorization.authorize(p, CARRY)
        if path.exists():
            raise InvalidArgument("backup", f"{path} exists; name a new file (a backup never overwrites one)")
        if not path.parent.is_dir():
            raise InvalidArgument("backup", f"{path.parent} is not a folder; create it or name another file")
        at = now_iso()  # the moment the copy holds: every write acknowledged before it is in the copy
        size = self.store.backups.copy_to(path, at)
        record = BackupRecord(at, str(path.resolve()), size)
        try:
            self.store.backups.record(record)
        except StoreCannotWrite:  # the copy is whole and kept: only the store's note of it is missing
            return dataclasses.replace(record, recorded=False)
        return record

    def restore(self, p: Principal, path: Path, *, replace: bool = False,
                done: Callable[[], None] | None = None) -> None:
        """The store replaced by the backup at ``path``; a store holding rows only with ``replace``. ``done`` is
        called once the store holds the backup and its records are the restore's (or holds it in its older schema,
        the upgrade having failed), a Ctrl-C held meanwhile: an interrupted restore replaced nothing unless ``done``
        was called."""
        self.authorization.authorize(p, CARRY)
        held = self.store.tables.held()
        if held and not replace:
            raise InvalidArgument("restore", f"the store is not empty ({', '.join(held[:3])}"
                                             f"{' …' if len(held) > 3 else ''}); stop its servers and replace it, "
                                             "or restore into a new store")

        def replaced(taken: str) -> None:
            try:  # an older version's backup holds its tables: the clean-up below needs today's
                self.store.upgrade()
            except Exception as exc:
                if done is not None:  # the store holds the backup, whole, in its older schema: kept, even a new one
                    done()
                raise _not_upgraded(path, exc) from exc
            self.store.backups.restored(BackupRecord(taken, str(path.resolve()), path.stat().st_size))
            for server in self.servers.recorded():  # the source store's servers, not this one's
                self.servers.withdraw(server.id)
            if done is not None:
                done()

        with self._alone("restore", "what they write during a restore would be lost"):
            self.store.backups.restore_from(path, replaced)

    def repair(self, p: Principal, checking: Callable[[list[str]], None] | None = None) -> Repaired:
        """Every index the store derives from its rows rebuilt (store/health.py), then the whole file checked for
        damage that is left (None on PostgreSQL, which checks its own pages). ``checking`` is told what was
        rebuilt as the check begins (a caller interrupted then says the rebuild is done)."""
        self.authorization.authorize(p, CARRY)
        with self._alone("repair", "their writes would wait for the rebuild, and fail"):
            try:
                rebuilt = rebuild_indexes(self.store)
            except StoreDamaged:  # the rows (or an index's own pages) cannot be read: the check says where
                rebuilt = []
        if checking is not None:
            checking(rebuilt)
        return Repaired(rebuilt, integrity(self.store, None))

    @contextmanager
    def _alone(self, action: str, why: str) -> Iterator[None]:
        """No server works on the store while the block runs: refused when one runs (an HTTP one answering at its
        recorded address, a stdio one of this machine whose process lives: ServerRegistry.serving), or a process
        holds one of the store's leases; the leases held meanwhile, so that none takes them up."""
        serving = self.servers.serving()
        if serving:
            others = f" (and {len(serving) - 1} more)" if len(serving) > 1 else ""
            raise InvalidArgument(action, f"{_running(serving[0])}{others}; stop its servers first"
                                          f"{_stopping(serving[0])}: {why}")
        with ExitStack() as held_leases:
            for role in LEASES:
                lease = self.lease(role)
                held_leases.callback(lease.release)
                if not lease.try_acquire():
                    raise InvalidArgument(action, f"a process holds this store's {role} lease: a notewell serve "
                                                  "(or worker, or index --watch) works on it, on this machine or "
                                                  f"another sharing its database; stop it first: {why}")
            yield

    def latest(self) -> BackupRecord | None:
        """The last backup recorded (no person asks: the doctor reports its age)."""
        return self.store.backups.latest()


def _not_upgraded(path: Path, exc: Exception) -> Unavailable:
    """A restore's upgrade of the backup to this version's schema (Store.upgrade: each component's steps one
    transaction) that failed, and what it left: the backup, restored whole, at the last step done."""
    reason = str(exc) if isinstance(exc, NotewellError) else f"{type(exc).__name__}: {exc}"
    return Unavailable(f"{path} was restored, but bringing it to this version's schema failed ({reason}): the store "
                       "holds the backup in the schema of the version that took it, which opening it upgrades again "
                       "('notewell doctor' opens it and says what fails)")


def _running(server: RunningServer) -> str:
    """A running server as a person finds it: an HTTP one by its address, a stdio one (which has none) by its
    process."""
    if server.stdio:
        return (f"notewell serve --stdio runs on this store as pid {server.pid} on {server.host} (address stdio, "
                f"server {server.id})")
    return (f"notewell serve answers on this store at {server.url} (pid {server.pid} on {server.host}, server "
            f"{server.id})")


def _stopping(server: RunningServer) -> str:
    """How a stdio server is stopped: the client that spawned it owns it (nothing to add for an HTTP one)."""
    return (f" (a stdio server ends when the MCP client that spawned it quits, or end process {server.pid})"
            if server.stdio else "")
