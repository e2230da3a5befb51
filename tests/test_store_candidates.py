"""Both stores find candidates two ways (few trigram matches by id, many by walking the order); both ways
give the same documents, in the same order, page by page. By id, a candidate names its matching regions
(SQLite's walk reads its documents whole). PostgreSQL's index names the regions that hold a literal's
trigrams anywhere; reading their texts for the plan leaves out those whose words lack the literal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from conftest import index_into, make_vault, run_cli
from notewell.records.documents import DocKey, Scope
from notewell.records.plan import Plan
from notewell.search.literals import plain_plan, regex_plan
from notewell.store import matches, regions
from notewell.store.postgres import documents as postgres_documents
from notewell.store.postgres.trigram_words import index_sql
from notewell.store.sqlite import documents as sqlite_documents
from notewell.store.sqlite import match_walk


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_few_and_many_matches_give_the_same_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  request: pytest.FixtureRequest, backend: str) -> None:
    files = {f"{project}/{folder}/n{n:02}.md": f"note {n}\n{'needle ' if n % 3 else ''}text {n % 5}\n"
             for project in ("alpha", "beta") for folder in ("a", "b") for n in range(12)}
    files["alpha/a/long.md"] = "note\n" + "filler line\n" * 40 + "needle text 4\n" + "filler\n" * 40 + "needle\n"
    monkeypatch.setattr(regions, "REGION_BYTES", 64)  # the long note in several regions
    db = tmp_path / "index.db" if backend == "sqlite" else request.getfixturevalue("pg_url")
    indexed = index_into(make_vault(tmp_path, files), db)
    documents = indexed.store.documents
    scope = Scope(projects=["alpha", "beta"], prefix="")
    plans = [plain_plan("needle"), plain_plan("note"), plain_plan("text 4"), regex_plan(r"needle|zzz"), None]

    named: dict[str, tuple[int, ...] | None] = {}

    def pages(plan: object) -> list[list[str]]:
        out, after = [], None
        while True:
            page = documents.candidates(scope, plan, after=after, limit=5)  # type: ignore[arg-type]
            out.append([f"{c.project}/{c.path}" for c in page])
            named.update({c.path: c.regions for c in page if c.path == "a/long.md"})
            if len(page) < 5:
                return out
            after = (page[-1].project, page[-1].path)

    by_id = [pages(plan) for plan in plans[:1]]
    regions_by_id = named["a/long.md"]
    by_id += [pages(plan) for plan in plans[1:]]
    monkeypatch.setattr(sqlite_documents if backend == "sqlite" else postgres_documents, "FEW_MATCHES", 0)
    assert [pages(plan) for plan in plans] == by_id  # every plan walks the order now
    # a walk that gives way collects the matches; and one that never does
    if backend == "postgres":
        monkeypatch.setattr(postgres_documents, "WALK_FACTOR", 1)
    else:
        monkeypatch.setattr(match_walk, "WALK_BATCHES", 0)
    assert [pages(plan) for plan in plans] == by_id
    monkeypatch.setattr(sqlite_documents if backend == "sqlite" else postgres_documents, "MANY_MATCHES", 0)
    assert [pages(plan) for plan in plans] == by_id
    assert sum(len(p) for p in by_id[0]) == 33 and sum(len(p) for p in by_id[4]) == 49
    assert regions_by_id is not None and len(regions_by_id) == 2  # two of the long note's regions hold "needle"
    indexed.runtime.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_search_pages_through_the_matches_of_its_first_page(tmp_path: Path, request: pytest.FixtureRequest,
                                                              backend: str) -> None:
    """The matches are looked up once per search (its plan object and scope): a later page answers from
    the first page's moment; the same plan's first page again, or another scope, looks them up again."""
    files = {f"p/n{n:02}.md": f"a needle {n}\n" for n in range(6)} | {"q/n.md": "needle\n"}
    db = tmp_path / "index.db" if backend == "sqlite" else request.getfixturevalue("pg_url")
    indexed = index_into(make_vault(tmp_path, files), db)
    documents, plan = indexed.store.documents, plain_plan("needle")
    scope = Scope(projects=["p"])
    first = documents.candidates(scope, plan, limit=3)
    assert [c.path for c in first] == ["n00.md", "n01.md", "n02.md"]
    (tmp_path / "vault" / "p" / "n02a.md").write_text("needle too\n")  # a match added between two pages
    indexed.runtime.indexing.sync()
    after = (first[-1].project, first[-1].path)
    assert [c.path for c in documents.candidates(scope, plan, after=after, limit=10)] == ["n03.md", "n04.md", "n05.md"]
    assert [c.path for c in documents.candidates(Scope(projects=["p", "q"]), plan, after=after, limit=10)] == [
        "n02a.md", "n03.md", "n04.md", "n05.md", "n.md"]  # another scope: looked up again
    again = documents.candidates(scope, plan, limit=3)
    assert [c.path for c in documents.candidates(scope, plan, after=(again[-1].project, again[-1].path),
                                                 limit=10)] == ["n02a.md", "n03.md", "n04.md", "n05.md"]
    indexed.runtime.close()


@pytest.mark.parametrize("untested", [0, 1, 2])
def test_postgres_reads_only_the_named_regions_whose_words_hold_the_literal_unless_few(
        tmp_path: Path, pg_url: str, untested: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regions the index names are read only when their words hold the literal, unless it named at most
    ``UNTESTED_REGIONS`` in all: those are read without the test. The answer is the same either way."""
    monkeypatch.setattr(matches, "UNTESTED_REGIONS", untested)
    files = {"p/needle.md": "a needle here\n", "p/near.md": "we need a medley, idle\n", "p/other.md": "nothing\n"}
    indexed = index_into(make_vault(tmp_path, files), pg_url)
    documents = indexed.store.documents
    plan = plain_plan("needle")
    page = documents.candidates(Scope(projects=["p"], prefix=""), plan, limit=10)
    assert [c.path for c in page] == ["near.md", "needle.md"]  # "need medley idle" holds every trigram of it
    assert all(c.skip_words_test == (untested >= 2) for c in page)
    read = {doc_id for doc_id, _, _ in documents.texts(page, plan)}
    assert read == {c.id for c in page if c.path == "needle.md" or untested >= 2}
    assert {doc_id for doc_id, _, _ in documents.texts(page)} == {c.id for c in page}
    assert [m.path for m in indexed.search("needle").matches] == ["needle.md"]
    indexed.runtime.close()


