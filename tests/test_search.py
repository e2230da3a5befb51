"""The search engine and `notewell search`: seed examples, modes, filters, paging, Unicode, long lines, regex."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import NORTHWIND, IndexedVault, make_vault, run_cli, run_module
from notewell.errors import InvalidArgument
from notewell.records.documents import Scope
from notewell.search import engine as engine_module
from notewell.search.engine import MAX_LINE_CHARS, SearchEngine, SearchRequest

NBSP = "\u00a0"

SEED_MAXIMUM_DISCOUNT = [
    ("northwind-advisory/2026-q2-pricing-review.md", 20,
     "2. The maximum discount stays at 10 per cent. Partners asked that every discount above 5 per cent is "
     "recorded in the proposal log with its reason."),
    ("northwind-advisory/meetings/meeting-2026-08-14-pricing.md", 9,
     "Discussion: the commercial lead said the pricing policy sets the maximum discount at 10 per cent. Two "
     "partners said that the volume of work justifies more. One partner said a larger discount would set a "
     "precedent for other public-sector clients."),
    ("northwind-advisory/pricing-policy.md", 24,
     "The maximum discount is 10 per cent of the fee. A discount needs a partner's approval. We give a discount "
     "only for one of these reasons:"),
]


def hits(result: object) -> list[tuple[str, int]]:
    return [(m.vault_path, m.line) for m in result.matches]  # type: ignore[attr-defined]


# --- the seed examples on the example vault -----------------------------------------------------------


def test_seed_search_knowledge(northwind: IndexedVault) -> None:
    """searchKnowledge {"query": "maximum discount", "project": "northwind-advisory"}: the page's 3 results."""
    result = northwind.search("maximum discount", projects=["northwind-advisory"], limit=40)
    assert [(m.vault_path, m.line, m.text) for m in result.matches] == SEED_MAXIMUM_DISCOUNT
    assert not result.has_more and not result.scanned
    assert not any(m.shortened for m in result.matches)
    everywhere = northwind.search("maximum discount", limit=40)
    assert hits(everywhere) == [(p, line) for p, line, _ in SEED_MAXIMUM_DISCOUNT]


def test_seed_search_brain(northwind: IndexedVault) -> None:
    """searchBrain website + parents, "discount": offer.md line 4, then commercial-logic.md line 2."""
    project = "northwind-advisory"
    website = northwind.engine.search(SearchRequest("discount", Scope(
        [project], prefix="brains/website", exclude_prefixes=["brains/website/blog"])))
    assert [(m.path, m.line, m.text) for m in website.matches] == [
        ("brains/website/offer.md", 4,
         "Strategy review: from 4,500 GBP. A discount above 5 per cent needs a partner's approval."),
    ]
    business = northwind.search("discount", projects=[project], prefix="brains/business")
    assert [(m.path, m.line, m.text) for m in business.matches] == [
        ("brains/business/commercial-logic.md", 2,
         f"summary: Day rates, the 10 per cent maximum{NBSP}discount and walk-away terms."),
    ]


def test_no_break_space_is_not_a_space(northwind: IndexedVault) -> None:
    """No normalisation: the no-break space in commercial-logic.md matches only itself."""
    assert hits(northwind.search(f"maximum{NBSP}discount")) == [
        ("northwind-advisory/brains/business/commercial-logic.md", 2)]
    assert hits(northwind.search(r"maximum\sdiscount", regex=True, projects=["northwind-advisory"])) == [
        (p, line) for p, line, _ in SEED_MAXIMUM_DISCOUNT]


def test_seed_through_the_cli_json(northwind: IndexedVault) -> None:
    res = run_cli("search", "maximum discount", "--project", "northwind-advisory", "--json",
                  "--vault", str(NORTHWIND), "--db", northwind.db)
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert {"query", "matches", "offset", "hasMore", "scanned"} <= set(data)
    assert (data["query"], data["offset"], data["hasMore"], data["scanned"]) == ("maximum discount", 0, False, False)
    assert data["matches"] == [
        {"project": "northwind-advisory", "path": p, "line": line, "text": text, "shortened": False}
        for p, line, text in SEED_MAXIMUM_DISCOUNT
    ]


def test_cli_json_through_a_real_process(northwind: IndexedVault) -> None:
    proc = run_module("search", "maximum discount", "--json", "--db", northwind.db, cwd=NORTHWIND)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(m["path"], m["line"]) for m in data["matches"]] == [(p, line) for p, line, _ in SEED_MAXIMUM_DISCOUNT]


