"""notewell memory add | search | recall | context | forget | export, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import make_vault, run_cli


def test_memory_commands_end_to_end(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n\nDeploys happen weekly.\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    added = run_cli("memory", "add", "Deploys happen on Tuesdays.", "--project", "apollo", "--path", "ops",
                    "--tag", "release", *base, "--json")
    assert added.exit_code == 0, added.stderr
    ref = json.loads(added.stdout)["ref"]
    again = json.loads(run_cli("memory", "add", "Deploys happen on Tuesdays.", "--project", "apollo", "--path", "ops",
                               *base, "--json").stdout)
    assert again["ref"] == ref and again["deduplicated"]
    strict = json.loads(run_cli("memory", "search", "deploys tuesdays", *base, "--json").stdout)
    assert [r["ref"] for r in strict["results"]] == [ref]
    assert json.loads(run_cli("memory", "search", "deploy", *base, "--json").stdout)["results"] == []
    tolerant = json.loads(run_cli("memory", "recall", "deploy", *base, "--json").stdout)
    assert [r["ref"] for r in tolerant["results"]] == [ref]
    pack = json.loads(run_cli("memory", "context", "deploy", "--documents", "--max-tokens", "100", *base,
                              "--json").stdout)
    assert pack["tokensUsed"] <= 100 and {i["kind"] for i in pack["items"]} == {"memory", "document"}
    out = tmp_path / "export"
    assert run_cli("memory", "export", str(out), *base).exit_code == 0
    text = (out / "apollo" / f"{ref}.md").read_text("utf-8")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["ref"] == ref and front["tags"] == ["release"] and text.endswith("---\nDeploys happen on Tuesdays.\n")
    assert run_cli("memory", "forget", ref, "--reason", "moved to Wednesdays", *base).exit_code == 0
    assert json.loads(run_cli("memory", "recall", "deploy", *base, "--json").stdout)["results"] == []


def test_memory_cli_errors_are_one_line(tmp_path: Path) -> None:
    base = ["--vault", str(make_vault(tmp_path, {"apollo/a.md": "a"}))]
    run_cli("index", *base)
    for args, field in [(["add", "x"], "--project"), (["search", ""], "query"), (["search", "x", "--limit", "-1"],
                        "--limit"), (["recall", "x", "--type", "episodic"], "--type"),
                        (["search", "x", "--as", "nobody@example.com"], "--as"),
                        (["add", "x", "--project", "apollo", "--expires-at", "notadate"], "--expires-at")]:
        result = run_cli("memory", *args, *base)
        assert result.exit_code == 1 and result.stderr.startswith(f"error: {field}: "), result.stderr
        assert "Traceback" not in result.stderr


def test_a_narrow_table_shows_refs_whole_so_forget_can_use_them(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/a.md": "x\n"})
    base = ["--vault", str(vault), "--db", str(tmp_path / "index.db")]
    assert run_cli("index", *base).exit_code == 0
    ref = json.loads(run_cli("memory", "add", "Deploys happen on Tuesdays after the standup.", "--project", "apollo",
                             "--path", "ops/deploys/weekly", *base, "--json").stdout)["ref"]
    for command in ("search", "recall"):
        table = run_cli("memory", command, "deploys tuesdays", *base, env={"COLUMNS": "60"})
        assert table.exit_code == 0 and ref in table.stdout, table.stdout
    assert run_cli("memory", "forget", ref, "--reason", "moved", *base).exit_code == 0


def test_memory_answers_name_their_documents(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, {"apollo/plan.md": "# Plan\n\nDeploys happen weekly.\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    added = run_cli("memory", "add", "Deploys: see apollo/plan.md and apollo/none.md.", "--project", "apollo", *base)
    assert added.exit_code == 0, added.stderr
    for command in ("search", "recall"):
        found = json.loads(run_cli("memory", command, "deploys", *base, "--json").stdout)
        assert found["results"][0]["documents"] == ["apollo/plan.md"]  # apollo/none.md is no document
    pack = json.loads(run_cli("memory", "context", "deploys", *base, "--json").stdout)
    assert pack["items"][0]["documents"] == ["apollo/plan.md"]
    assert pack["items"][0]["label"].endswith(" · about apollo/plan.md")


def test_recall_says_when_it_found_by_words_only(tmp_path: Path) -> None:
    """With meaning off, MCP's recall says so in its note and REST's in wordsOnly; the CLI said nothing."""
    vault = make_vault(tmp_path, {"apollo/a.md": "# A\n", "notewell.toml": "semantic = false\n"})
    base = ["--vault", str(vault)]
    assert run_cli("index", *base).exit_code == 0
    assert run_cli("memory", "add", "Deploys happen on Tuesdays.", "--project", "apollo", *base).exit_code == 0
    said = json.loads(run_cli("memory", "recall", "deploy", *base, "--json").stdout)
    assert said["wordsOnly"] == "semantic = false in notewell.toml" and len(said["results"]) == 1
    assert "found by words only: semantic = false" in run_cli("memory", "recall", "deploy", *base).stderr


def test_search_and_recall_say_when_more_match_than_the_limit(tmp_path: Path, store_url: str) -> None:
    """The service knew (MCP's note and REST's "more" said it); the CLI showed the first rows and said nothing."""
    base = ["--vault", str(make_vault(tmp_path, {"apollo/a.md": "# A\n"})), "--db", store_url]
    assert run_cli("index", *base).exit_code == 0
    for day in ("Mondays", "Tuesdays", "Fridays"):
        added = run_cli("memory", "add", f"Deploys happen on {day}.", "--project", "apollo", *base)
        assert added.exit_code == 0, added.stderr
    for command, query, told in [
            ("search", "deploys happen", "More memories match every word than the 2 shown: raise --limit (up to 50), "
                                         "or narrow with another word, --path-filter or --type."),
            ("recall", "deploy", "More memories match than the 2 shown: raise --limit (up to 50), or narrow with "
                                 "--path-filter or --type.")]:
        cut = json.loads(run_cli("memory", command, query, "--limit", "2", *base, "--json").stdout)
        assert len(cut["results"]) == 2 and cut["more"] is True
        whole = json.loads(run_cli("memory", command, query, "--limit", "3", *base, "--json").stdout)
        assert len(whole["results"]) == 3 and whole["more"] is False
        shown = run_cli("memory", command, query, "--limit", "2", *base)
        assert shown.exit_code == 0 and told in shown.stderr, shown.stderr
        assert len(shown.stdout.splitlines()) == 2  # the rows alone: the note is on stderr
        assert "More memories" not in run_cli("memory", command, query, "--limit", "3", *base).stderr


def test_recall_and_context_say_how_each_memory_was_found_and_when_by_words_only(tmp_path: Path,
                                                                                 store_url: str) -> None:
    """MCP's recall says matched and similarity, REST's foundBy and similarity; the CLI's recall --json said
    neither (a script could not cut on the similarity), its context --json said found_by (its one snake_case key)
    and neither context said when it had packed by words only."""
    base = ["--vault", str(make_vault(tmp_path, {"apollo/a.md": "# A\n"})), "--db", store_url]
    assert run_cli("index", *base).exit_code == 0
    added = run_cli("memory", "add", "We deploy on Tuesdays and Thursdays only, never on Fridays.", "--project",
                    "apollo", *base, "--json")
    ref = json.loads(added.stdout)["ref"]
    assert run_cli("embed", *base).exit_code == 0
    question = "which weekdays are releases allowed"
    found = json.loads(run_cli("memory", "recall", question, *base, "--json").stdout)["results"][0]
    assert found["ref"] == ref and found["foundBy"] == ["meaning"] and found["similarity"] > 0.45, found
    pack = json.loads(run_cli("memory", "context", question, *base, "--json").stdout)
    item = pack["items"][0]
    assert item["ref"] == ref and item["foundBy"] == ["meaning"] and item["similarity"] == found["similarity"]
    assert "found_by" not in item and "wordsOnly" not in pack
    missing = {"NOTEWELL_EMBEDDING_MODEL": str(tmp_path / "no-model.onnx")}
    words = json.loads(run_cli("memory", "context", "deploy", *base, "--json", env=missing).stdout)
    assert words["items"][0]["foundBy"] == ["words"] and words["items"][0]["similarity"] is None
    assert words["wordsOnly"].startswith("the embedding model is not available on this server"), words
    said = run_cli("memory", "context", "deploy", *base, env=missing)
    assert said.exit_code == 0 and "found by words only: the embedding model is not available" in " ".join(
        said.stdout.split()), said.stdout  # unwrapped
