"""``notewell audit`` reads the log a page at a time (issue 27): it read every entry since the time given into one
list before printing the first, so what it held grew with the log. Now no read returns more than a page
(``PAGE_ENTRIES``), each page's actors are read with it, and the output is the text it was: --json the same array,
plain lines the same lines, in id order, the entries written with an older time after a later one (a merged
store's) left out by --since as before. On both backends, through the command line."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import make_vault, run_cli, run_on_terminal
from notewell.access.audit import PAGE_ENTRIES
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime
from notewell.store.shared.audit import SqlAudit

ENTRIES = 2 * PAGE_ENTRIES + 234
SINCE = "2026-03-01T00:01:40Z"  # the 100th second: entries 0-99 are older, and each 7th after 1,000 is backdated


def _at(second: int) -> str:
    return f"2026-03-01T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"


@pytest.fixture
def where(tmp_path: Path, store_url: str) -> Iterator[list[str]]:
    """A log of ENTRIES entries a second apart by ada, bob, a system actor and the local owner, each 7th from
    the 1,000th written with a time before SINCE."""
    vault = make_vault(tmp_path, {"alpha/a.md": "# A\n"})
    rt = open_runtime(str(vault), store_url)
    try:
        ada = rt.administration.add_user(LOCAL_OWNER, "ada@example.com", "member", handle="ada")
        bob = rt.administration.add_user(LOCAL_OWNER, "bob@example.com", "member", handle="bob")
        actors = [ada.id, bob.id, "system:evolution", LOCAL_OWNER.user_id]
        for i in range(ENTRIES):
            at = _at(i % 50) if i >= 1000 and i % 7 == 0 else _at(i)
            rt.audit.record_system(at, actors[i % 4], f"test.{i % 3}", f"target-{i}", {"n": i, "note": "tab\there"})
    finally:
        rt.close()
    yield ["--vault", str(vault), "--db", store_url]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many entries each read of the log returned."""
    counted: list[int] = []
    list_since = SqlAudit.list_since

    def counting(self: SqlAudit, *args: Any, **kwargs: Any) -> Any:
        found = list_since(self, *args, **kwargs)
        counted.append(len(found))
        return found

    monkeypatch.setattr(SqlAudit, "list_since", counting)
    return counted


def _expected(where: list[str]) -> list[dict[str, Any]]:
    """The entries since SINCE as one read of the whole log lists them (the earlier command's read)."""
    rt = open_runtime(where[1], where[3])
    try:
        emails = {u.id: u.email for u in rt.administration.users(LOCAL_OWNER)} | {
            LOCAL_OWNER.user_id: LOCAL_OWNER.email}
        return [{"id": e.id, "at": e.at, "user": e.user_id, "email": emails.get(e.user_id), "token": e.token_id,
                 "action": e.action, "target": e.target, "detail": e.detail}
                for e in rt.store.audit.list_since(SINCE) if e.target.startswith("target-")]
    finally:
        rt.close()


def test_audit_reads_a_page_at_a_time_and_prints_what_it_printed(where: list[str], reads: list[int]) -> None:
    expected = _expected(where)
    reads.clear()
    result = run_cli("audit", "--since", SINCE, *where, "--json")
    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    assert reads and max(reads) <= PAGE_ENTRIES and len(reads) >= 2, reads
    reads.clear()
    assert [e for e in printed if e["target"].startswith("target-")] == expected
    assert [e["target"] for e in expected] == [f"target-{i}" for i in range(100, ENTRIES)
                                               if not (i >= 1000 and i % 7 == 0)]
    assert result.stdout == json.dumps(printed, ensure_ascii=False, indent=2) + "\n"
    assert {e["email"] for e in expected} == {"ada@example.com", "bob@example.com", None, LOCAL_OWNER.email}

    plain = run_cli("audit", "--since", SINCE, *where)
    assert plain.exit_code == 0, plain.stderr
    assert max(reads) <= PAGE_ENTRIES, reads
    assert plain.stdout.splitlines() == [
        "\t".join([e["at"], e["email"] or e["user"], e["token"] or "-", e["action"], e["target"],
                   json.dumps(e["detail"], ensure_ascii=False, sort_keys=True).replace("\t", " ")])
        for e in printed]


def test_audit_of_nothing_says_so(where: list[str]) -> None:
    for args in (["--json"], []):
        result = run_cli("audit", "--since", "2999-01-01", *where, *args)
        assert result.exit_code == 0, result.stderr
        assert result.stdout == ("[]\n" if args else "")
        assert ("" if args else "No audit entries since 2999-01-01") in result.stderr


def test_a_wide_terminal_gets_a_table_a_page(where: list[str]) -> None:
    """Each page is a table of its own (a table of the whole log would be measured on every entry first)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    code, output = run_on_terminal(["audit", "--since", SINCE, *where],
                                   {**env, "TERM": "xterm-256color", "COLUMNS": "250", "NO_COLOR": "1"})
    shown = re.sub(r"\x1b\[[0-9;]*m", "", output.decode("utf-8"))
    assert code == 0, shown
    assert shown.count("┃ at ") == 3, shown[:2000]
    assert len(re.findall(r"│ target-\d+ ", shown)) == len(_expected(where)), shown[:2000]