def test_cli_table(northwind: IndexedVault) -> None:
    res = run_cli("search", "maximum discount", "--vault", str(NORTHWIND), "--db", northwind.db)
    assert res.exit_code == 0
    assert "pricing-policy.md" in res.stdout and res.stderr.strip() == "3 matches"  # the count beside the rows


def test_northwind_long_line_is_shortened(northwind: IndexedVault) -> None:
    [m] = northwind.search("do not know what we were", projects=["handbook"]).matches
    assert (m.path, m.line, m.shortened) == ("processes/writing-guide.md", 14, True)
    assert len(m.text) == MAX_LINE_CHARS and "do not know what we were" in m.text


def test_northwind_unicode(northwind: IndexedVault) -> None:
    suppliers = "handbook/policies/approved-suppliers.txt"
    assert (suppliers, 20) in hits(northwind.search("strasse", all_lines=True))
    assert hits(northwind.search("ΣΤΑΜΑΤΌΠΟΥΛΟΣ", case="smart")) == [(suppliers, 21)]
    assert hits(northwind.search("σταματόπουλος", all_lines=True)) == [(suppliers, 21)]
    assert hits(northwind.search("istanbul", all_lines=True)) == [
        (suppliers, 12), ("handbook/processes/travel.md", 25)]


# --- modes, filters, order and paging ------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path, index_vault) -> IndexedVault:
    return index_vault(make_vault(tmp_path, {
        "alpha/notes.md": "one apple\ntwo\nthree apple pie\napple\n",
        "alpha/b.txt": "apple at line one\n",
        "alpha/sub/deep.md": "no fruit\nan apple here\n",
        "beta/apple.md": "APPLE in capitals\n",
        "gamma/x.md": "Apple with a capital\napple without\n",
        "projects/apollo/plan.md": "apollo apple plan\n",
        "projects/apollo/notes/n.md": "apollo apple note\n",
        "projects/apollo2/plan.md": "apollo2 apple plan\n",
        "projects/apollo-old/plan.md": "old apple plan\n",
        "projects/apollo.md": "a file beside the folder: apple\n",
    }))


def test_first_per_file_and_all_lines(small: IndexedVault) -> None:
    first = small.search("apple", projects=["alpha"])
    assert hits(first) == [("alpha/b.txt", 1), ("alpha/notes.md", 1), ("alpha/sub/deep.md", 2)]
    every = small.search("apple", projects=["alpha"], all_lines=True)
    assert hits(every) == [("alpha/b.txt", 1), ("alpha/notes.md", 1), ("alpha/notes.md", 3),
                           ("alpha/notes.md", 4), ("alpha/sub/deep.md", 2)]


def test_order_is_project_then_path_by_code_point(tmp_path: Path, index_vault) -> None:
    nv = index_vault(make_vault(tmp_path, {
        "b/a.md": "word\n", "a/é.md": "word\n", "a/Z.md": "word\n", "a/z.md": "word\n", "a/B/x.md": "word\n",
        "a/B.md": "word\n", "a/b-c.md": "word\n", "a/b/c.md": "word\n", "A/q.md": "word\n",
    }))
    assert hits(nv.search("word")) == [
        ("A/q.md", 1), ("a/B.md", 1), ("a/B/x.md", 1), ("a/Z.md", 1), ("a/b-c.md", 1), ("a/b/c.md", 1),
        ("a/z.md", 1), ("a/é.md", 1), ("b/a.md", 1)]


def test_project_filter(small: IndexedVault) -> None:
    assert {p.split("/")[0] for p, _ in hits(small.search("apple", projects=["beta", "gamma"]))} == {"beta", "gamma"}
    assert hits(small.search("apple", projects=["beta"])) == [("beta/apple.md", 1)]
    assert hits(small.search("apple", projects=["nope"])) == []
    assert hits(small.search("apple", projects=[])) == []


def test_path_prefix_folder_file_and_sibling(small: IndexedVault) -> None:
    folder = small.search("apple", projects=["projects"], prefix="apollo")
    assert hits(folder) == [("projects/apollo/notes/n.md", 1), ("projects/apollo/plan.md", 1)]
    file = small.search("apple", projects=["projects"], prefix="apollo/plan.md")
    assert hits(file) == [("projects/apollo/plan.md", 1)]
    assert hits(small.search("apple", projects=["projects"], prefix="apollo.md")) == [("projects/apollo.md", 1)]
    assert hits(small.search("apple", projects=["projects"], prefix="apol")) == []


