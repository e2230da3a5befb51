"""The store contract, on SQLite and PostgreSQL alike: same listings, same brains, same search results.

Two kinds of test live here. Comparisons index one vault into both backends and require the very same
answers for many queries (plain, smart case, case-sensitive, regex, scans) and listings. Behaviour
tests take ``store_url`` and run once per backend with the same expectations (sync: add, change,
delete, rename; scopes; text kept byte for byte).
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import NORTHWIND, IndexedVault, make_vault
from notewell.errors import ConfigError
from notewell.indexer import sync
from notewell.records.documents import Scope
from notewell.runtime import open_runtime
from notewell.search.engine import SearchRequest, SearchResult
from notewell.store import open_store
from pg import PgCluster


def open_indexed(vault: Path, db: str) -> IndexedVault:
    rt = open_runtime(str(vault), db)
    return IndexedVault(rt, sync(rt.settings, rt.store))


@dataclass
class Pair:
    """One vault indexed into both backends."""

    sqlite: IndexedVault
    postgres: IndexedVault

    def both(self) -> tuple[IndexedVault, IndexedVault]:
        return self.sqlite, self.postgres


def _pair(vault: Path, tmp: Path, cluster: PgCluster) -> Pair:
    """Both stores over ``vault``, its files dated back first: a file modified in the last 2 seconds is
    stored one nanosecond early (indexer.RACY_WINDOW_NS), so a slow first sync would set the two apart."""
    then = time.time_ns() - 3600 * 1_000_000_000
    for path in vault.rglob("*"):
        if path.is_file() and not path.is_symlink() and vault != NORTHWIND:
            os.utime(path, ns=(then, then))
    return Pair(open_indexed(vault, str(tmp / "index.db")), open_indexed(vault, cluster.url(cluster.create_database())))


def answer(result: SearchResult) -> tuple[object, ...]:
    """What a caller sees of a search (the candidate count is a diagnostic and may differ by backend)."""
    return ([(m.project, m.path, m.line, m.text, m.shortened) for m in result.matches],
            result.has_more, result.scanned, result.complete, result.offset)


def assert_same_listings(pair: Pair) -> None:
    lite, pg = pair.sqlite.store.documents, pair.postgres.store.documents
    assert lite.vault_projects() == pg.vault_projects()
    assert {k: (s.size, s.mtime_ns, s.sha256) for k, s in lite.state().items()} == {
        k: (s.size, s.mtime_ns, s.sha256) for k, s in pg.state().items()}
    for project in lite.vault_projects():
        assert lite.metas(project) == pg.metas(project)
        for meta in lite.metas(project):
            assert lite.get(project, meta.path) == pg.get(project, meta.path)
            assert lite.meta(project, meta.path) == pg.meta(project, meta.path)
            folder = meta.path.rpartition("/")[0]
            if folder:
                assert lite.metas(project, folder) == pg.metas(project, folder)
    assert lite.brains() == pg.brains()
    for project in lite.vault_projects():
        assert lite.brains(project) == pg.brains(project)
        paths = [*(m.path for m in lite.metas(project)[::2]), "nope.md"]
        assert lite.metas_at(project, paths) == pg.metas_at(project, paths)
    for b in lite.brains():  # one brain, the brains inside its folder, those naming it their parent: as alike
        assert lite.brain(b.project, b.folder) == pg.brain(b.project, b.folder) == b
        assert lite.brain_heads_below(b.project, b.folder) == pg.brain_heads_below(b.project, b.folder)
        assert lite.brain_heads_with_parent(b.id) == pg.brain_heads_with_parent(b.id)
        assert lite.brain_heads_at(b.project, ["", b.folder]) == pg.brain_heads_at(b.project, ["", b.folder])
    assert lite.skipped() == pg.skipped()
    for reason in {s.reason for s in lite.skipped()} | {"broken symlink"}:  # one reason's records alone, as alike
        assert lite.skipped(reason) == pg.skipped(reason) == [s for s in lite.skipped() if s.reason == reason]
    assert lite.sizes()[:2] == pg.sizes()[:2]
    assert lite.get("nope", "nope.md") is None and pg.get("nope", "nope.md") is None


def words_of(indexed: IndexedVault, count: int, seed: int) -> list[str]:
    """``count`` words and word pieces from the indexed documents, chosen by a fixed seed."""
    rng = random.Random(seed)
    docs = indexed.store.documents
    words = sorted({w for p in docs.vault_projects() for m in docs.metas(p)
                    for w in (docs.get(p, m.path).text.split()) if len(w) >= 3})  # type: ignore[union-attr]
    picked = rng.sample(words, min(count, len(words)))
    return [w[rng.randrange(0, max(1, len(w) - 3)):] if rng.random() < 0.3 else w for w in picked]


def queries_for(words: list[str], seed: int) -> list[dict[str, object]]:
    """Plain, smart-case, case-sensitive and regex searches built from ``words``."""
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for w in words:
        out.append({"query": w})
        out.append({"query": w.upper(), "case": "smart"})
        out.append({"query": w.capitalize(), "case": "sensitive"})
        out.append({"query": re.escape(w[:4]) + r"\w*", "regex": True})
        other = rng.choice(words)
        out.append({"query": f"(?:{re.escape(w)}|{re.escape(other)})", "regex": True, "case": "smart"})
        out.append({"query": f"{re.escape(w[:3])}.*{re.escape(other[-3:])}", "regex": True})
    return out


SPECIAL_QUERIES: list[dict[str, object]] = [
    {"query": "a"}, {"query": "th"}, {"query": "%"}, {"query": "_"}, {"query": "\\"}, {"query": "100%"},
    {"query": "a_b"}, {"query": "50%_off"}, {"query": "C:\\temp"}, {"query": "the"},
    {"query": "the", "all_lines": True}, {"query": "the", "limit": 3, "offset": 2},
    {"query": "the", "all_lines": True, "limit": 7, "offset": 11},
    {"query": r"\d{4}-\d{2}-\d{2}", "regex": True, "all_lines": True},
    {"query": r"^#", "regex": True}, {"query": r"[A-Z]{3,}", "regex": True, "case": "sensitive"},
    {"query": r"fee|rate", "regex": True, "all_lines": True}, {"query": "(?i)PRICING", "regex": True},
    {"query": ".", "regex": True, "limit": 50}, {"query": "Straße"}, {"query": "STRASSE", "case": "smart"},
    {"query": "İstanbul"}, {"query": "ΣΟΦΙΑ"}, {"query": "σοφια", "case": "sensitive"}, {"query": "naïve"},
    {"query": "日本語"}, {"query": "emoji 🎉"}, {"query": "nul\x00byte"}, {"query": "%_\\"},
    {"query": r"a\\b", "regex": True}, {"query": r"50%", "regex": True}, {"query": "x_y_z"},
]


# --- comparisons: one vault, both backends ---------------------------------------------------------


def generated_files(seed: int = 7, count: int = 60) -> dict[str, str | bytes]:
    """A vault with awkward text: Unicode case folding, LIKE's special characters, CRLF, NUL, long lines."""
    rng = random.Random(seed)
    vocab = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
             "Straße", "STRASSE", "straße", "İstanbul", "ΣΟΦΙΑ", "σοφια", "σοφιας", "naïve", "NAÏVE", "日本語",
             "テキスト", "emoji", "🎉", "100%", "50%_off", "a_b", "x_y_z", "C:\\temp", "a\\b", "%_\\", "ſ", "K", "ǅ",
             "ﬁle", "ﬃ"]
    files: dict[str, str | bytes] = {}
    for i in range(count):
        project = rng.choice(["alpha", "beta", "gamma-team", "Zeta", "émile"])
        folder = rng.choice(["", "notes/", "notes/sub/", "notes-archive/", "notes0/", "decisions/"])
        ext = rng.choice([".md", ".md", ".txt", ".csv"])
        lines = [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 14))) for _ in range(rng.randint(1, 40))]
        if i % 9 == 0:
            lines.append("x" * 900 + " needle-in-a-long-line " + "y" * 900)
        text = ("# Title " + str(i) + "\n") + "\n".join(lines) + "\n"
        if i % 7 == 0:
            text = text.replace("\n", "\r\n")
        files[f"{project}/{folder}doc-{i:03d}{ext}"] = text
    files["alpha/nul.md"] = "# NUL\n" + "pad\n" * 3000 + "nul\x00byte here\n"  # NUL after the binary sniff
    files["alpha/bin.md"] = b"\x00\x01binary"
    files["beta/bad-utf8.txt"] = b"caf\xe9 latin-1 text\n"
    files["beta/notes/brain.md"] = "# Beta notes\nThe beta brain.\n\n- [Doc](doc-001.md)\n"
    files["beta/notes/sub/brain.md"] = "# Sub\nA sub brain.\n"
    files["root.md"] = "a file at the root of the vault\n"
    return files