def test_postgres_reads_a_walks_regions_without_testing_their_words_again(tmp_path: Path, pg_url: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk names only the regions whose words passed the plan's test; reading them skips the test and
    gives exactly the regions the test would keep. Regions the index named are still tested."""
    files = {f"p/n{n:02}.md": f"note {n}\n{'a needle' if n % 3 else 'we need a medley, idle'} {n}\n" for n in range(9)}
    monkeypatch.setattr(regions, "REGION_BYTES", 8)  # each note in several regions, one of them with the literal
    monkeypatch.setattr(matches, "UNTESTED_REGIONS", 0)
    indexed = index_into(make_vault(tmp_path, files), pg_url)
    documents = indexed.store.documents
    scope, plan = Scope(projects=["p"]), plain_plan("needle")
    by_index = documents.candidates(scope, plan, limit=20)
    assert not any(c.skip_words_test for c in by_index) and len(by_index) == 9  # "need medley idle" too
    monkeypatch.setattr(postgres_documents, "FEW_MATCHES", 0)
    walked = documents.candidates(scope, plan, limit=20)
    assert all(c.skip_words_test for c in walked) and len(walked) == 6
    retested = [c._replace(skip_words_test=False) for c in walked]
    read = list(documents.texts(walked, plan))
    assert read == list(documents.texts(retested, plan)) == list(documents.texts(by_index, plan))
    assert len(read) == 6 and all(b"needle" in text for _, _, text in read)
    indexed.runtime.close()


def test_postgres_walks_at_once_for_a_literal_its_statistics_call_common(tmp_path: Path, pg_url: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once ANALYZE has counted the regions' terms, a literal held by more than FEW_MATCHES regions walks
    the order without asking the index (whose bitmap reads every posting list); a rare one, a literal
    unknown to the statistics and a store never analyzed ask the index. The pages are the same either way."""
    files = {f"p/n{n:02}.md": f"the note {n}\n{'needle' if n % 4 == 0 else 'hay'} {n}\n" for n in range(40)}
    indexed = index_into(make_vault(tmp_path, dict(files)), pg_url)
    documents = indexed.store.documents
    assert isinstance(documents, postgres_documents.PostgresDocuments)
    scope = Scope(projects=["p"])
    plans = {text: plain_plan(text) for text in ("note", "the", "needle", "zq")}

    def pages() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for text, plan in plans.items():
            found, after = [], None
            while page := documents.candidates(scope, plan, after=after, limit=7):
                found += [c.path for c in page]
                after = (page[-1].project, page[-1].path)
            out[text] = found
        return out

    asked: list[str] = []
    ask_index = documents._matched

    def counted(conn: psycopg.Connection, plan: Plan, scope: Scope, where: str, params: list[Any],
                after: DocKey | None, most: int) -> object:
        if after is None:  # a later page answers from what its first page kept, asking nothing
            asked.append(plan.text)  # type: ignore[union-attr]
        return ask_index(conn, plan, scope, where, params, after, most)

    monkeypatch.setattr(postgres_documents, "FEW_MATCHES", 20)
    monkeypatch.setattr(postgres_documents, "SHARES_KEPT_S", -1.0)  # read the statistics at every search
    monkeypatch.setattr(documents, "_matched", counted)
    before = pages()
    assert set(asked) == set(plans)  # never analyzed: every literal asks the index
    with documents.db.connection() as conn:
        assert documents.term_shares(conn) is None
        conn.execute("ANALYZE document_regions")
        shares = documents.term_shares(conn)
    assert shares is not None and shares.regions == 40
    assert {text: round(shares.regions_holding(plan)) for text, plan in plans.items() if plan} == {
        "note": 40, "the": 40, "needle": 10, "zq": 0}
    asked.clear()
    assert pages() == before
    assert sorted(set(asked)) == ["needle", "zq"]
    assert before["note"] == [f"n{n:02}.md" for n in range(40)]
    assert before["needle"] == [f"n{n:02}.md" for n in range(0, 40, 4)] and before["zq"] == []
    indexed.runtime.close()


def test_postgres_candidate_lookups_use_the_trigram_index(tmp_path: Path, pg_url: str) -> None:
    """The index compares trigrams under COLLATE "C": a condition without it would make every lookup
    compute every region's trigrams (a sequential scan), with the same answers, only slower. A run of one
    or two letters asks the grams index (and the regions whose grams are not filled in yet)."""
    indexed = index_into(make_vault(tmp_path, {"p/a.md": "def on_callback(x):\n"}), pg_url)
    plans = {"document_regions_trigrams": [plain_plan("callback"), regex_plan(r"def \w+_callback\("),
                                           regex_plan(r"needle|callback")],
             "document_regions_grams": [plain_plan("ca"), plain_plan("x"), regex_plan(r"on|de")]}
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")  # a disabled scan still shows when the index cannot serve
        for index, index_plans in plans.items():
            for plan in index_plans:
                assert plan is not None
                match, params = index_sql(plan, "r.words", "r.grams")
                shown = "\n".join(row[0] for row in conn.execute(
                    f"EXPLAIN SELECT r.id FROM document_regions r WHERE {match}", params))
                assert f"Bitmap Index Scan on {index}" in shown and "Seq Scan" not in shown, shown
    indexed.runtime.close()


def test_sqlite_asks_fts5_for_the_scopes_range_of_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scope of a few projects asks FTS5 only for the region ids between its first and last document;
    a document added later lies past the others, and a scope of many projects asks for every id."""
    files = {f"{project}/n{n}.md": f"needle {project} {n}\n"
             for project in ("alpha", "beta", "gamma") for n in range(3)}
    indexed = index_into(make_vault(tmp_path, files), tmp_path / "index.db")
    (indexed.vault / "alpha" / "late.md").write_text("a late needle\n", encoding="utf-8")
    indexed.sync()

    def found(projects: list[str]) -> set[str]:
        return {f"{m.project}/{m.path}" for m in indexed.search("needle", projects=projects).matches}

    def expected(projects: list[str]) -> set[str]:
        return {path for path in [*files, "alpha/late.md"] if path.split("/")[0] in projects}

    scopes = [["alpha"], ["beta"], ["alpha", "gamma"], ["beta", "gamma"], ["nothing"], ["alpha", "beta", "gamma"]]
    assert [found(s) for s in scopes] == [expected(s) for s in scopes]
    conn = indexed.store.documents.db.conn  # type: ignore[attr-defined]
    ids = dict(conn.execute("SELECT project || '/' || path, id FROM documents"))
    first, last = sqlite_documents._region_range(conn, Scope(projects=["beta"]))
    assert (first, last) == (regions.id_range(ids["beta/n0.md"])[0], regions.id_range(ids["beta/n2.md"])[1])
    first, last = sqlite_documents._region_range(conn, Scope(projects=["alpha"]))
    assert regions.id_range(ids["gamma/n0.md"])[0] < last  # alpha's late note lies past gamma's
    monkeypatch.setattr(sqlite_documents, "RANGE_PROJECTS", 1)
    every_id = (0, sqlite_documents.MAX_REGION_ID)
    assert sqlite_documents._region_range(conn, Scope(projects=["alpha", "beta"])) == every_id
    assert [found(s) for s in scopes] == [expected(s) for s in scopes]
    indexed.runtime.close()


def test_postgres_names_only_the_regions_holding_two_wide_characters_together(tmp_path: Path, pg_url: str) -> None:
    """A word of two characters beyond ASCII is asked of the index as their pair: the regions where 中 stands
    before another Chinese character and 文 stands elsewhere are not named (they were: a spelled character's
    trigrams never span the next one), and the named regions are read without their words tested again."""
    files = {"p/a.md": "这是中文。\n", "p/b.md": "中国 文化\n", "p/c.md": "文中\n", "p/d.md": "English only\n"}
    indexed = index_into(make_vault(tmp_path, files), pg_url)
    documents = indexed.store.documents
    plan = plain_plan("中文")
    assert plan is not None
    page = documents.candidates(Scope(projects=["p"]), plan, limit=10)
    assert [c.path for c in page] == ["a.md"] and all(c.skip_words_test for c in page)
    assert [m.path for m in indexed.search("中文").matches] == ["a.md"]
    assert [m.path for m in indexed.search("文").matches] == ["a.md", "b.md", "c.md"]
    indexed.runtime.close()


def test_postgres_fills_in_the_wide_pairs_of_regions_an_older_version_wrote(tmp_path: Path, pg_url: str) -> None:
    """Regions written before the grams held pairs of characters beyond ASCII: the upgrade empties the grams
    of every region holding such a character, and opening the store fills them in again, so a search for
    "中文" still finds them (with grams lacking the pair, the index would name none)."""
    files = {"p/a.md": "这是中文。\n", "p/b.md": "plain\n"}
    indexed = index_into(make_vault(tmp_path, files), pg_url)
    indexed.runtime.close()
    step = len(postgres_documents.MIGRATIONS)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the version before wrote them
        conn.execute("UPDATE document_regions SET grams = ARRAY(SELECT g FROM unnest(grams) g WHERE length(g) <= 2)")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'documents' AND version = %s", (step,))
    reopened = index_into(make_vault(tmp_path, files), pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        missing = conn.execute("SELECT count(*) FROM document_regions WHERE grams IS NULL").fetchone()
        pairs = conn.execute("SELECT count(*) FROM document_regions"  # a spelled pair: 12 letters and digits
                             " WHERE EXISTS (SELECT 1 FROM unnest(grams) g WHERE length(g) = 12)").fetchone()
    assert missing == (0,) and pairs == (1,)
    assert [m.path for m in reopened.search("中文").matches] == ["a.md"]
    reopened.runtime.close()


def test_repair_fills_in_the_wide_pairs_an_older_writer_left_out(tmp_path: Path, pg_url: str) -> None:
    """A writer of the version before the pairs, left running after the upgrade, writes a region's grams
    without them (not NULL, so opening the store fills nothing in): a search for "中文" misses the document
    until ``notewell repair`` writes the grams of every region holding such a character again."""
    files = {"p/a.md": "这是中文。\n", "p/b.md": "plain\n"}
    vault = make_vault(tmp_path, files)
    index_into(vault, pg_url).runtime.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as an older writer indexes a.md after the upgrade
        conn.execute("UPDATE document_regions SET grams = ARRAY(SELECT g FROM unnest(grams) g WHERE length(g) <= 2)")
    missed = index_into(vault, pg_url)
    assert [m.path for m in missed.search("中文").matches] == []
    missed.runtime.close()
    repaired = run_cli("repair", "--db", pg_url, "--vault", str(vault), "--json")
    assert repaired.exit_code == 0 and '"document_regions"' in repaired.output, repaired.output
    found = index_into(vault, pg_url)
    assert [m.path for m in found.search("中文").matches] == ["a.md"]
    found.runtime.close()