def test_cli_path_and_project(small: IndexedVault) -> None:
    def cli(*args: str) -> list[tuple[str, int]]:
        res = run_cli("search", "apple", "--json", "--vault", str(small.vault), "--db", small.db, *args)
        assert res.exit_code == 0, res.stderr
        return [(m["path"], m["line"]) for m in json.loads(res.stdout)["matches"]]

    apollo = [("projects/apollo/notes/n.md", 1), ("projects/apollo/plan.md", 1)]
    assert cli("--path", "projects/apollo") == apollo
    assert cli("--path", "projects/apollo/") == apollo
    assert cli("--path", "projects/apollo2") == [("projects/apollo2/plan.md", 1)]
    assert cli("--path", "projects/apollo/plan.md") == [("projects/apollo/plan.md", 1)]
    assert cli("--path", "projects/apollo", "--project", "projects") == apollo
    assert cli("-p", "beta", "-p", "gamma") == [("beta/apple.md", 1), ("gamma/x.md", 1)]
    assert [p for p, _ in cli("--path", "alpha")] == ["alpha/b.txt", "alpha/notes.md", "alpha/sub/deep.md"]
    res = run_cli("search", "apple", "--vault", str(small.vault), "--db", small.db, "--path", "alpha", "-p", "beta")
    assert res.exit_code != 0 and "--path" in res.stderr and "Traceback" not in res.stderr
    res = run_cli("search", "apple", "--vault", str(small.vault), "--db", small.db, "--path", "../etc")
    assert res.exit_code != 0 and "--path" in res.stderr
    res = run_cli("search", "apple", "--vault", str(small.vault), "--db", small.db, "--path", "nope/x.md")
    assert res.exit_code != 0 and res.stderr.startswith("error: --path:") and "alpha, beta" in res.stderr
    res = run_cli("search", "apple", "--vault", str(small.vault), "--db", small.db, "-p", "beta", "-p", "nope")
    assert res.exit_code != 0 and res.stderr.startswith("error: --project: no project nope")
    assert cli("--path", "/") == cli()


def test_file_types(small: IndexedVault) -> None:
    assert hits(small.search("apple", projects=["alpha"], file_types=[".txt"])) == [("alpha/b.txt", 1)]
    assert [p for p, _ in hits(small.search("apple", projects=["alpha"], file_types=[".md", ".txt"]))] == [
        "alpha/b.txt", "alpha/notes.md", "alpha/sub/deep.md"]
    res = run_cli("search", "apple", "--json", "--vault", str(small.vault), "--db", small.db, "-t", "txt")
    assert [m["path"] for m in json.loads(res.stdout)["matches"]] == ["alpha/b.txt"]
    res = run_cli("search", "apple", "--json", "--vault", str(small.vault), "--db", small.db, "--type", ".TXT")
    assert [m["path"] for m in json.loads(res.stdout)["matches"]] == ["alpha/b.txt"]


@pytest.mark.parametrize("all_lines", [False, True])
@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_paging_has_no_gap_and_no_repeat(tmp_path: Path, index_vault, all_lines: bool, limit: int) -> None:
    files = {f"p{i % 3}/f{i:02}.md": "".join(f"line {j} {'kiwi' if (i + j) % 3 == 0 else 'plum'}\n"
                                             for j in range(6)) for i in range(12)}
    nv = index_vault(make_vault(tmp_path, files))
    whole = nv.search("kiwi", all_lines=all_lines, limit=1000)
    assert len(whole.matches) == (24 if all_lines else 12) and not whole.has_more
    pages, offset = [], 0
    while True:
        page = nv.search("kiwi", all_lines=all_lines, limit=limit, offset=offset)
        assert page.offset == offset
        assert len(page.matches) == min(limit, len(whole.matches) - offset)
        pages += page.matches
        offset += len(page.matches)
        if not page.has_more:
            break
    assert pages == whole.matches
    past = nv.search("kiwi", all_lines=all_lines, limit=limit, offset=len(whole.matches))
    assert past.matches == [] and not past.has_more


def test_cli_paging(small: IndexedVault) -> None:
    base = ("search", "apple", "--json", "--vault", str(small.vault), "--db", small.db, "--all-lines")
    first = json.loads(run_cli(*base, "--limit", "4").stdout)
    second = json.loads(run_cli(*base, "--limit", "4", "--offset", "4").stdout)
    whole = json.loads(run_cli(*base, "--limit", "100").stdout)
    assert first["hasMore"] and first["offset"] == 0 and second["offset"] == 4
    assert first["matches"] + second["matches"] == whole["matches"][:8]
    res = run_cli(*base, "--limit", "0")
    assert res.exit_code != 0 and "limit" in res.stderr and "Traceback" not in res.stderr
    res = run_cli(*base, "--offset", "-1")
    assert res.exit_code != 0 and "offset" in res.stderr


