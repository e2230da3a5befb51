"""Backups of a running store and their restore (docs/operations.md, "Backup and restore").

The copy is the backend's (SQLite's online backup API, PostgreSQL's pg_dump): consistent while servers go on
writing. Each backup taken is recorded in the store with its time, so ``notewell doctor`` reports the age of
the last one. Like an export, a backup holds every home: the local owner alone takes or restores one.

A restore is refused while a server works on the store (what it acknowledged meanwhile would be lost without a
word): one that answers at its recorded address, or any process holding one of the store's leases (the vault
watcher's, the job runner's: held by a serving notewell on any machine sharing a PostgreSQL database, where its
recorded local address cannot be asked). The restore holds both leases while it runs, so no server takes them
up meanwhile. The backup's own record of running servers (the source store's) is cleared after it, so that
``notewell doctor`` and sign-in links never point at another store's server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from notewell.access.authorization import Authorization
from notewell.access.principal import Principal
from notewell.errors import InvalidArgument, StoreCannotWrite
from notewell.records.backups import BackupRecord
from notewell.services.portability import CARRY
from notewell.services.servers import ServerRegistry
from notewell.store.base import Store
from notewell.store.leadership import Leadership, Role
from notewell.timestamps import now_iso

LEASES: tuple[Role, ...] = ("watcher", "jobs")


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
        size = self.store.backups.copy_to(path)
        record = BackupRecord(at, str(path.resolve()), size)
        try:
            self.store.backups.record(record)
        except StoreCannotWrite:  # the copy is whole and kept: only the store's note of it is missing
            return dataclasses.replace(record, recorded=False)
        return record

    def restore(self, p: Principal, path: Path, *, replace: bool = False) -> None:
        """The store replaced by the backup at ``path``; a store holding rows only with ``replace``."""
        self.authorization.authorize(p, CARRY)
        held = self.store.tables.held()
        if held and not replace:
            raise InvalidArgument("restore", f"the store is not empty ({', '.join(held[:3])}"
                                             f"{' …' if len(held) > 3 else ''}); stop its servers and replace it, "
                                             "or restore into a new store")
        serving = self.servers.answering()
        if serving:
            raise InvalidArgument("restore", f"notewell serve answers on this store at {serving[0].url} (server "
                                             f"{serving[0].id}); stop its servers first: what they write during "
                                             "a restore would be lost")
        with ExitStack() as held_leases:
            for role in LEASES:
                lease = self.lease(role)
                held_leases.callback(lease.release)
                if not lease.try_acquire():
                    raise InvalidArgument("restore", f"a process holds this store's {role} lease: a notewell serve "
                                                     "(or worker, or index --watch) works on it, on this machine or "
                                                     "another sharing its database; stop it first: what it writes "
                                                     "during a restore would be lost")
            self.store.backups.restore_from(path)
        for server in self.servers.recorded():  # the source store's servers, not this one's
            self.servers.withdraw(server.id)

    def latest(self) -> BackupRecord | None:
        """The last backup recorded (no person asks: the doctor reports its age)."""
        return self.store.backups.latest()
