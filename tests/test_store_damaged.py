"""A damaged store ("database disk image is malformed"): every door says so in one line, with the way out; doctor
names the damaged part; `notewell repair` rebuilds every index from the store's rows and the answers are those
of the store before the damage. Damage to the tables themselves is found too, and no rebuild claims to mend it.

Before: `notewell memory search` printed a traceback, an MCP tool answered "internal error", REST a 500, and
doctor said all was well. The damage is made as an older server's forget made it on an upgraded store (docs/
operations.md): the index's pages overwritten with bytes that are no FTS5 structure; the tables' damage as a
table's root page overwritten.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from conftest import make_vault, run_cli
from mcp_world import LEGACY, MODERN, ServerThread, connect
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import StoreDamaged
from notewell.http.app import build_app
from notewell.http.door import ServeOptions
from notewell.mcp.registry import choose
from notewell.runtime import open_runtime
from notewell.store.sqlite.database import SqliteDatabase
from notewell.store.sqlite.integrity import check
from pg import PgCluster
from web_world import csrf_of

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
DAMAGED = "is damaged ("
MEMORIES = ["Prod runs on PostgreSQL 15 in Frankfurt", "Deploys happen on Tuesdays after the standup",
            "Refunds above 5,000 EUR need the finance lead's sign-off", "The offsite is in Porto this year"]
BAD_MEMORY_TITLE = "UPDATE memories SET title = CAST(x'ff' AS TEXT) WHERE content LIKE 'Prod runs%'"
PASSWORD = "a long pass phrase"
VAULT = {"apollo/plan.md": "# Plan\n\nThe heron migrates in spring.\n",
         "apollo/notes.md": "# Notes\n\nheron counts by the lake; kingfisher seen twice\n"}


def _store(tmp_path: Path, db: str | None = None) -> tuple[Path, str, str]:
    """A vault and its store (``db``, else a SQLite file) with four memories and an admin's token: (vault, db,
    token)."""
    vault = make_vault(tmp_path, VAULT)
    db = db or str(tmp_path / "index.db")
    rt = open_runtime(str(vault), db)
    try:
        rt.indexing.sync()
        rt.administration.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
        token = rt.administration.mint_token(LOCAL_OWNER, "ada@example.test",
                                             ["knowledge:read", "memory:read", "memory:write"]).secret
    finally:
        rt.close()
    for text in MEMORIES:
        assert run_cli("memory", "add", text, "-p", "apollo", "--db", db, "--vault", str(vault)).exit_code == 0
    assert run_cli("embed", "--db", db, "--vault", str(vault)).exit_code == 0  # recall's answers whole from now on
    return vault, db, token


def _overwrite(db: str, sql: str) -> None:
    """The pages ``sql`` names (page numbers) overwritten with 0xA5 bytes, as a damaged disk or a bad write leaves
    them; the store closed meanwhile."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = [r[0] for r in conn.execute(sql)]
    conn.close()
    assert pages, sql
    with open(db, "r+b") as f:
        for page in pages:
            f.seek((page - 1) * page_size)
            f.write(b"\xa5" * page_size)