def test_bad_requests_name_the_field(small: IndexedVault) -> None:
    for kwargs, field in [({"query": ""}, "query"), ({"limit": 0}, "limit"), ({"offset": -1}, "offset"),
                          ({"case": "loud"}, "case")]:
        req = {"query": "apple", "scope": Scope(["alpha"]), **kwargs}
        with pytest.raises(InvalidArgument) as err:
            small.engine.search(SearchRequest(**req))  # type: ignore[arg-type]
        assert err.value.field == field
    with pytest.raises(InvalidArgument, match="query"):
        small.search("two\nlines")
    res = run_cli("search", "x", "--smart-case", "--case-sensitive", "--vault", str(small.vault), "--db", small.db)
    assert res.exit_code != 0 and "choose one" in res.stderr


# --- Unicode and case -----------------------------------------------------------------------------------


@pytest.fixture
def unicode_vault(tmp_path: Path, index_vault) -> IndexedVault:
    return index_vault(make_vault(tmp_path, {
        "u/street.md": "Hauptstraße 12\nHAUPTSTRASSE 12\nhauptstrasse 12\nHauptstrasse 12\n",
        "u/greek.md": "ΟΔΥΣΣΕΥΣ\nοδυσσευς\nοδυσσευσ\nΟδυσσεύς\n",
        "u/turkish.md": "İstanbul ofisi\nISTANBUL\nistanbul\nıstanbul\n",
        "u/mixed.md": "Apple apple APPLE\n",
    }))


def lines(result: object) -> list[int]:
    return [m.line for m in result.matches]  # type: ignore[attr-defined]


def test_full_case_folding(unicode_vault: IndexedVault) -> None:
    street = {"projects": ["u"], "prefix": "street.md", "all_lines": True}
    assert lines(unicode_vault.search("strasse", **street)) == [1, 2, 3, 4]
    assert lines(unicode_vault.search("STRASSE", **street)) == [1, 2, 3, 4]
    assert lines(unicode_vault.search("straße", **street)) == [1, 2, 3, 4]
    assert lines(unicode_vault.search("traß", **street)) == [1, 2, 3, 4]
    greek = {"projects": ["u"], "prefix": "greek.md", "all_lines": True}
    assert lines(unicode_vault.search("οδυσσευς", **greek)) == [1, 2, 3]
    assert lines(unicode_vault.search("ΟΔΥΣΣΕΥΣ", **greek)) == [1, 2, 3]
    assert lines(unicode_vault.search("σευσ", **greek)) == [1, 2, 3]
    assert lines(unicode_vault.search("σεύς", **greek)) == [4]
    turkish = {"projects": ["u"], "prefix": "turkish.md", "all_lines": True}
    assert lines(unicode_vault.search("istanbul", **turkish)) == [1, 2, 3]
    assert lines(unicode_vault.search("İSTANBUL", **turkish)) == [1, 2, 3]
    assert lines(unicode_vault.search("ıstanbul", **turkish)) == [4]  # dotless ı is its own letter


def test_smart_case(unicode_vault: IndexedVault) -> None:
    smart = {"case": "smart", "all_lines": True}
    assert lines(unicode_vault.search("apple", projects=["u"], prefix="mixed.md", **smart)) == [1]
    assert lines(unicode_vault.search("strasse", projects=["u"], prefix="street.md", **smart)) == [1, 2, 3, 4]
    assert lines(unicode_vault.search("Hauptstraße", projects=["u"], prefix="street.md", **smart)) == [1]
    # ß and final ς are lower-case letters (folding changes them, but they are no capitals)
    assert lines(unicode_vault.search("straße", projects=["u"], prefix="street.md", **smart)) == [1, 2, 3, 4]
    assert lines(unicode_vault.search("οδυσσευς", projects=["u"], prefix="greek.md", **smart)) == [1, 2, 3]
    assert lines(unicode_vault.search("HAUPT", projects=["u"], prefix="street.md", **smart)) == [2]
    assert lines(unicode_vault.search("İstanbul", projects=["u"], prefix="turkish.md", **smart)) == [1]
    assert lines(unicode_vault.search("ΟΔΥΣ", projects=["u"], prefix="greek.md", **smart)) == [1]
    assert lines(unicode_vault.search("12", projects=["u"], prefix="street.md", **smart)) == [1, 2, 3, 4]
    assert lines(unicode_vault.search(r"\d\d", projects=["u"], prefix="street.md", regex=True, **smart)) == [
        1, 2, 3, 4]
    assert lines(unicode_vault.search(r"\Sstrasse", projects=["u"], prefix="street.md", regex=True, **smart)) == [
        2, 3, 4]


