"""Every command that lists rows prints them readably wherever its output goes: piped, plain lines (search as
``path:line: text``, the others tab-separated, nothing cut; the counts on stderr); on a wide terminal a table
whose refs and paths are whole; on a narrow one plain lines again; and with nothing to list, a sentence
saying so instead of an empty box."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import NORTHWIND, IndexedVault, make_vault, run_cli, run_on_terminal
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime

ADA = "ada.lovelace-of-the-analytical-engine@example.com"  # long: a table of her rows is wide
BOX = ("┃", "│", "━", "─")


class World:
    def __init__(self, vault: Path, db: Path) -> None:
        self.where = ["--vault", str(vault), "--db", str(db)]

    def plain(self, *args: str) -> list[list[str]]:
        """The command's rows as a pipe gets them."""
        result = run_cli(*args, *self.where)
        assert result.exit_code == 0, result.stderr
        assert not any(mark in result.stdout for mark in BOX), result.stdout
        return [line.split("\t") for line in result.stdout.splitlines()]

    def json(self, *args: str) -> Any:
        result = run_cli(*args, *self.where, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def world(tmp_path: Path) -> World:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n\nDeploys happen\tweekly.\n"})
    db = tmp_path / "index.db"
    rt = open_runtime(str(vault), str(db))
    try:
        rt.indexing.sync()
        ada = rt.administration.add_user(LOCAL_OWNER, ADA, "member", name="Ada Lovelace", handle="ada")
        rt.administration.grant(LOCAL_OWNER, ADA, "apollo", "write")
        rt.administration.mint_token(LOCAL_OWNER, ADA, ["knowledge:read", "sessions"], name="laptop")
        rt.memory.remember(LOCAL_OWNER, "Deploys happen on Tuesdays.\tAlways.", project="apollo",
                           path="operations/releases/weekly", title="Deploy day")
        alice = user_principal(ada)
        project, _ = rt.brain.create_project(alice, "Analytical Engine")
        started = rt.brain.start_session(alice, prompt="calibrate the mill\nthen the store", project_id=project.id)
        rt.brain.report_outcome(alice, started.session.id, success=True, summary="done")
        rt.brain.teach(alice, rule="zero the mill before each run", trigger="", rationale="", kind="reflex",
                       source="cli", tags=None, project_id=project.id)
    finally:
        rt.close()
    return World(vault, db)


def test_piped_search_is_one_grep_line_per_match(northwind: IndexedVault) -> None:
    result = run_cli("search", "maximum discount", "--vault", str(NORTHWIND), "--db", northwind.db)
    assert result.exit_code == 0
    as_json = json.loads(run_cli("search", "maximum discount", "--vault", str(NORTHWIND), "--db", northwind.db,
                                 "--json").stdout)
    assert result.stdout.splitlines() == [f"{m['path']}:{m['line']}: {m['text']}" for m in as_json["matches"]]
    assert result.stderr.strip() == "3 matches"


def test_a_search_line_keeps_the_text_as_found(world: World) -> None:
    result = run_cli("search", "weekly", *world.where)
    assert result.stdout == "apollo/plan.md:3: Deploys happen\tweekly.\n" and result.stderr.strip() == "1 match"


def test_stored_text_never_runs_as_a_terminal_command(tmp_path: Path) -> None:
    """An ESC sequence (set the terminal's title, its colours), a BEL or a bidirectional override in a document
    is printed as its escape, piped or on a terminal; --json keeps the text as it is. A memory's title taken
    from its first line has a space for each."""
    vault = make_vault(tmp_path, {"apollo/esc.md": "zeta \x1b]0;PWNED\x07\x1b[31mred \u202etxt.exe\n"})
    db = str(tmp_path / "index.db")
    rt = open_runtime(str(vault), db)
    try:
        rt.indexing.sync()
        rt.memory.remember(LOCAL_OWNER, "zeta \x1b[31mred\x07 memory", project="apollo")
    finally:
        rt.close()
    where = ["--vault", str(vault), "--db", db]
    piped = run_cli("search", "zeta", *where)
    assert piped.stdout == "apollo/esc.md:1: zeta \\x1b]0;PWNED\\x07\\x1b[31mred \\u202etxt.exe\n"
    for shown in (run_cli("memory", "search", "zeta", *where).stdout,
                  _on_terminal(200, "memory", "search", "zeta", *where)):
        assert "\x1b" not in shown and "\x07" not in shown and "zeta  [31mred  memory" in shown, shown  # its title
    assert json.loads(run_cli("search", "zeta", *where, "--json").stdout)["matches"][0]["text"].count("\x1b") == 2
    packed = run_cli("memory", "context", "zeta", *where).stdout  # the pack's text was printed raw
    assert "\x1b" not in packed and "zeta \\x1b[31mred\\x07 memory" in packed, packed
    edited = run_cli("note", "edit", "apollo/esc.md", "append", "-c", "more \x1b[2J", *where).stdout  # its diff
    assert "\x1b" not in edited and "more \\x1b[2J" in edited, edited


def test_a_title_tag_or_path_with_a_control_character_is_refused_by_name(world: World) -> None:
    for option, value in (("--path", "val/\x1b]0;PWNED"), ("--title", "ring\x07"), ("--tag", "a\u202eb"),
                          ("--path", "ops/\u202etxt.exe")):
        result = run_cli("memory", "add", "a memory", "--project", "apollo", option, value, *world.where)
        assert result.exit_code != 0 and "control character U+" in result.stderr, result.stderr
        assert option.lstrip("-") in result.stderr


def test_every_listing_piped_is_one_tab_separated_line_per_row(world: World) -> None:
    users = world.json("user", "list")
    assert world.plain("user", "list") == [[u["email"], u["name"], u["handle"], u["role"], "yes", u["home"]]
                                           for u in users]
    [token] = world.json("token", "list")
    assert world.plain("token", "list") == [[token["id"], ADA, "laptop", "knowledge:read sessions", "-", "never",
                                             "-", "active"]]
    assert world.plain("project", "list") == [["apollo", "apollo", "active", ""]]
    assert world.plain("grants") == [[ADA, "apollo", "write"]]
    audit = world.json("audit")
    assert [row[3] for row in world.plain("audit")] == [e["action"] for e in audit]
    [memory] = world.json("memory", "search", "tuesdays")["results"]
    expected = [[memory["ref"], "apollo/operations/releases/weekly", "durable", "Deploy day"]]
    for command in ("search", "recall"):  # the tab in the content is no column of its own
        assert [row[:4] for row in world.plain("memory", command, "tuesdays")] == expected
    as_ada = ["--as", ADA]
    [session] = world.json("brain", "sessions", *as_ada)["sessions"]
    assert world.plain("brain", "sessions", *as_ada) == [[
        session["sessionId"], session["projectId"], session["startedAt"][:16], "success", f"{session['sqs']:.2f}",
        "calibrate the mill then the store"]]  # one line, whatever the prompt holds
    [item] = world.json("brain", "knowledge", *as_ada)["knowledge"]
    assert world.plain("brain", "knowledge", *as_ada) == [[item["id"], item["projectId"], "reflex", "1.00", "seed",
                                                           "zero the mill before each run"]]
    assert [row[0] for row in world.plain("brain", "projects", *as_ada)] == [
        p["id"] for p in world.json("brain", "projects", *as_ada)["projects"]]


@pytest.mark.parametrize(("args", "said"), [
    (("search", "no such words"), "No results for 'no such words'"),
    (("memory", "search", "nothing"), "No results for 'nothing' (strict matching)"),
    (("memory", "recall", "nothing"), "No results for 'nothing' (tolerant matching)"),
    (("user", "list"), "No users; add one with 'notewell user add EMAIL --role member'"),
    (("token", "list"), "No tokens; mint one with 'notewell token mint'"),
    (("project", "list"), "No projects (archived ones are listed with --archived); each top-level folder of the "
                          "vault is one once 'notewell index' ran"),
    (("grants",), "No grants; give one with 'notewell grant EMAIL PROJECT'"),
    (("audit", "--since", "2999-01-01"), "No audit entries since 2999-01-01"),
])
def test_nothing_to_list_is_said_in_words(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    vault = make_vault(tmp_path, {"picture.png": b"\x89PNG"})  # no document, so no project
    assert run_cli("index", "--vault", str(vault)).exit_code == 0
    result = run_cli(*args, "--vault", str(vault))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and result.stderr.strip() == said


def test_nothing_in_a_brain_is_said_in_words(world: World) -> None:
    rt = open_runtime(world.where[1], world.where[3])
    try:
        rt.administration.add_user(LOCAL_OWNER, "new@example.com", "member", handle="newcomer")
    finally:
        rt.close()
    for args, said in [(("brain", "sessions"), "No sessions of new@example.com"),
                       (("brain", "sessions", "--query", "mill"), "No sessions of new@example.com match 'mill'"),
                       (("brain", "knowledge"), "No taught knowledge new@example.com sees")]:
        result = run_cli(*args, *world.where, "--as", "new@example.com")
        assert result.exit_code == 0 and result.stdout == "" and result.stderr.strip() == said, result.stderr


def _on_terminal(columns: int, *args: str) -> str:
    """The command's output on a terminal ``columns`` wide (a real pseudo-terminal), its styles taken out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    code, output = run_on_terminal(args, {**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "NO_COLOR": "1"})
    assert code == 0, output
    return re.sub(r"\x1b\[[0-9;]*m", "", output.decode("utf-8")).replace("\r\n", "\n")  # without its styles


def test_a_wide_terminal_gets_a_table_with_whole_refs_and_a_narrow_one_plain_lines(world: World) -> None:
    [memory] = world.json("memory", "search", "tuesdays")["results"]
    wide = _on_terminal(200, "memory", "search", "tuesdays", *world.where)
    assert "┃ ref" in wide and f"│ {memory['ref']} │ apollo/operations/releases/weekly │" in wide, wide
    narrow = _on_terminal(80, "memory", "search", "tuesdays", *world.where)
    assert not any(mark in narrow for mark in BOX), narrow
    assert narrow.splitlines()[0].startswith(f"{memory['ref']}\tapollo/operations/releases/weekly\tdurable\t")
    users = _on_terminal(80, "user", "list", *world.where)  # ADA's row is wider than 80 columns
    assert not any(mark in users for mark in BOX) and f"{ADA}\tAda Lovelace\tada\tmember\tyes\t~ada" in users