def _damage_index(db: str, index: str) -> None:
    """The index's segments (its ``_data`` rows past the structure record) overwritten with bytes of their length
    that are no FTS5 segment: the tables' pages stay whole, the index does not."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(f"SELECT id, length(block) FROM {index}_data WHERE id > 10").fetchall()
        assert rows, index
        conn.executemany(f"UPDATE {index}_data SET block = ? WHERE id = ?", [(b"\xa5" * n, i) for i, n in rows])
    conn.close()


def _answers(vault: Path, db: str) -> list[str]:
    """What strict memory search, recall and document search print for a few queries."""
    outputs = []
    for query in ("PostgreSQL", "Tuesdays", "sign-off", "heron", "kingfisher"):
        for command in (("memory", "search", query), ("memory", "recall", query), ("search", query)):
            result = run_cli(*command, "--db", db, "--vault", str(vault))
            assert result.exit_code == 0, result.output
            outputs.append(result.stdout)
    return outputs


def _repaired_as_before(vault: Path, db: str, before: list[str]) -> tuple[str, str]:
    """`notewell repair --json`'s output, once the answers are those of ``before``, and doctor's output after."""
    repaired = run_cli("repair", "--db", db, "--vault", str(vault), "--json")
    assert repaired.exit_code == 0, repaired.output
    assert _answers(vault, db) == before
    return repaired.stdout, " ".join(run_cli("doctor", "--db", db, "--vault", str(vault)).output.split())


def _one_line(result: Any, *needles: str) -> None:
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    flat = " ".join(result.output.split())
    assert all(needle in flat for needle in needles), flat


def _mcp_call(client: httpx.Client, bearer: dict[str, str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    opened = client.post("/mcp", json=INIT, headers={**ACCEPT, **bearer})
    assert opened.status_code == 200, opened.text
    called = client.post("/mcp", headers={**ACCEPT, **bearer, "Mcp-Session-Id": opened.headers["mcp-session-id"],
                                          "MCP-Protocol-Version": "2025-11-25"},
                         json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": tool, "arguments": arguments}})
    assert called.status_code == 200, called.text
    result: dict[str, Any] = called.json()["result"]
    return result


@contextmanager
def _serving(vault: Path, db: str) -> Iterator[str]:
    """The store served by every door, as `notewell serve` serves it: its base URL."""
    rt = open_runtime(str(vault), db)
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server:
            yield f"http://127.0.0.1:{server.port}"
    finally:
        rt.close()


def _served_searches(vault: Path, db: str, token: str) -> tuple[httpx.Response, dict[str, Any], dict[str, Any]]:
    """Over a served store: REST's strict memory search, MCP's search_memory and recall, for "PostgreSQL"."""
    bearer = {"Authorization": f"Bearer {token}"}
    with _serving(vault, db) as base, httpx.Client(base_url=base, timeout=30) as client:
        return (client.get("/api/v1/memories/search", params={"q": "PostgreSQL"}, headers=bearer),
                _mcp_call(client, bearer, "search_memory", {"query": "PostgreSQL"}),
                _mcp_call(client, bearer, "recall", {"query": "PostgreSQL"}))


def _not_utf8(db: str, sql: str) -> None:
    """``sql`` run on the store, closed meanwhile: an UPDATE that sets a value to bytes that are not UTF-8, as a
    probe that changed bytes inside a row leaves it."""
    with sqlite3.connect(db) as conn:
        conn.execute(sql)
    conn.close()


def test_a_damaged_memory_index_is_one_line_at_every_door_and_repair_gives_back_the_same_answers(
        tmp_path: Path) -> None:
    vault, db, token = _store(tmp_path)
    before = _answers(vault, db)
    _damage_index(db, "memory_words")

    _one_line(run_cli("memory", "search", "PostgreSQL", "--db", db, "--vault", str(vault)),
              DAMAGED, "'notewell doctor' names the damaged part", "'notewell repair' rebuilds")
    rest, strict, tolerant = _served_searches(vault, db, token)
    assert rest.status_code == 503 and rest.headers["content-type"].startswith("application/problem+json")
    assert DAMAGED in rest.json()["detail"] and "A damaged store" in rest.json()["detail"], rest.text
    text = strict["content"][0]["text"]
    assert strict["isError"] is True and DAMAGED in text and "internal error" not in text, strict
    assert tolerant["isError"] is False and "Frankfurt" in tolerant["content"][0]["text"], tolerant  # stems whole

    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    flat = " ".join(doctor.output.split())
    assert doctor.exit_code == 1, flat
    assert "FAIL integrity: damaged: the memories' word index (memory_words):" in flat
    assert "run `notewell repair`" in flat, flat

    repaired, doctor = _repaired_as_before(vault, db, before)
    assert '"memory_words"' in repaired and '"damaged": {}' in repaired, repaired
    assert "ok integrity: no damage found (every index and table checked)" in doctor, doctor


def test_a_damaged_trigram_index_fails_search_in_one_line_and_repair_rebuilds_it(tmp_path: Path) -> None:
    vault, db, _token = _store(tmp_path)
    before = _answers(vault, db)
    for shard in ("document_trigrams_0", "document_trigrams_1"):
        _damage_index(db, shard)
    _one_line(run_cli("search", "heron", "--db", db, "--vault", str(vault)), DAMAGED)
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault), "--json")
    assert doctor.exit_code == 1 and "the documents' trigram index (document_trigrams_" in doctor.stdout, doctor.stdout

    repaired = run_cli("repair", "--db", db, "--vault", str(vault))
    assert repaired.exit_code == 0 and "The store is whole: no damage found" in repaired.stdout, repaired.output
    assert _answers(vault, db) == before


def test_damaged_tables_are_no_index_to_rebuild_doctor_and_repair_point_at_a_backup(tmp_path: Path) -> None:
    vault, db, _token = _store(tmp_path)
    _overwrite(db, "SELECT rootpage FROM sqlite_master WHERE name = 'audit_log'")
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    flat = " ".join(doctor.output.split())
    assert doctor.exit_code == 1 and "FAIL integrity: the store's tables are damaged:" in flat, flat
    assert "run `notewell repair`" in flat and "restore the last backup" in flat and "notewell export DIR" in flat

    repaired = run_cli("repair", "--db", db, "--vault", str(vault))
    _one_line(repaired, "damage is left where no index rebuilds it", "restore the last backup")


def test_the_check_stops_at_its_budget_and_says_what_it_left(tmp_path: Path) -> None:
    _vault, db, _token = _store(tmp_path)
    database = SqliteDatabase(Path(db))
    try:
        found = check(database, 0.0)
        assert found.damaged == {} and "tables" in found.unchecked and "memory_words" in found.unchecked, found
        whole = check(database, None)
        assert whole.damaged == {} and whole.unchecked == [], whole
        writer = sqlite3.connect(db, isolation_level=None)  # a server in a write: FTS5's check (an INSERT) would
        try:  # wait 30 s for its lock, past the budget, and doctor ended in "stayed locked by another process"
            writer.execute("BEGIN IMMEDIATE")
            busy = check(database, 10.0)
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert "memory_words" in busy.busy and busy.unchecked == [] and busy.damaged == {}, busy  # tables checked
        assert database.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000  # as the connection had it
    finally:
        database.close()


def test_repair_on_postgresql_reindexes_every_table_and_search_answers_the_same(
        pg_cluster: PgCluster, tmp_path: Path) -> None:
    name = pg_cluster.create_database()
    try:
        vault, db, _token = _store(tmp_path, pg_cluster.url(name))
        before = _answers(vault, db)
        repaired, doctor = _repaired_as_before(vault, db, before)
        assert '"memories"' in repaired and '"checked": false' in repaired, repaired
        assert "ok integrity: PostgreSQL checks its pages as it reads them" in doctor, doctor
    finally:
        pg_cluster.drop_database(name)


def test_a_row_whose_bytes_are_not_utf8_is_damage_at_every_command_and_doctor_goes_on(tmp_path: Path) -> None:
    """A probe changed bytes inside a row: doctor crashed in its index check ("Could not decode to UTF-8 column
    'sha256'") and export printed a traceback as it streamed the memories."""
    vault, db, _token = _store(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE documents SET sha256 = CAST(x'ff41' AS TEXT)")
        conn.execute("UPDATE memories SET content = CAST(x'c328' AS TEXT)")
    conn.close()
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    flat = " ".join(doctor.output.split())
    assert doctor.exit_code == 1 and "Traceback" not in doctor.output, doctor.output
    assert "FAIL index: cannot read the store: Could not decode to UTF-8 column 'sha256' (its bytes are not UTF-8)" \
        in flat and "ok port:" in flat, flat  # the checks after it ran
    _one_line(run_cli("export", str(tmp_path / "out"), "--db", db, "--vault", str(vault)),
              "is damaged (Could not decode to UTF-8 column 'content' (its bytes are not UTF-8))")
    assert not (tmp_path / "out").exists()


def test_an_error_no_command_expected_is_one_line_and_exit_70(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The last guard of the command line (notewell.cli.main): a bug's traceback is shown only when asked for."""
    import notewell.cli as cli

    def broken(**_kwargs: object) -> None:
        raise KeyError("left out")

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    err = capsys.readouterr().err
    assert ended.value.code == 70 and "Traceback" not in err, err
    assert " ".join(err.split()).startswith("error: KeyError: 'left out'; Notewell did not expect this: 'notewell "
                                            "doctor' checks the set-up and the store"), err
    monkeypatch.setenv("NOTEWELL_TRACEBACK", "1")
    with pytest.raises(KeyError):
        cli.main()


def test_a_job_id_past_a_64_bit_integer_is_refused_naming_it(tmp_path: Path) -> None:
    vault, db, _token = _store(tmp_path)
    _one_line(run_cli("jobs", "retry", str(2**70), "--db", db, "--vault", str(vault)),
              f"ID: must be a job's id, from 1 to {2**63 - 1}")


def test_a_backup_of_a_damaged_store_names_the_store_not_the_new_file(tmp_path: Path) -> None:
    """It said "b.db is damaged; name a file 'notewell backup' wrote", as a restore says of a bad backup."""
    vault, db, _token = _store(tmp_path)
    _overwrite(db, "SELECT rootpage FROM sqlite_master WHERE name = 'audit_log'")
    _one_line(run_cli("backup", str(tmp_path / "b.db"), "--db", db, "--vault", str(vault)),
              f"the store {db} is damaged (")
    assert not (tmp_path / "b.db").exists() and not (tmp_path / "b.db.part").exists()


def test_a_backup_where_no_file_can_be_made_and_a_new_store_never_made_are_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc takes no new file: a FileNotFoundError traceback. A store that could not be made in a read-only
    folder: its clean-up tried to delete it and ended in an EROFS traceback after the one-line error."""
    import errno

    from notewell.store.new_store import NewStore

    vault, db, _token = _store(tmp_path)
    _one_line(run_cli("backup", "/proc/notewell-backup.db", "--db", db, "--vault", str(vault)),
              "backup: cannot write /proc/notewell-backup.db (No such file or directory); name a file in a folder "
              "you may write")

    def read_only(self: Path, missing_ok: bool = False) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "unlink", read_only)
    NewStore(str(tmp_path / "never" / "x.db"), True).discard()  # says nothing: the command's own error does


def test_a_damaged_row_met_as_a_cursor_is_iterated_is_one_line_at_every_door(tmp_path: Path) -> None:
    """A review: strict memory search reads its rows by iterating a cursor, past the store's translation: a title
    whose bytes are not UTF-8 was "internal error" over MCP, a 500 over REST and a traceback at the CLI."""
    from conftest import run_module

    vault, db, token = _store(tmp_path)
    _not_utf8(db, BAD_MEMORY_TITLE)
    said = "is damaged (Could not decode to UTF-8 column 'title' (its bytes are not UTF-8))"
    cli = run_module("memory", "search", "PostgreSQL", "--db", db, "--vault", str(vault))
    assert cli.returncode == 1 and "Traceback" not in cli.stderr and said in " ".join(cli.stderr.split()), cli.stderr
    rest, strict, _tolerant = _served_searches(vault, db, token)
    assert rest.status_code == 503 and said in rest.json()["detail"], rest.text
    assert strict["isError"] is True and said in strict["content"][0]["text"], strict


@pytest.mark.parametrize("damage", ["row", "index"])
def test_a_damaged_row_met_as_a_web_page_reads_is_the_503_page_naming_it(tmp_path: Path, damage: str) -> None:
    """A probe: the memories page's search reads its rows by iterating a cursor, past the store's translation and
    past the web's own error pages: a title whose bytes are not UTF-8 was a bare 500 "Internal Server Error"; and
    a damaged word index, which the store does translate, was the page's own refusal beside the search (200)."""
    vault, db, _token = _store(tmp_path)
    rt = open_runtime(str(vault), db)
    try:
        rt.sign_in.set_password(LOCAL_OWNER, "ada@example.test", PASSWORD)
    finally:
        rt.close()
    if damage == "row":
        _not_utf8(db, BAD_MEMORY_TITLE)
    else:
        for index in ("memory_words", "memory_stems"):  # recall reads both
            _damage_index(db, index)
    with _serving(vault, db) as base, httpx.Client(base_url=base, timeout=30) as browser:
        signed = browser.post("/signin", data={"csrf": csrf_of(browser.get("/signin").text), "next": "/memories",
                                               "email": "ada@example.test", "password": PASSWORD})
        assert signed.status_code == 303, signed.text
        page = browser.get("/memories", params={"q": "PostgreSQL"})
    assert page.status_code == 503 and page.headers["retry-after"] == "300", page.text
    assert page.headers["content-type"].startswith("text/html"), page.headers
    flat = " ".join(unescape(page.text).split())
    why = "Could not decode to UTF-8 column 'title' (its bytes are not UTF-8)" if damage == "row" else "malformed"
    assert "is damaged (" in flat and why in flat, flat
    assert "an operator must check and mend it" in flat and "A damaged store" in flat, flat


@pytest.mark.anyio
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_a_damaged_row_met_by_a_resource_read_is_a_json_rpc_error_naming_it(tmp_path: Path, mode: str) -> None:
    """A probe: resources/read answered a damaged store "Internal server error" (code 0 and the exception's text
    with the handshake): only tools/call turned it into the store's one line."""
    vault, db, token = _store(tmp_path)
    _not_utf8(db, "UPDATE documents SET title = CAST(x'ff' AS TEXT) WHERE path = 'plan.md'")
    with _serving(vault, db) as base:
        async with connect(f"{base}/mcp", token, mode) as client:
            with pytest.raises(MCPError) as refused:
                await client.read_resource("notewell://doc/apollo%2Fplan.md/links")
    error = refused.value.error
    assert error.code == INTERNAL_ERROR, error
    assert "is damaged (Could not decode to UTF-8 column 'title' (its bytes are not UTF-8))" in error.message, error
    assert "A damaged store" in error.message, error


def _stdio(vault: Path, db: str, token: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    return StdioServerParameters(command=sys.executable, env={**env, "NOTEWELL_TOKEN": token}, args=[
        "-m", "notewell", "serve", "--stdio", "--no-watch", "--vault", str(vault), "--db", db])


@pytest.mark.anyio
async def test_a_damaged_token_row_at_the_token_check_is_a_503_and_over_stdio_a_json_rpc_error(tmp_path: Path) -> None:
    """A probe: the token is checked before each tool runs, over stdio too (read from the store again, so that a
    revoke counts at once): a token row whose bytes are not UTF-8 was "Internal server error" there (code 0 with
    the handshake). Over HTTP the bearer check is a 503 with the one line, never a 401 or a 500."""
    vault, db, token = _store(tmp_path)
    said = "is damaged (Could not decode to UTF-8 column 'scopes' (its bytes are not UTF-8))"
    with (tmp_path / "stderr.txt").open("w") as errlog:
        for mode in (LEGACY, MODERN):
            async with Client(stdio_client(_stdio(vault, db, token), errlog=errlog), mode=mode) as client:
                assert not (await client.call_tool("listProjects", {})).is_error
                _not_utf8(db, "UPDATE tokens SET scopes = CAST(x'ff' AS TEXT)")
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("listProjects", {})
            assert refused.value.error.code == INTERNAL_ERROR and said in refused.value.error.message, refused.value
            _not_utf8(db, "UPDATE tokens SET scopes = 'knowledge:read memory:read memory:write'")

    _not_utf8(db, "UPDATE tokens SET scopes = CAST(x'ff' AS TEXT)")
    bearer = {"Authorization": f"Bearer {token}"}
    with _serving(vault, db) as base, httpx.Client(base_url=base, timeout=30) as client:
        answers = [client.post("/mcp", json=INIT, headers={**ACCEPT, **bearer}),
                   client.get("/api/v1/projects", headers=bearer)]
    for answer in answers:
        assert answer.status_code == 503 and answer.headers["retry-after"] == "300", answer.text
        assert said in answer.text, answer.text


@pytest.mark.parametrize("read", ["fetchall", "fetchone", "stream"])
def test_a_damaged_row_leaves_no_read_snapshot_behind(tmp_path: Path, read: str) -> None:
    """A review: the statement that met the damage stayed open as long as its exception was kept (a log's
    capture, a traceback held), and with it its read snapshot: that thread's connection then read the store as
    it was, so a token minted since was unknown and one revoked since still worked."""
    db = str(tmp_path / "index.db")
    rt = open_runtime(str(make_vault(tmp_path, {"apollo/a.md": "# A\n"})), db)
    try:
        store = rt.store.db  # type: ignore[attr-defined]
        store.conn.execute("CREATE TABLE seen (n INTEGER)")
        store.conn.execute("CREATE TABLE rows (t TEXT)")
        store.conn.executemany("INSERT INTO rows VALUES (?)", [("fine",), ("fine",)])
        store.conn.execute("INSERT INTO rows VALUES (CAST(x'ff' AS TEXT))")
        store.conn.commit()
        kept: list[BaseException] = []
        with pytest.raises(StoreDamaged) as raised:
            if read == "stream":
                list(store.stream("SELECT t FROM rows"))
            else:
                cursor = store.conn.execute("SELECT t FROM rows")
                while getattr(cursor, read)():
                    pass
        kept.append(raised.value)  # as a log's capture keeps it
        with sqlite3.connect(db) as other:
            other.execute("INSERT INTO seen VALUES (1)")
        other.close()
        assert store.conn.execute("SELECT count(*) FROM seen").fetchone() == (1,)
    finally:
        rt.close()


def test_a_header_damaged_under_a_running_server_says_damaged_on_a_new_connection(tmp_path: Path) -> None:
    """A probe: once the store's first page was overwritten, a thread opening its connection since (each new
    worker thread) said the store "cannot be opened now ...: was it moved or deleted", where it is damaged."""
    vault, db, token = _store(tmp_path)
    rt = open_runtime(str(vault), db)
    bearer = {"Authorization": f"Bearer {token}"}
    try:
        with ServerThread(build_app(rt, ServeOptions(choose(None), watch=False, jobs=False))) as server, \
                httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as client:
            assert client.get("/api/v1/memories/search", params={"q": "PostgreSQL"}, headers=bearer).status_code == 200
            with open(db, "r+b") as f:
                f.write(b"\xa5" * 100)  # the 100-byte header: "SQLite format 3", the page size, ...
            rt.store.db.close()  # type: ignore[attr-defined]  # every thread opens its connection again, as new ones do
            answer = client.get("/api/v1/memories/search", params={"q": "PostgreSQL"}, headers=bearer)
            assert answer.status_code == 503 and answer.headers["retry-after"] == "300", answer.text
            detail = answer.json()["detail"]
            assert f"the store {db} {DAMAGED}" in detail and "moved or deleted" not in detail, detail
    finally:
        rt.close()


def _damage_leaf_page(db: str, table: str) -> None:
    """One leaf page of ``table`` overwritten past its first 100 bytes (its header and cell pointers kept) with
    bytes of a fixed seed, as an outside probe damaged it: the b-tree's own page, not the rows FTS5 reads."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    try:
        page = conn.execute("SELECT max(pageno) FROM dbstat WHERE name = ? AND pagetype = 'leaf'",
                            (table,)).fetchone()[0]
    except sqlite3.OperationalError:  # no dbstat compiled in: a table of a page or two, its root a leaf
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    conn.close()
    with open(db, "r+b") as f:
        f.seek((page - 1) * page_size + 100)
        f.write(random.Random(0).randbytes(page_size - 100))


def test_repair_makes_a_word_index_again_when_its_own_pages_are_damaged(tmp_path: Path) -> None:
    """Before: FTS5's 'delete-all' (and DROP TABLE) walk the damaged page and fail, and repair left the damage."""
    vault, db, token = _store(tmp_path)
    before = _answers(vault, db)
    _damage_leaf_page(db, "memory_words_data")
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    assert doctor.exit_code == 1 and "FAIL integrity" in doctor.output, doctor.output

    repaired = run_cli("repair", "--db", db, "--vault", str(vault))
    flat = " ".join(repaired.stdout.split())
    assert repaired.exit_code == 0, repaired.output
    assert "memory_words, memory_stems, brain_session_words" in flat and "The store is whole" in flat, flat
    doctor = run_cli("doctor", "--db", db, "--vault", str(vault))
    assert "ok integrity: no damage found" in " ".join(doctor.output.split()), doctor.output
    assert _answers(vault, db) == before
    _rest, strict, _tolerant = _served_searches(vault, db, token)
    assert strict["isError"] is False and "Frankfurt" in strict["content"][0]["text"], strict