def test_case_sensitive(unicode_vault: IndexedVault) -> None:
    exact = {"case": "sensitive", "all_lines": True}
    assert lines(unicode_vault.search("strasse", projects=["u"], prefix="street.md", **exact)) == [3, 4]
    assert lines(unicode_vault.search("APPLE", projects=["u"], **exact)) == [1]
    assert unicode_vault.search("APPLE", projects=["u"], **exact).matches[0].text == "Apple apple APPLE"
    assert lines(unicode_vault.search("ΟΔΥΣΣΕΥΣ", projects=["u"], prefix="greek.md", **exact)) == [1]
    assert lines(unicode_vault.search("istanbul", projects=["u"], prefix="turkish.md", **exact)) == [3]


def test_cli_case_options(unicode_vault: IndexedVault) -> None:
    def cli(*args: str) -> list[int]:
        res = run_cli("search", *args, "--json", "--all-lines", "--vault", str(unicode_vault.vault),
                      "--db", unicode_vault.db, "--path", "u/street.md")
        assert res.exit_code == 0, res.stderr
        return [m["line"] for m in json.loads(res.stdout)["matches"]]

    assert cli("Hauptstrasse") == [1, 2, 3, 4]
    assert cli("Hauptstrasse", "--smart-case") == [4]
    assert cli("hauptstrasse", "--case-sensitive") == [3]
    assert cli("HAUPT.*SSE ", "--regex") == [2, 3, 4]  # RE2's simple folding: "ss" does not find "ß"
    assert cli("HAUPT.*SSE ", "--regex", "--case-sensitive") == [2]


# --- long lines -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("at", [0, 50, 350, 700, 1500, 1993])
def test_long_lines_are_cut_around_the_match(tmp_path: Path, index_vault, at: int) -> None:
    line = "x" * at + "needle" + "y" * (2000 - at - 6)
    nv = index_vault(make_vault(tmp_path, {"p/long.md": f"short first line\n{line}\nend\n"}))
    [m] = nv.search("needle").matches
    assert (m.line, m.shortened, len(m.text)) == (2, True, MAX_LINE_CHARS)
    assert "needle" in m.text and m.text in line
    [r] = nv.search("ne+dle", regex=True).matches
    assert (r.text, r.shortened) == (m.text, True)


def test_a_long_match_is_kept_whole_in_the_cut(tmp_path: Path, index_vault) -> None:
    needle = "".join(chr(ord("a") + i % 26) for i in range(350))  # longer than the context before a match
    line = "ß" * 1000 + needle.upper() + "y" * 1000
    nv = index_vault(make_vault(tmp_path, {"p/a.md": line + "\n"}))
    for query, regex, length in ((needle, False, 350), (needle.upper(), False, 350), ("Abc.{340}", True, 343),
                                  (needle[:3] + ".{347}", True, 350)):
        [m] = nv.search(query, regex=regex).matches
        assert m.shortened and len(m.text) == MAX_LINE_CHARS, query
        assert needle.upper()[:length] in m.text, query
    [longer] = nv.search("abc.{500}", regex=True).matches  # longer than the cut: it shows the match's start
    assert longer.text.startswith(needle.upper()[:300])


def test_lines_at_the_limit_are_not_cut(tmp_path: Path, index_vault) -> None:
    exact = "needle" + "z" * (MAX_LINE_CHARS - 6)
    nv = index_vault(make_vault(tmp_path, {"p/a.md": exact + "\n" + exact + "!\n"}))
    first, second = nv.search("needle", all_lines=True).matches
    assert (first.text, first.shortened) == (exact, False)
    assert (second.text, second.shortened) == (exact, True)


def test_long_line_with_wide_characters(tmp_path: Path, index_vault) -> None:
    line = "ß" * 600 + "Needle" + "İ" * 600
    nv = index_vault(make_vault(tmp_path, {"p/a.md": line + "\n"}))
    for query in ("needle", "ssneedlei", "ßNeedleİ"):
        [m] = nv.search(query).matches
        assert m.shortened and len(m.text) == MAX_LINE_CHARS and "Needle" in m.text, query