@pytest.fixture(scope="module")
def northwind_pair(tmp_path_factory: pytest.TempPathFactory, pg_cluster: PgCluster) -> Iterator[Pair]:
    pair = _pair(NORTHWIND, tmp_path_factory.mktemp("nw-contract"), pg_cluster)
    yield pair
    for side in pair.both():
        side.runtime.close()


@pytest.fixture(scope="module")
def generated_pair(tmp_path_factory: pytest.TempPathFactory, pg_cluster: PgCluster) -> Iterator[Pair]:
    tmp = tmp_path_factory.mktemp("gen-contract")
    pair = _pair(make_vault(tmp, generated_files()), tmp, pg_cluster)
    yield pair
    for side in pair.both():
        side.runtime.close()


def test_northwind_listings_brains_skipped_are_identical(northwind_pair: Pair) -> None:
    assert northwind_pair.sqlite.store.documents.brains()  # the example vault has brains to compare
    assert_same_listings(northwind_pair)


def test_generated_listings_brains_skipped_are_identical(generated_pair: Pair) -> None:
    assert {s.reason for s in generated_pair.sqlite.store.documents.skipped()} == {"binary file"}
    assert_same_listings(generated_pair)


def _compare(pair: Pair, queries: list[dict[str, object]]) -> int:
    nonempty = 0
    for q in queries:
        kw = {"limit": 1000, **q}
        lite = pair.sqlite.search(**kw)  # type: ignore[arg-type]
        pg = pair.postgres.search(**kw)  # type: ignore[arg-type]
        assert answer(lite) == answer(pg), q
        for side in (lite, pg):  # both indexes may let through more documents than match, never fewer
            assert side.candidates >= len({(m.project, m.path) for m in side.matches}), q
        nonempty += bool(lite.matches)
    return nonempty


