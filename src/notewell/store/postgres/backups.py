"""PostgreSQL backups through pg_dump (one REPEATABLE READ snapshot: consistent while servers write) in its custom
format, restored by pg_restore's script run by psql in one transaction (the tables a newer store has and an older
backup has not dropped first, inside it). The password goes in the environment, never on a command line
another user could read.

A restore leaves the database's extensions (pg_trgm, vector) as they are: they belong to whoever created them
(a superuser, as docs/operations.md advises), and pg_restore --clean would drop and create them again, which
only their owner may do; restoring as the application's role failed with "must be owner of extension vector".
So the dump's table of contents is read first, and its EXTENSION entries (and their comments) left out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from notewell.errors import ConfigError, InvalidArgument, file_refusal
from notewell.store.postgres.database import PostgresDatabase
from notewell.store.postgres.dialect import PostgresDialect
from notewell.store.shared.backups import PG_DUMP_MAGIC, SqlBackups, refuse_the_other_backends

TOOL_TIMEOUT_S = 6 * 3600
_EXTENSION_ENTRY = re.compile(r"^\d+; \d+ \d+ (EXTENSION|COMMENT - EXTENSION) ")  # a line of pg_restore --list
_TABLE_ENTRY = re.compile(r"^\d+; \d+ \d+ TABLE \S+ (\S+) ")  # the table's name: ours need no quoting


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'



def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigError(f"{name} is not on PATH; install the PostgreSQL client tools (postgresql-client) of the "
                          "server's major version or newer")
    return found


def _without_password(url: str) -> tuple[str, dict[str, str]]:
    """The URL without its password, and the environment with it in PGPASSWORD. A URL's password is
    percent-encoded (``p%40ss`` for ``p@ss``) and PGPASSWORD takes it as it is: decoded here. The user and the
    database stay in the URL, which libpq decodes itself."""
    parts = urlsplit(url)
    env = dict(os.environ)
    if parts.password is None:
        return url, env
    env["PGPASSWORD"] = unquote(parts.password)
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host)), env


class PostgresBackups(SqlBackups):
    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        super().__init__(PostgresDialect(db))

    def _run(self, args: list[str], *, field: str = "backup", database: bool = True) -> str:
        url, env = _without_password(self.db.url)
        proc = subprocess.run([*args, *(["--dbname", url] if database else [])], env=env, capture_output=True,
                              text=True, check=False, timeout=TOOL_TIMEOUT_S)
        if proc.returncode != 0:
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            raise InvalidArgument(field, f"{Path(args[0]).name} failed ({lines[0] if lines else proc.returncode}); "
                                         "see docs/operations.md, 'Backup and restore'")
        return proc.stdout

    def copy_to(self, path: Path) -> int:
        scratch = path.with_name(path.name + ".part")
        try:
            scratch.unlink(missing_ok=True)
            os.close(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self._run([_tool("pg_dump"), "--format=custom", "--no-owner", "--file", str(scratch)])
            os.replace(scratch, path)
        except BaseException as exc:
            scratch.unlink(missing_ok=True)  # a failed dump leaves nothing behind
            if isinstance(exc, InvalidArgument) and "No space left on device" in str(exc):  # pg_dump's own write
                exc = OSError(errno.ENOSPC, "No space left on device")
            refused = file_refusal("backup", path, exc) if isinstance(exc, OSError) else None
            if refused is not None:
                raise refused from None
            raise
        return path.stat().st_size

    def restore_from(self, path: Path) -> None:
        if not path.is_file():
            raise InvalidArgument("file", f"{path} is not a file; name a file 'notewell backup' wrote")
        refuse_the_other_backends(path, PG_DUMP_MAGIC)
        contents = self._run([_tool("pg_restore"), "--list", str(path)], field="restore", database=False)
        kept = "".join(line + "\n" for line in contents.splitlines() if not _EXTENSION_ENTRY.match(line))
        dumped = {m.group(1) for m in map(_TABLE_ENTRY.match, contents.splitlines()) if m}
        with tempfile.NamedTemporaryFile("w", suffix=".list", encoding="utf-8") as listing:
            listing.write(kept)
            listing.flush()
            self._restore(str(path), listing.name, "".join(f"DROP TABLE IF EXISTS {_quoted(t)} CASCADE;\n"
                                                           for t in self._tables() if t not in dumped))

    def _tables(self) -> list[str]:
        with self.db.connection() as conn:
            return [row[0] for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")]

    def _restore(self, dump: str, listing: str, drops: str) -> None:
        """pg_restore's script run by psql in one transaction, after ``drops``: the tables this store has and the
        dump has not (a backup an older version made, restored over a store this version made or upgraded),
        whose keys into the dump's tables would fail the dump's own --clean. The transaction commits only once
        pg_restore has written its whole script: a script cut short (pg_restore failed) is rolled back."""
        url, env = _without_password(self.db.url)
        with tempfile.TemporaryFile() as restore_errors, tempfile.TemporaryFile() as psql_errors:
            psql = subprocess.Popen([_tool("psql"), "--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1",
                                     "--dbname", url], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=psql_errors, env=env)
            script = subprocess.Popen([_tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--use-list",
                                       listing, "--file", "-", dump], stdout=subprocess.PIPE, stderr=restore_errors,
                                      env=env)
            assert psql.stdin is not None and script.stdout is not None
            try:
                psql.stdin.write(("BEGIN;\n" + drops).encode("utf-8"))
                while chunk := script.stdout.read(1 << 16):
                    psql.stdin.write(chunk)
                if script.wait(timeout=TOOL_TIMEOUT_S) == 0:
                    psql.stdin.write(b"COMMIT;\n")
            except BrokenPipeError:  # psql stopped at an error: its transaction is rolled back
                script.kill()
            finally:
                script.stdout.close()
                with contextlib.suppress(BrokenPipeError):
                    psql.stdin.close()
            made, ran = script.wait(timeout=TOOL_TIMEOUT_S), psql.wait(timeout=TOOL_TIMEOUT_S)
            for name, code, errors in (("psql", ran, psql_errors), ("pg_restore", made, restore_errors)):
                if code != 0:
                    errors.seek(0)
                    lines = [line for line in errors.read().decode("utf-8", "replace").splitlines() if line.strip()]
                    said = next((line for line in lines if "ERROR:" in line), lines[0] if lines else code)
                    raise InvalidArgument("restore", f"{name} failed ({said}); see docs/operations.md, "
                                                     "'Backup and restore'")