# --- regex ----------------------------------------------------------------------------------------------


@pytest.fixture
def code(tmp_path: Path, index_vault) -> IndexedVault:
    return index_vault(make_vault(tmp_path, {
        "p/a.md": "# Heading\nTODO(ana): write the plan\nversion v2.1 and v3.10\nends with plan\n  # indented\n",
        "p/b.md": "alpha at the end alpha\nbeta at the start\nalpha\nbeta\n",
        "p/c.txt": "dates 2026-08-14 and 2026-9-1\nnaïve café Ünïcödé\n",
    }))


def test_regex_re2_syntax(code: IndexedVault) -> None:
    assert hits(code.search(r"TODO\(\w+\)", regex=True)) == [("p/a.md", 2)]
    assert hits(code.search(r"v\d+\.\d+", regex=True, all_lines=True)) == [("p/a.md", 3)]
    assert hits(code.search(r"20\d\d-\d\d-\d\d", regex=True)) == [("p/c.txt", 1)]
    assert hits(code.search(r"[[:digit:]]{4}-9", regex=True)) == [("p/c.txt", 1)]
    assert hits(code.search(r"\p{Lu}n\p{L}c", regex=True, case="sensitive")) == [("p/c.txt", 2)]
    assert hits(code.search(r"(?P<word>caf)é", regex=True)) == [("p/c.txt", 2)]
    assert hits(code.search(r"\Qv2.1\E", regex=True)) == [("p/a.md", 3)]
    assert hits(code.search(r"plan|café", regex=True, all_lines=True)) == [
        ("p/a.md", 2), ("p/a.md", 4), ("p/c.txt", 2)]


def test_regex_anchors_are_per_line(code: IndexedVault) -> None:
    assert hits(code.search("^# ", regex=True, all_lines=True)) == [("p/a.md", 1)]
    assert hits(code.search("plan$", regex=True, all_lines=True)) == [("p/a.md", 2), ("p/a.md", 4)]
    assert hits(code.search("^alpha$", regex=True, all_lines=True)) == [("p/b.md", 3)]
    assert hits(code.search("^beta", regex=True, all_lines=True)) == [("p/b.md", 2), ("p/b.md", 4)]
    assert hits(code.search(r"\Aalpha\z", regex=True, all_lines=True)) == [("p/b.md", 3)]
    assert hits(code.search("alpha$", regex=True, all_lines=True)) == [("p/b.md", 1), ("p/b.md", 3)]
    assert hits(code.search("(?-m)^beta$", regex=True, all_lines=True)) == [("p/b.md", 4)]


def test_regex_empty_lines(tmp_path: Path, index_vault) -> None:
    """The final line end closes the last line: no empty line after it, and an empty file has no lines."""
    nv = index_vault(make_vault(tmp_path, {"p/a.md": "a\n\nb\n", "p/b.md": "b\n", "p/c.md": "", "p/d.md": "\n",
                                           "p/e.md": "x\n\n"}))
    expected = [("p/a.md", 2), ("p/d.md", 1), ("p/e.md", 2)]
    assert hits(nv.search("^$", regex=True, all_lines=True)) == expected
    assert hits(nv.search(r"\A\z", regex=True, all_lines=True)) == expected
    assert hits(nv.search("^", regex=True, all_lines=True)) == [
        ("p/a.md", 1), ("p/a.md", 2), ("p/a.md", 3), ("p/b.md", 1), ("p/d.md", 1), ("p/e.md", 1), ("p/e.md", 2)]


def test_regex_never_spans_lines(code: IndexedVault) -> None:
    assert hits(code.search(r"alpha\sbeta", regex=True)) == []
    assert hits(code.search(r"alpha[^x]beta", regex=True)) == []
    assert hits(code.search(r"(?s)end alpha.beta", regex=True)) == []
    assert hits(code.search(r"alpha\s*$", regex=True, all_lines=True)) == [("p/b.md", 1), ("p/b.md", 3)]
    assert hits(code.search(r"(?s)plan.*", regex=True, all_lines=True)) == [("p/a.md", 2), ("p/a.md", 4)]
    with pytest.raises(InvalidArgument, match="query"):
        code.search("alpha\nbeta", regex=True)