def test_northwind_searches_are_identical(northwind_pair: Pair) -> None:
    queries = queries_for(words_of(northwind_pair.sqlite, 40, seed=1), seed=2) + SPECIAL_QUERIES
    assert _compare(northwind_pair, queries) > len(queries) // 2


def test_generated_searches_are_identical(generated_pair: Pair) -> None:
    queries = queries_for(words_of(generated_pair.sqlite, 30, seed=3), seed=4) + SPECIAL_QUERIES
    assert _compare(generated_pair, queries) > len(queries) // 2
    found = generated_pair.postgres.search("nul\x00byte")
    assert [(m.path, m.line) for m in found.matches] == [("nul.md", 3002)]


def test_scoped_searches_are_identical(generated_pair: Pair) -> None:
    for query in ("alpha", "straße", "needle", "%", "日本"):
        for scope in (
            {"projects": ["beta"]}, {"projects": ["alpha", "Zeta"], "prefix": "notes"},
            {"projects": ["beta"], "prefix": "notes/sub"}, {"projects": ["émile"], "file_types": [".txt", ".CSV"]},
            {"projects": []}, {"projects": ["gamma-team"], "prefix": "notes/sub/doc-001.md"},
        ):
            lite = pair_search(generated_pair.sqlite, query, **scope)
            pg = pair_search(generated_pair.postgres, query, **scope)
            assert answer(lite) == answer(pg), (query, scope)


def pair_search(indexed: IndexedVault, query: str, **scope: object) -> SearchResult:
    return indexed.search(query, all_lines=True, **scope)  # type: ignore[arg-type]


def test_candidates_with_excluded_folders_are_identical(generated_pair: Pair) -> None:
    from notewell.search.literals import plain_plan

    scope = Scope(projects=["alpha", "beta"], prefix="notes", exclude_prefixes=("notes/sub",))
    for plan in (None, plain_plan("alpha"), plain_plan("50%_off")):
        lite = generated_pair.sqlite.store.documents.candidates(scope, plan)
        pg = generated_pair.postgres.store.documents.candidates(scope, plan)
        assert [(c.project, c.path) for c in lite] == [(c.project, c.path) for c in pg]


