"""PostgreSQL backups through pg_dump (one REPEATABLE READ snapshot: consistent while servers write) in its custom
format, restored by pg_restore's script run by psql in one transaction (the tables a newer store has and an older
backup has not dropped first, inside it). No secret of the connection goes on a command line another user could
read (``ps``): the password, in the URL's ``user:password@`` or a ``?password=`` parameter, goes in PGPASSWORD, and
any other secret libpq takes (``sslpassword``) in a private service file (connection()).

A restore leaves the database's extensions (pg_trgm, vector) as they are: they belong to whoever created them
(a superuser, as docs/operations.md advises), and pg_restore --clean would drop and create them again, which
only their owner may do; restoring as the application's role failed with "must be owner of extension vector".
So the dump's table of contents is read first, and its EXTENSION entries (and their comments) left out.

A dump cut short or damaged is named as such, never by what psql said of the half row it was given ("missing data
for column", or the row itself quoted): pg_restore's own failure is reported before psql's.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from notewell.errors import ConfigError, InvalidArgument, file_refusal
from notewell.scratch_files import part_path, remove_stale_parts
from notewell.store.interrupts import interrupts_held
from notewell.store.postgres import word_totals
from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.dialect import PostgresDialect
from notewell.store.shared.backups import PG_DUMP_MAGIC, SqlBackups, refuse_the_other_backends
from notewell.timestamps import iso

TOOL_TIMEOUT_S = 6 * 3600
_EXTENSION_ENTRY = re.compile(r"^\d+; \d+ \d+ (EXTENSION|COMMENT - EXTENSION) ")  # a line of pg_restore --list
_TABLE_ENTRY = re.compile(r"^\d+; \d+ \d+ TABLE \S+ (\S+) ")  # the table's name: ours need no quoting
_CREATED = re.compile(r"^; Archive created at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC$", re.M)  # with TZ=UTC
# pg_restore's words for a file cut short or damaged (pg_backup_archiver.c, pg_backup_custom.c, compress_io.c)
_DAMAGED = re.compile(r"end of file|could not read|too short|magic string|valid archive|unrecognized|unexpected|"
                      r"block ID|corrupt|compress|file seek|differs from format", re.I)
SHOWN_CHARS = 200  # of psql's ERROR line: it may quote a row of the store's data
SERVICE = "notewell"
# libpq's secret parameters (shown as "*" by PQconndefaults: password, sslpassword, ...) and their environment
# variable, where libpq has one (PGPASSWORD)
_SECRETS = {option.keyword.decode(): option.envvar.decode() if option.envvar else None
            for option in pq.Conninfo.get_defaults() if option.dispchar == b"*"}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_SCRIPT_RUN = "NOTEWELL-RESTORE-SCRIPT-RUN"  # what psql echoes once it has run the whole script
_PR_SET_PDEATHSIG = 1
_STOP_WAIT_S = 10.0


def _dies_with_parent() -> None:
    """In a child, before it runs the tool: SIGKILL when this process dies (Linux's prctl), so that a psql whose
    parent was killed outright never commits a restore no one waits for any more."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _stopped(psql: subprocess.Popen[bytes]) -> None:
    """psql ended without a COMMIT: SIGINT first (it cancels the statement its server runs, which a lock may hold,
    and stops at ON_ERROR_STOP), its input closed, then killed if it does not end."""
    if psql.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            psql.send_signal(signal.SIGINT)
        if psql.stdin is not None:
            _let_go(psql.stdin)
        try:
            psql.wait(timeout=_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            psql.kill()
    psql.wait()


def _let_go(stdin: IO[bytes]) -> None:
    """psql's input closed at once, what its pipe cannot take now dropped: psql may be stopped on a lock, reading
    nothing, and a plain close waits to write the rest (a Ctrl-C's restore then never ended). Used only where no
    COMMIT was written, so what is dropped is never run."""
    with contextlib.suppress(OSError, ValueError):
        os.set_blocking(stdin.fileno(), False)
    with contextlib.suppress(OSError, ValueError):  # BlockingIOError: the rest dropped, the pipe closed all the same
        stdin.close()


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigError(f"{name} is not on PATH; install the PostgreSQL client tools (postgresql-client) of the "
                          "server's major version or newer")
    return found


@contextlib.contextmanager
def connection(url: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The client tools' ``--dbname`` for ``url`` (a libpq connection string holding no secret) and their
    environment, holding the secrets: the password (``user:password@`` or ``?password=``, decoded by libpq's
    own parser) in PGPASSWORD, and a secret libpq reads from no environment variable (``sslpassword``) in a
    service file only this user reads (PGSERVICEFILE, ``service=notewell``), removed when the block ends."""
    params = conninfo_to_dict(url)
    env = dict(os.environ)
    hidden: dict[str, str] = {}
    for key in [key for key in params if key in _SECRETS]:
        value, variable = str(params.pop(key)), _SECRETS[key]
        if variable is not None:
            env[variable] = value
        else:
            hidden[key] = value
    if not hidden:
        yield make_conninfo("", **params), env
        return
    if "service" in params or env.get("PGSERVICE"):
        raise ConfigError(f"--db: {', '.join(hidden)} with a PostgreSQL service: put {', '.join(hidden)} in the "
                          "service's file, not in the URL (it would reach pg_dump's command line)")
    if any(ch in value for value in hidden.values() for ch in "\r\n"):
        raise ConfigError(f"--db: {', '.join(hidden)} holds a line break, which libpq's service file cannot hold")
    with tempfile.TemporaryDirectory(prefix="notewell-pg-") as folder:  # mode 0700
        service_file = Path(folder) / "pg_service.conf"
        fd = os.open(service_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(f"[{SERVICE}]\n" + "".join(f"{key}={value}\n" for key, value in hidden.items()))
        env["PGSERVICEFILE"] = str(service_file)
        yield make_conninfo("", **params, service=SERVICE), env


def _damaged(path: Path, said: str) -> InvalidArgument | None:
    """The refusal of a backup file pg_restore could not read whole (``said``: its error line), or None when it
    failed for another reason (a dump of a newer pg_dump, say)."""
    if "unsupported version" in said or not _DAMAGED.search(said):
        return None
    return InvalidArgument("file", f"{path} is damaged or incomplete: pg_restore failed ({said}); name a file "
                                   "'notewell backup' wrote")


def _first_error(stderr: str, default: object) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    said = next((line for line in lines if "ERROR:" in line or "error:" in line), lines[0] if lines else default)
    text = str(said)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def _created_at(contents: str, path: Path) -> str:
    """When pg_dump began the dump (``pg_restore --list`` run with TZ=UTC prints it), in the stored form; the
    file's modification time if the header has none."""
    found = _CREATED.search(contents)
    if found is None:
        return iso(datetime.fromtimestamp(path.stat().st_mtime, UTC))
    return iso(datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC))


class PostgresBackups(SqlBackups):
    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        super().__init__(PostgresDialect(db))

    def _dump(self, scratch: Path) -> None:
        with connection(self.db.url) as (dbname, env):
            proc = subprocess.run([_tool("pg_dump"), "--format=custom", "--no-owner", "--file", str(scratch),
                                   "--dbname", dbname], env=env, capture_output=True, text=True, check=False,
                                  timeout=TOOL_TIMEOUT_S)
        if proc.returncode != 0:
            raise InvalidArgument("backup", f"pg_dump failed ({_first_error(proc.stderr, proc.returncode)}); see "
                                            "docs/operations.md, 'Backup and restore'")

    @staticmethod
    def _contents(path: Path) -> str:
        """The dump's table of contents (``pg_restore --list``, its times in UTC)."""
        proc = subprocess.run([_tool("pg_restore"), "--list", str(path)], env={**os.environ, "TZ": "UTC"},
                              capture_output=True, text=True, check=False, timeout=TOOL_TIMEOUT_S)
        if proc.returncode != 0:
            said = _first_error(proc.stderr, proc.returncode)
            raise _damaged(path, said) or InvalidArgument("restore", f"pg_restore failed ({said}); see "
                                                                     "docs/operations.md, 'Backup and restore'")
        return proc.stdout

    def copy_to(self, path: Path, at: str) -> int:
        remove_stale_parts(path.parent)  # a killed backup's (scratch_files.py)
        scratch = part_path(path)
        try:
            scratch.unlink(missing_ok=True)
            os.close(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self._dump(scratch)
            os.replace(scratch, path)
        except BaseException as exc:
            with contextlib.suppress(OSError):  # a failed dump leaves nothing behind (a folder it could not
                scratch.unlink(missing_ok=True)  # write in, read-only say, holds none: the refusal is said below)
            if isinstance(exc, InvalidArgument) and "No space left on device" in str(exc):  # pg_dump's own write
                exc = OSError(errno.ENOSPC, "No space left on device")
            refused = file_refusal("backup", path, exc) if isinstance(exc, OSError) else None
            if refused is not None:
                raise refused from None
            raise
        return path.stat().st_size

    def restore_from(self, path: Path, then: Callable[[str], None]) -> None:
        if not path.is_file():
            raise InvalidArgument("file", f"{path} is not a file; name a file 'notewell backup' wrote")
        refuse_the_other_backends(path, PG_DUMP_MAGIC)
        contents = self._contents(path)
        kept = "".join(line + "\n" for line in contents.splitlines() if not _EXTENSION_ENTRY.match(line))
        dumped = {m.group(1) for m in map(_TABLE_ENTRY.match, contents.splitlines()) if m}
        with tempfile.NamedTemporaryFile("w", suffix=".list", encoding="utf-8") as listing:
            listing.write(kept)
            listing.flush()
            at = _created_at(contents, path)
            self._restore(path, listing.name, "".join(f"DROP TABLE IF EXISTS {_quoted(t)} CASCADE;\n"
                                                      for t in self._tables() if t not in dumped), lambda: then(at))

    def _tables(self) -> list[str]:
        with self.db.connection() as conn:
            return [row[0] for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")]

    def _restore(self, dump: Path, listing: str, drops: str, then: Callable[[], None]) -> None:
        """pg_restore's script run by psql in one transaction, after ``drops``: the tables this store has and the
        dump has not (a backup an older version made, restored over a store this version made or upgraded),
        whose keys into the dump's tables would fail the dump's own --clean. The transaction commits only once
        pg_restore has written its whole script: a script cut short (pg_restore failed) is rolled back, and
        named by pg_restore's failure (the file damaged or incomplete), not by psql's of the half row it got.

        The two run in a session of their own, so a Ctrl-C (which a terminal sends its whole foreground process
        group) reaches this process alone, and it decides. psql says when it has run the whole script (an \\echo
        after it, read here while a Ctrl-C still counts); only then is the COMMIT written, and a Ctrl-C is held
        over the COMMIT alone, until psql has ended and ``then`` has been told of the commit it made. A Ctrl-C
        before is passed to psql (SIGINT: it cancels the statement its server runs, which may wait on a lock, and
        stops), then both end, and nothing is committed. Both die with this process (PR_SET_PDEATHSIG): a kill -9
        of it leaves no psql to commit later. psql never asks for a password: it has no terminal."""
        killed = False
        with connection(self.db.url) as (dbname, env), tempfile.TemporaryFile() as restore_errors, \
                tempfile.TemporaryFile() as psql_errors:
            psql = subprocess.Popen([_tool("psql"), "--no-psqlrc", "--no-password", "--quiet", "--set",
                                     "ON_ERROR_STOP=1", "--dbname", dbname], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=psql_errors, env=env, start_new_session=True,
                                    preexec_fn=_dies_with_parent)
            script = subprocess.Popen([_tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--use-list",
                                       listing, "--file", "-", str(dump)], stdout=subprocess.PIPE,
                                      stderr=restore_errors, env=env, start_new_session=True,
                                      preexec_fn=_dies_with_parent)
            assert psql.stdin is not None and psql.stdout is not None and script.stdout is not None
            try:
                try:  # the script's own query results to /dev/null: psql's output is the marker alone
                    psql.stdin.write(("\\o /dev/null\nBEGIN;\n" + drops).encode("utf-8"))
                    while chunk := script.stdout.read(1 << 16):
                        psql.stdin.write(chunk)
                    if script.wait(timeout=TOOL_TIMEOUT_S) == 0:
                        psql.stdin.write(word_totals.RESTORED.encode())
                        psql.stdin.write(f"\\echo {_SCRIPT_RUN}\n".encode())
                        psql.stdin.flush()
                        if _SCRIPT_RUN.encode() in psql.stdout.readline():  # a Ctrl-C while it runs still counts
                            with interrupts_held():
                                psql.stdin.write(b"COMMIT;\n")
                                psql.stdin.close()
                                if psql.wait(timeout=TOOL_TIMEOUT_S) == 0:
                                    then()
                except BrokenPipeError:  # psql stopped at an error: its transaction is rolled back
                    script.kill()
                    killed = True
                finally:
                    script.stdout.close()
                    _let_go(psql.stdin)  # closed already after a COMMIT
            except BaseException:  # a Ctrl-C before the COMMIT was written: psql ends without it, committing nothing
                # (one held past the COMMIT is raised once psql has ended, and ``then`` has run)
                script.kill()
                script.wait()
                _stopped(psql)
                raise
            made, ran = script.wait(timeout=TOOL_TIMEOUT_S), psql.wait(timeout=TOOL_TIMEOUT_S)
            restore_errors.seek(0)
            restore_said = _first_error(restore_errors.read().decode("utf-8", "replace"), made)
            psql_errors.seek(0)
            psql_said = _first_error(psql_errors.read().decode("utf-8", "replace"), ran)
        if made != 0 and not killed:  # pg_restore's own failure: what psql then said is of a script cut short
            damaged = _damaged(dump, restore_said)
            if damaged is not None:
                raise damaged
        for name, code, said in (("psql", ran, psql_said), ("pg_restore", made, restore_said)):
            if code != 0:
                raise InvalidArgument("restore", f"{name} failed ({said}); see docs/operations.md, "
                                                 "'Backup and restore'")