def test_regex_match_text_and_columns(code: IndexedVault) -> None:
    [m] = code.search(r"\Cve", regex=True).matches  # \C matches one byte: it may start inside a character
    assert (m.path, m.line, m.text) == ("c.txt", 2, "naïve café Ünïcödé")


@pytest.mark.parametrize("pattern", [r"(?=x)abc", r"(a)\1", "[unclosed", "a{2,1}", "(?<!x)y", "*oops"])
def test_invalid_regex_is_a_clear_error(code: IndexedVault, pattern: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        code.search(pattern, regex=True)
    assert err.value.field == "query" and "RE2" in str(err.value)
    res = run_cli("search", pattern, "--regex", "--vault", str(code.vault), "--db", code.db)
    assert res.exit_code != 0 and "Traceback" not in res.stderr + res.stdout
    assert res.stderr.strip().startswith("error: query:") and len(res.stderr.strip().splitlines()) == 1


def test_hostile_patterns_return_fast(tmp_path: Path, index_vault) -> None:
    nv = index_vault(make_vault(tmp_path, {
        "p/a.txt": "a" * 200_000 + "b\n" + ("x" * 5_000 + "\n") * 20,
        "p/b.md": "aaaa\n",
    }))
    for pattern in [r"(a+)+$", r"(a|aa)+$", r"(x+x+)+y", r"(a*)*b$", r"(.*a){20}$"]:
        started = time.perf_counter()
        result = nv.search(pattern, regex=True, all_lines=True)
        assert time.perf_counter() - started < 2.0, pattern
        assert result.complete, pattern
    assert hits(nv.search(r"(a+)+$", regex=True, all_lines=True)) == [("p/b.md", 1)]


# --- the scan fallback ----------------------------------------------------------------------------------


def test_only_literal_free_regexes_scan(code: IndexedVault) -> None:
    """Short queries and literals ("v3", "é", "a.b") are answered from the index; a regex with no literal
    at all (\\d+) reads every document in scope, and says so."""
    # an empty \Q\E before a quantifier: RE2 reads "(?:zz)+\Q\E?" as "((?:zz)+)?", no literal (a review found a
    # respelling that made it a lazy "+", needing "zz", and missed the lines without it)
    for query, regex in [(r"\d+", True), (r"[a-z]{5}", True), ("^.$", True), (r"(?:zz)+\Q\E?-08", True)]:
        assert code.search(query, regex=regex).scanned, query
    for query, regex in [("pla", False), ("v2.1", False), (r"TODO\(\w+\)", True), (r"(alpha|beta)\b", True),
                         (r"v\d", False), ("v3", False), ("é", False), ("a.b", True), (r"(ab|cd)", True)]:
        assert not code.search(query, regex=regex).scanned, query
    # RE2's own spellings hold literals too (Python's parser, which the plan reads, knows none of them)
    for query, found in [(r"\x{63}af\x{E9}", [("p/c.txt", 2)]), (r"\QTODO(ana)\E", [("p/a.md", 2)]),
                         (r"plan\z", [("p/a.md", 2), ("p/a.md", 4)]), (r"(?<who>ana)\)", [("p/a.md", 2)]),
                         (r"caf\pL", [("p/c.txt", 2)]), (r"[[:alpha:]]lpha\b", [("p/b.md", 1), ("p/b.md", 3)]),
                         (r"\p{Latin}\x{EF}ve", [("p/c.txt", 2)])]:
        result = code.search(query, regex=True, all_lines=True)
        assert not result.scanned and hits(result) == found, query
    res = run_cli("search", r"\x{63}af\x{E9}", "--regex", "--json", "--vault", str(code.vault), "--db", code.db)
    assert json.loads(res.stdout)["scanned"] is False
    assert hits(code.search("v3", all_lines=True)) == [("p/a.md", 3)]
    assert hits(code.search("É", all_lines=True)) == [("p/c.txt", 2)]
    assert hits(code.search(r"\d{4}", regex=True)) == [("p/c.txt", 1)]
    assert hits(code.search(r"(?:zz)+\Q\E?-08", regex=True)) == [("p/c.txt", 1)]
    res = run_cli("search", r"\d{4}", "--regex", "--json", "--vault", str(code.vault), "--db", code.db)
    assert json.loads(res.stdout)["scanned"] is True
    res = run_cli("search", r"\d{4}", "--regex", "--vault", str(code.vault), "--db", code.db)
    assert "scanned" in res.stderr
    res = run_cli("search", "v3", "--json", "--vault", str(code.vault), "--db", code.db)
    assert json.loads(res.stdout)["scanned"] is False


def test_a_scan_stops_at_its_time_budget(code: IndexedVault) -> None:
    hasty = SearchEngine(code.store.documents, scan_budget_s=0.0)
    result = hasty.search(SearchRequest(r"[a-z]", Scope(["p"]), regex=True, all_lines=True, limit=1000))
    assert result.scanned and not result.complete
    assert {m.path for m in result.matches} == {"a.md"}  # it stopped after the first document
    assert code.search(r"[a-z]", regex=True).complete
    last = hasty.search(SearchRequest(r"[a-z]", Scope(["p"], prefix="c.txt"), regex=True))
    assert last.complete and len(last.matches) == 1  # nothing was left to read


def test_plain_text_means_itself(tmp_path: Path, index_vault) -> None:
    """Quotes, brackets, stars, percent signs, backslashes and FTS5 words are text, not syntax."""
    queries = ['say "hello"', "a*b", "x AND y", "NEAR(a b)", "[link](url)", "100%", "_under_", r"C:\path\to",
               "OR NOT", "a.b", "^start", "end$", "(?i)", "{1,2}", "'single'", "--dash", "a|b"]
    nv = index_vault(make_vault(tmp_path, {"p/special.md": "".join(f"x {q} y\n" for q in queries),
                                           "p/decoy.md": "hello a b x y link url 100 under path start end\n"}))
    for number, query in enumerate(queries, start=1):
        assert hits(nv.search(query, all_lines=True)) == [("p/special.md", number)], query


@pytest.mark.parametrize("query", ["common", "rare7", "ab"])  # trigram candidates, a rare one, a scan
@pytest.mark.parametrize("all_lines", [False, True])
def test_candidate_pages_give_the_same_answer(tmp_path: Path, index_vault: Callable[[Path], IndexedVault],
                                              monkeypatch: pytest.MonkeyPatch, query: str, all_lines: bool) -> None:
    """The engine asks the store for candidates page by page; page edges change nothing, at any offset."""
    files = {f"p{n % 2}/d{n:03}.md": "".join(
        f"line {i} common {'rare7 ' if n % 7 == 0 and i == 2 else ''}ab\n" for i in range(3)) for n in range(90)}
    indexed = index_vault(make_vault(tmp_path, files))
    whole = indexed.search(query, all_lines=all_lines, limit=1000)
    monkeypatch.setattr(engine_module, "FIRST_PAGE", 3)
    monkeypatch.setattr(engine_module, "PAGE_GROWTH", 2)
    monkeypatch.setattr(engine_module, "MAX_PAGE", 16)
    for limit in (1, 7, 40):
        collected, offset = [], 0
        while True:
            page = indexed.search(query, all_lines=all_lines, limit=limit, offset=offset)
            collected += page.matches
            offset += len(page.matches)
            if not page.has_more:
                break
        assert collected == whole.matches
    assert whole.matches and all(m.line in (1, 2, 3) for m in whole.matches)


@pytest.mark.parametrize(("in_child", "parent_covered"), [(41, False), (39, True)])
def test_search_brain_names_only_the_brains_its_answer_covers(
        tmp_path: Path, index_vault: Callable[[Path], IndexedVault], in_child: int, parent_covered: bool) -> None:
    """With includeParents, a parent reached after the 40 results are full is asked only whether it matches
    (to say truncated); it was named in `searched` though none of its matches were in the answer."""
    from notewell.access.principal import LOCAL_OWNER

    files: dict[str, str | bytes] = {
        "acme/README.md": "# Acme\n",
        "acme/brains/base/brain.md": "---\ntitle: Base\n---\n# Base\n",
        "acme/brains/base/rule.md": "# Rule\n\nEvery widget ships tested.\n",
        "acme/brains/child/brain.md": "---\ntitle: Child\nparent: brains/base\n---\n# Child\n",
    }
    files |= {f"acme/brains/child/w{n:02}.md": f"# W{n}\n\nwidget {n}\n" for n in range(in_child)}
    indexed = index_vault(make_vault(tmp_path, files))
    got = indexed.runtime.knowledge.search_brain(LOCAL_OWNER, "acme/brains/child", "widget", include_parents=True)
    brains = {hit.brain for hit in got.hits}
    if parent_covered:
        assert got.searched == ["acme/brains/child", "acme/brains/base"] and "acme/brains/base" in brains
        assert not got.truncated
    else:
        assert got.searched == ["acme/brains/child"] and brains == {"acme/brains/child"}
        assert got.truncated and len(got.hits) == 40