# --- behaviour: each test runs once per backend ------------------------------------------------------


def hits(indexed: IndexedVault, query: str) -> list[tuple[str, int]]:
    return [(m.vault_path, m.line) for m in indexed.search(query, all_lines=True).matches]


def test_sync_add_change_delete_rename(tmp_path: Path, store_url: str) -> None:
    vault = make_vault(tmp_path, {"p/a.md": "# A\nalpha apple\n", "p/b.md": "# B\nbravo banana\n",
                                  "q/c.txt": "charlie cherry\n"})
    nv = open_indexed(vault, store_url)
    try:
        assert (nv.report.added, nv.report.changed, nv.report.removed) == (3, 0, 0)
        assert hits(nv, "banana") == [("p/b.md", 2)]
        (vault / "p/b.md").write_text("# B\nbravo blueberry, longer now\n")
        r = nv.sync()
        assert (r.added, r.changed, r.removed, r.renamed) == (0, 1, 0, 0)
        assert hits(nv, "banana") == [] and hits(nv, "blueberry") == [("p/b.md", 2)]
        (vault / "p/a.md").unlink()
        r = nv.sync()
        assert (r.added, r.changed, r.removed, r.renamed) == (0, 0, 1, 0)
        assert hits(nv, "apple") == []
        (vault / "q/c.txt").rename(vault / "p/moved.txt")
        r = nv.sync()
        assert (r.added, r.changed, r.removed, r.renamed) == (0, 0, 0, 1)
        assert hits(nv, "cherry") == [("p/moved.txt", 1)]
        assert nv.store.documents.vault_projects() == ["p", "q"]
        r = nv.sync()
        assert not r.did_work
    finally:
        nv.runtime.close()


def test_a_partial_prefix_is_a_range_of_characters_with_no_wildcard(tmp_path: Path, store_url: str) -> None:
    """Scope.prefix_partial (XMemo's path_filter, issue 22, item 16): every path that starts with the prefix's
    characters, case counting, _ and % meaning themselves (a range of code points, never LIKE), on both backends;
    a last character at the top of a range (U+D7FF, U+10FFFF) still bounds every continuation."""
    names = ["a_b.md", "aXb.md", "a%b.md", "a%%.md", "Ab.md", "ab/c.md", "abc.md", "b.md", "\ud7ffz.md",
             "\U0010ffffz.md"]
    vault = make_vault(tmp_path, {f"p/docs/{name}": "the needle is here\n" for name in names})
    nv = open_indexed(vault, store_url)

    def found(prefix: str) -> list[str]:
        scope = Scope(projects=["p"], prefix=prefix, prefix_partial=True)
        return [m.path for m in nv.engine.search(SearchRequest(query="needle", scope=scope)).matches]

    try:
        assert found("docs/a_") == ["docs/a_b.md"]
        assert found("docs/a%") == ["docs/a%%.md", "docs/a%b.md"]
        assert found("docs/ab") == ["docs/ab/c.md", "docs/abc.md"]  # not Ab.md
        assert found("docs/A") == ["docs/Ab.md"]
        assert found("docs/\ud7ff") == ["docs/\ud7ffz.md"] and found("docs/\U0010ffff") == ["docs/\U0010ffffz.md"]
        assert len(found("do")) == len(names) and found("docs/c") == []
    finally:
        nv.runtime.close()


def test_text_is_kept_byte_for_byte(tmp_path: Path, store_url: str) -> None:
    text = "# T\r\nnul\x00inside ß İ 🎉\r\n\ttabs and trailing space \n" + "z" * 70_000 + "\n"
    vault = make_vault(tmp_path, {"p/t.md": "x" * 9000 + text, "p/bad.txt": b"caf\xe9\n"})
    nv = open_indexed(vault, store_url)
    try:
        doc = nv.store.documents.get("p", "t.md")
        assert doc is not None and doc.text == "x" * 9000 + text
        bad = nv.store.documents.get("p", "bad.txt")
        assert bad is not None and bad.text == "caf\ufffd\n" and bad.meta.note
        assert hits(nv, "NUL\x00İNSIDE") == [("p/t.md", 2)]
        assert hits(nv, "inside ss i 🎉") == [("p/t.md", 2)]
        assert hits(nv, "zzzzzzzzzz") == [("p/t.md", 4)]
    finally:
        nv.runtime.close()


