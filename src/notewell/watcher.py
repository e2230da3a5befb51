"""Keep the store in line with the vault while Notewell runs: watch the folder, sync what changed.

One process per store writes documents: the one holding the store's lease (store.leadership). It
first syncs the whole vault (what changed while nobody watched), then syncs each batch of changes
the file system reports, limited to the changed files and folders. A burst (a git checkout) arrives
as one batch: changes are gathered until none came for STEP_MS, or for at most DEBOUNCE_MS. A
change to an ignore file or to notewell.toml, or a batch too large to list, syncs the whole vault.
Each sync reads notewell.toml again first (as `notewell index` does), so every writer indexes with the
vault's current settings; settings that changed sync the whole vault with them. A file that could not
be read, or a sync that failed (the database busy or away), is tried again with a growing pause;
nothing stops the watcher but its stop event. The others wait for the lease and keep serving: serving
reads the store only.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

import watchfiles

from notewell import metrics
from notewell.config import INDEX_DIR_NAME, Settings, reload_settings
from notewell.errors import ConfigError
from notewell.indexer import IndexReport, sync
from notewell.store.base import Store
from notewell.store.leadership import Leadership, open_leadership
from notewell.vault.links import BROKEN
from notewell.vault.scan import EVERYTHING, IGNORE_FILES, Subtrees, disk_path, may_read_later

STEP_MS = 50  # a batch is complete after this long without a new change...
DEBOUNCE_MS = 400  # ...or after this long in all
TICK_MS = 1000  # with no change, wake this often: check the lease, run a due retry
LEADER_POLL_S = 2.0  # a process without the lease tries to take it this often
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 30.0
MAX_LISTED_PATHS = 200  # a larger batch is synced by top-level entry, or whole

logger = logging.getLogger("notewell.watch")
OnSynced = Callable[[IndexReport], None]


class VaultWatcher:
    """Watches ``settings.vault`` and syncs ``store``, while it holds ``leadership``, until stopped."""

    def __init__(self, settings: Settings, store: Store, leadership: Leadership,
                 on_synced: OnSynced | None = None, on_leading: Callable[[bool], None] | None = None) -> None:
        self.settings = settings
        self.store = store
        self.leadership = leadership
        self.on_synced = on_synced
        self.on_leading = on_leading  # told at the first try for the lease and at every change
        self.leading: bool | None = None  # None until the first try for the lease, which is logged either way
        self._vault = str(settings.vault)
        self._index_dir = str(settings.vault / INDEX_DIR_NAME)
        # a SQLite store kept elsewhere in the vault: its own writes are no change to the vault
        self._store_files = () if settings.is_postgres else (settings.db,)  # also its -wal, -shm, .watch-lock
        self._pending: set[str] = set()  # vault-relative paths to sync; "" is the whole vault
        # the vault's symlinks -> what each names, one hop (vault-relative), from the syncs: an edit of a target
        # (or of a link a chain passes through) is an edit of the links to it, which no event of theirs says
        self._link_names: dict[str, str] = {}
        self._retry_at: float | None = None
        self._retry_pause = RETRY_FIRST_S
        self._settings_error = ""  # the last notewell.toml problem logged, so it is logged once

    def run(self, stop: threading.Event) -> None:
        """Watch until ``stop`` is set; never raises."""
        try:
            while not stop.is_set():
                if not self.leadership.try_acquire():
                    self._set_leading(False)
                    stop.wait(LEADER_POLL_S)
                    continue
                self._set_leading(True)
                try:
                    self._lead(stop)
                except Exception as exc:  # the vault went away, the watch failed: start again shortly
                    logger.warning("op=watch.error error=%s", _one_line(exc))
                    stop.wait(self._retry_pause)
                    self._retry_pause = min(self._retry_pause * 2, RETRY_MAX_S)
        finally:
            self.leadership.release()
            self._set_leading(False)

    def _set_leading(self, leading: bool) -> None:
        """Log the lease's state at the first try and at every change: a server that follows says so."""
        if leading != self.leading:
            self.leading = leading
            metrics.WATCH_LEADING.set(1.0 if leading else 0.0)
            logger.info("op=watch.leader state=%s vault=%s", "leading" if leading else "following", self._vault)
            if self.on_leading is not None:
                try:
                    self.on_leading(leading)
                except Exception as exc:  # a record of who leads; the lease itself is what counts
                    logger.warning("op=watch.error error=%s", _one_line(exc))

    def _lead(self, stop: threading.Event) -> None:
        self._pending = {""}  # catch up with what changed while nobody watched, once the watch is armed
        self._retry_at = time.monotonic()
        watched = os.stat(self._vault)
        for changes in watchfiles.watch(self._vault, watch_filter=self._wanted, debounce=DEBOUNCE_MS, step=STEP_MS,
                                        rust_timeout=TICK_MS, yield_on_timeout=True, stop_event=stop,
                                        raise_interrupt=False, ignore_permission_denied=True):
            if not self.leadership.try_acquire():
                return
            if not _same_folder(self._vault, watched):  # moved away or replaced: a watch on it sees nothing more
                raise FileNotFoundError(f"the vault folder {self._vault} was moved or replaced; watching it again")
            self._pending.update(self._relative(path) for _, path in changes)
            if changes or (self._retry_at is not None and time.monotonic() >= self._retry_at):
                self._sync_pending()
            if not self._pending and self._retry_at is None:  # nothing waits: the store is in line now (a quiet
                metrics.watch_in_line()  # vault's leader is not behind, however long since its last sync)

    def _wanted(self, _change: watchfiles.Change, path: str) -> bool:
        """Changes that may matter: not in the index folder, not below a hidden name but the ignore files."""
        if path == self._index_dir or path.startswith((self._index_dir + os.sep, *self._store_files)):
            return False
        rel = self._relative(path)
        parts = rel.split("/")
        return not any(p.startswith(".") for p in parts[:-1]) and (
            not parts[-1].startswith(".") or parts[-1] in IGNORE_FILES)

    def _relative(self, path: str) -> str:
        rel = os.path.relpath(path, self._vault).replace(os.sep, "/")
        return "" if rel == "." else rel

    def _scope(self) -> Subtrees:
        paths = self._pending
        if "" not in paths:
            paths = paths | self._broken_links_beside(paths) | self._links_into(paths)
        if "" in paths or any(p.rsplit("/", 1)[-1] in IGNORE_FILES for p in paths):
            return EVERYTHING
        if len(paths) > MAX_LISTED_PATHS:
            paths = {p.split("/", 1)[0] for p in paths}
        return EVERYTHING if len(paths) > MAX_LISTED_PATHS else Subtrees(paths)

    def _links_into(self, paths: set[str]) -> set[str]:
        """The symlinks that name one of ``paths`` (or a path inside one), and the links naming those, hop by
        hop to the first of a chain: each costs a pass over the links known, never a scan."""
        found: set[str] = set()
        reached = paths
        while reached:
            covered = Subtrees(reached)
            reached = {link for link, names in self._link_names.items()
                       if link not in found and names and covered.covers(names)}
            found |= reached
        return found

    def _broken_links_beside(self, paths: set[str]) -> set[str]:
        """The broken symlinks recorded in the projects of ``paths``: a file made there may be the target one
        waits for, and nothing else reads such a link again (a link the policy skips is not retried)."""
        projects = {path.split("/", 1)[0] for path in paths}
        return {disk_path(s.project, s.path) for s in self.store.documents.skipped(BROKEN)
                if disk_path(s.project, s.path).split("/", 1)[0] in projects}

    def _reload_settings(self) -> bool:
        """Read notewell.toml again; True when the indexing settings changed (the whole vault is synced again).
        A file that is not valid (a save in progress, a typo) is logged once and the settings in force stay
        until it is fixed. ``semantic`` is read when a process starts: a change is logged as waiting for it."""
        try:
            settings = reload_settings(self.settings)
        except ConfigError as exc:
            if str(exc) != self._settings_error:
                self._settings_error = str(exc)
                logger.warning("op=watch.settings error=%s kept=previous", _one_line(exc))
            return False
        self._settings_error = ""
        if settings == self.settings:
            return False
        before, self.settings = self.settings, settings
        if settings.semantic != before.semantic:
            logger.warning("op=watch.settings semantic=%s applies=next-start", str(settings.semantic).lower())
        if (settings.max_file_bytes, settings.file_types) == (before.max_file_bytes, before.file_types):
            return False
        logger.info("op=watch.settings maxFileBytes=%d fileTypes=%s", settings.max_file_bytes,
                    ",".join(settings.file_types))
        return True

    def _sync_pending(self) -> None:
        reloaded = self._reload_settings()
        try:
            scope = EVERYTHING if reloaded else self._scope()  # asks the store too: kept on failure as a sync
            written = self._pending - {""}
            report = sync(self.settings, self.store, only=scope, written=written | self._links_into(written))
        except Exception as exc:  # the database is busy or away: keep the changes, try again later
            metrics.WATCH_FAILURES.inc()
            self._schedule_retry(f"sync failed: {_one_line(exc)[1:-1]}")
            return
        self._link_names = {link: names for link, names in self._link_names.items()
                            if not scope.covers(link)} | report.symlinks
        unreadable = {item.path for item in report.left_out if item.why == "unreadable" and may_read_later(item.detail)}
        self._pending = unreadable  # a file being written may fail to read: read it again (a symlink not followed
        # or a name that is not UTF-8 would fail the same way each time: it waits for its next change)
        if unreadable:
            self._schedule_retry(f"{len(unreadable)} unreadable")
        else:
            self._retry_at, self._retry_pause = None, RETRY_FIRST_S
        metrics.watch_synced(report.seconds, report.did_work)
        if report.did_work:
            logger.info("op=watch.sync added=%d changed=%d removed=%d renamed=%d durMs=%d", report.added,
                        report.changed, report.removed, report.renamed, round(report.seconds * 1000))
        if self.on_synced is not None:
            self.on_synced(report)

    def _schedule_retry(self, why: str) -> None:
        logger.warning('op=watch.retry reason="%s" inS=%.1f', why.replace('"', "'"), self._retry_pause)
        self._retry_at = time.monotonic() + self._retry_pause
        self._retry_pause = min(self._retry_pause * 2, RETRY_MAX_S)


class WatcherThread:
    """A VaultWatcher on a daemon thread: start() and stop() (which waits for the thread)."""

    def __init__(self, watcher: VaultWatcher) -> None:
        self.watcher = watcher
        self._stop = threading.Event()
        self._thread = threading.Thread(target=watcher.run, args=(self._stop,), name="notewell-watcher", daemon=True)

    def start(self) -> WatcherThread:
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)


def start_watcher(settings: Settings, store: Store, sync_projects: Callable[[list[str]], None],
                  on_leading: Callable[[bool], None] | None = None) -> WatcherThread:
    """Watch the vault on a thread; ``sync_projects`` gets the vault's projects whenever they change (a new
    top-level folder becomes a project as soon as the watcher finds it); ``on_leading`` whether it holds
    the lease, at the start and at every change."""
    known = store.documents.vault_projects()

    def on_synced(_report: IndexReport) -> None:
        nonlocal known
        projects = store.documents.vault_projects()
        if projects != known:
            sync_projects(projects)
            known = projects

    return WatcherThread(VaultWatcher(settings, store, open_leadership(settings.db), on_synced, on_leading)).start()


def _same_folder(path: str, before: os.stat_result) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return '"' + text[:300].replace('"', "'") + '"'