def test_reads_inside_the_writer_see_its_writes(store_url: str) -> None:
    from notewell.records.documents import DocumentInput

    store = open_store(store_url)
    try:
        with store.documents.writer() as w:
            w.upsert(DocumentInput("p", "a.md", "A", "", 3, 1, "sha", "abc"))
            assert store.documents.meta("p", "a.md") is not None
            got = store.documents.get("p", "a.md")  # its text too, however the writer holds it
            assert got is not None and got.text == "abc"
            w.upsert(DocumentInput("p", "b.md", "B", "", 3, 1, "sha", "xyz"))
            w.upsert(DocumentInput("p", "b.md", "B", "", 4, 2, "sha", "xyzw"))  # twice in one sync
            w.set_projects(["p"])
            assert store.documents.vault_projects() == ["p"]
        twice = store.documents.get("p", "b.md")
        assert twice is not None and twice.text == "xyzw"
        with pytest.raises(RuntimeError), store.documents.writer() as w:
            w.delete(("p", "a.md"))
            raise RuntimeError("roll back")
        assert store.documents.meta("p", "a.md") is not None
    finally:
        store.close()


def test_reopening_migrates_nothing_twice(store_url: str) -> None:
    for _ in range(2):
        store = open_store(store_url)
        assert store.documents.sizes()[0] == 0
        store.close()


# --- PostgreSQL only ---------------------------------------------------------------------------------


def test_servers_starting_at_once_migrate_safely(pg_url: str) -> None:
    errors: list[BaseException] = []
    opened = []

    def start() -> None:
        try:
            opened.append(open_store(pg_url))
        except BaseException as exc:  # collected and re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for store in opened:
        store.close()
    assert not errors and len(opened) == 4


def test_bad_postgres_url_is_a_clear_config_error(pg_cluster: PgCluster) -> None:
    with pytest.raises(ConfigError, match="cannot connect") as exc:
        open_store(f"postgresql://nobody:secret@/nowhere?host={pg_cluster.root}&port={pg_cluster.port}")
    assert "secret" not in str(exc.value)
    with pytest.raises(ConfigError, match="cannot connect") as exc:  # a password given as a parameter alike
        open_store(f"postgresql://nobody@/nowhere?host={pg_cluster.root}&port={pg_cluster.port}&password=Hunter2")
    assert "Hunter2" not in str(exc.value) and "password=***" in str(exc.value)


def test_store_url_hides_the_password(pg_cluster: PgCluster, pg_url: str) -> None:
    store = open_store(pg_url.replace("postgres@", "postgres:hunter2@"))
    try:
        assert "hunter2" not in store.url and "***" in store.url
    finally:
        store.close()


def test_two_indexers_at_once_take_turns(tmp_path: Path, pg_url: str) -> None:
    vault = make_vault(tmp_path, {f"p/doc-{i}.md": f"# Doc {i}\nshared words {i}\n" for i in range(40)})
    reports, errors = [], []

    def index() -> None:
        try:
            nv = open_indexed(vault, pg_url)
            reports.append(nv.report)
            nv.runtime.close()
        except BaseException as exc:  # collected and re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=index) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sum(r.added for r in reports) >= 40
    nv = open_indexed(vault, pg_url)
    try:
        assert not nv.report.did_work and len(hits(nv, "shared words")) == 40
    finally:
        nv.runtime.close()


def test_a_dropped_connection_is_replaced_not_failed(pg_cluster: PgCluster, pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        assert store.documents.sizes()[0] == 0
        dbname = pg_url.split("/")[3].split("?")[0]
        with pg_cluster.admin() as admin:  # as a database restart or failover would
            admin.execute("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = %s",
                          (dbname,))  # returns once they are gone: the pool's connections are dead, not dying
        assert store.documents.sizes()[0] == 0
    finally:
        store.close()


def test_state_under_some_paths_is_the_same_part_of_the_whole(generated_pair: Pair) -> None:
    """What a watcher's sync reads: the documents at or below some (project, path) pairs, on both stores."""
    under = [("Zeta", "decisions"), ("Zeta", "doc-006.md"), ("alpha", ""), ("Zeta", "notes/sub/doc-026.txt"),
             ("Zeta", "notes-arch")]

    def inside(key: tuple[str, str]) -> bool:
        return any(key[0] == project and (not path or key[1] == path or key[1].startswith(path + "/"))
                   for project, path in under)

    for side in generated_pair.both():
        whole = side.store.documents.state()
        part = side.store.documents.state(under=under)
        assert part == {key: st for key, st in whole.items() if inside(key)}
        assert ("Zeta", "decisions/doc-005.md") in part and ("Zeta", "notes-archive/doc-031.md") not in part


def test_a_database_not_encoded_in_utf8_is_refused_with_the_fix(pg_cluster: PgCluster) -> None:
    """A cluster made without a UTF-8 locale defaults to SQL_ASCII, where psycopg hands back bytes (seen in the
    container recipe before its initdb said --encoding=UTF8: /readyz compared b'audit' with 'audit')."""
    name = "nw_ascii_" + os.urandom(4).hex()
    with pg_cluster.admin() as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    try:
        with pytest.raises(ConfigError, match="encoded SQL_ASCII; Notewell needs UTF8: create it with CREATE DATABASE"):
            open_store(pg_cluster.url(name))
    finally:
        pg_cluster.drop_database(name)


def test_documents_named_by_their_file_name(store_url: str) -> None:
    """The brains' lookup: the path's last part equal to the name, compared as characters (not LIKE: no
    wildcard, no case folding), on both backends alike."""
    from notewell.records.documents import DocumentInput

    paths = ["brain.md", "x/brain.md", "ü/日本/brain.md", "xbrain.md", "Brain.md", "brain.md/inner.md",
             "b/brain.mdx", "a_b/brain.md"]
    store = open_store(store_url)
    try:
        with store.documents.writer() as w:
            for project in ("q", "p"):
                for path in paths:
                    w.upsert(DocumentInput(project, path, path, "", 1, 1, "sha", "x"))
        assert store.documents.named("brain.md") == [
            (project, path) for project in ("p", "q") for path in sorted(["brain.md", "x/brain.md",
                                                                          "ü/日本/brain.md", "a_b/brain.md"])]
        assert store.documents.named("b_ain.md") == []  # "_" is no wildcard
        assert store.documents.named("inner.md") == [("p", "brain.md/inner.md"), ("q", "brain.md/inner.md")]
    finally:
        store.close()


def test_checksums_of_documents_in_several_projects_in_one_answer(store_url: str) -> None:
    """A search page's versions: each asked (project, path) that exists with its own checksum, on both backends;
    a path asked in one project is never answered from another that holds it, and a key asked twice is one."""
    from notewell.records.documents import DocumentInput

    store = open_store(store_url)
    try:
        with store.documents.writer() as w:
            for project in ("p", "q", "it's", "中文"):
                for path in ("a.md", "b/c.md", "100%.md", "o'k.md"):
                    w.upsert(DocumentInput(project, path, path, "", 1, 1, f"{project}:{path}", "x"))
        asked = [("p", "a.md"), ("q", "b/c.md"), ("p", "a.md"), ("it's", "o'k.md"), ("中文", "100%.md"),
                 ("p", "missing.md"), ("nowhere", "a.md"), ("q", "100%.md")]
        assert store.documents.checksums(asked) == {
            key: f"{key[0]}:{key[1]}" for key in asked if key[1] != "missing.md" and key[0] != "nowhere"}
        assert store.documents.checksums([]) == {}
        assert store.documents.checksums([("p", "b/c.md")]) == {("p", "b/c.md"): "p:b/c.md"}
        with store.documents.writer() as w:  # more projects than one statement asks for
            for n in range(1_200):
                w.upsert(DocumentInput(f"m{n}", "a.md", "a.md", "", 1, 1, f"m{n}", "x"))
        many = [(f"m{n}", "a.md") for n in range(1_200)]
        assert store.documents.checksums(many) == {key: key[0] for key in many}
    finally:
        store.close()
