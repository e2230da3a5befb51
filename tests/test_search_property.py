"""Property: on random small vaults and random queries, the indexed search returns exactly what a
brute-force scan of every line returns.

The oracle reads each file line by line (a line ends at "\\n" or "\\r\\n"; a final line end opens no
new line) and asks, per line: for plain text, is the (case-folded) query a substring of the
(case-folded) line; for a regex, does RE2 find the pattern in the line. It knows nothing of trigrams,
candidate plans or whole-text matching, which is what the engine uses to be fast.

The oracle's rules are written here from the documented behaviour (docs/search.md), not imported from
the engine: full Unicode case folding with the dot of a folded İ dropped; smart case turns
case-insensitive unless the query holds a capital the person typed (in a regex, escapes such as \\S or
\\p{Lu} are not capitals); regexes follow RE2's syntax and semantics, so RE2 matches each line on its
own (Python's re differs from RE2 on \\w and on İ under IGNORECASE). Every property runs on SQLite
and on PostgreSQL.
"""

from __future__ import annotations

import posixpath
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

import pytest
import re2
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import IndexedVault, make_vault
from notewell.indexer import sync
from notewell.runtime import open_runtime
from notewell.search.engine import CaseMode
from notewell.search.literals import plain_plan, regex_plan
from notewell.search.re2_spelling import python_spelling
from notewell.store import regions

# A small alphabet where case folding is interesting: ß folds to "ss", Σ/σ/ς are one letter, İ folds to
# i, and a combining dot above (U+0307) after an i is dropped by folding; and two Chinese characters,
# which make words of one and two characters.
ALPHABET = "abcsSiIAßσςΣİ \u0307中文"
PROJECTS = ("p", "q")
PATHS = ("a.md", "B.md", "b.txt", "sub/c.md", "ä.md")
CASES: tuple[CaseMode, ...] = ("insensitive", "smart", "sensitive")

Vault = dict[str, str]  # vault-relative path -> text
Hit = tuple[str, str, int]  # (project, path, line)

# --- generated vaults ---------------------------------------------------------------------------------

line_text = st.text(alphabet=ALPHABET, max_size=12)


@st.composite
def file_text(draw: st.DrawFn) -> str:
    lines = draw(st.lists(line_text, max_size=5))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines)
    return text + end if lines and draw(st.booleans()) else text


vaults = st.dictionaries(
    st.tuples(st.sampled_from(PROJECTS), st.sampled_from(PATHS)).map("/".join),
    file_text(), min_size=1, max_size=4,
)

# --- generated queries --------------------------------------------------------------------------------

plain_queries = st.text(alphabet=ALPHABET, min_size=1, max_size=6)

_atoms = st.one_of(
    st.sampled_from(list(ALPHABET.replace(" ", ""))).map(re2.escape),
    st.sampled_from(["ab", "ss", "abc", "sas", "aß", "σς", "İi", "Σa", "cab", "bca", "as "]),
    st.sampled_from([".", r"\s", r"\S", r"\w", "[aß]", "[^a]", "[a-c]", "[sS]", "[σς]", "[^ ]", " "]),
    # RE2's own spellings, which Python's parser (the plan's) does not read: literals and classes
    st.sampled_from([r"\x{61}", r"\x{3C3}", r"\x{4E2D}", r"\Qas\E", r"\Qσς\E", r"\pL", r"\PL", r"\p{Han}",
                     r"\p{Greek}", "[[:alpha:]]", "[^[:space:]]", r"[\x{61}-\x{63}]", r"[\pLs]"]),
)


# an empty \Q\E before a quantifier: RE2 repeats all that comes before ("a+\Q\E?" is "(a+)?")
QUANTIFIERS = st.sampled_from(["*", "+", "?", "{2}", "{1,2}", "*?", r"\Q\E?", r"+\Q\E*"])


def regex_seq(depth: int) -> st.SearchStrategy[str]:
    """A concatenation of 1-4 terms; a term nests groups, alternations and repetitions ``depth`` deep."""
    return st.lists(regex_term(depth), min_size=1, max_size=4).map("".join)


def regex_term(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _atoms
    inner = regex_seq(depth - 1)
    return st.one_of(
        _atoms,
        inner.map(lambda x: f"({x})"),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
        st.tuples(regex_term(depth - 1), QUANTIFIERS).map(lambda t: f"(?:{t[0]}){t[1]}"),
    )


regex_queries = st.tuples(
    st.sampled_from(["", "", "^"]), regex_seq(2), st.sampled_from(["", "", "$", r"\z"]),
).map("".join)

queries = st.one_of(
    st.tuples(plain_queries, st.just(False), st.sampled_from(CASES)),
    st.tuples(regex_queries, st.just(True), st.sampled_from(CASES)),
)


@st.composite
def planted_match(draw: st.DrawFn, query: str, regex: bool) -> str:
    """A line that likely matches ``query``: random queries seldom match random text on their own."""
    if regex:
        spelled = python_spelling(query.removeprefix("^").removesuffix("$").removesuffix(r"\z"))
        # no Python spelling (an empty \Q\E before a quantifier): nothing planted, the line as drawn
        core = "" if spelled is None else draw(st.from_regex(spelled, fullmatch=True, alphabet=ALPHABET))
    else:
        core = draw(st.sampled_from([query, query.upper(), query.lower(), query.swapcase(), query.casefold()]))
    return draw(line_text) + core + draw(line_text)


@st.composite
def vaults_with_cases(draw: st.DrawFn) -> tuple[Vault, list[tuple[str, bool, CaseMode]]]:
    """A vault and queries, with a line that matches each query planted at a random place."""
    vault = dict(draw(vaults))
    cases = draw(st.lists(queries, min_size=1, max_size=6))
    for query, regex, _ in cases:
        line = draw(planted_match(query, regex))
        rel = draw(st.sampled_from(sorted(vault)))
        lines = vault[rel].split("\n")
        at = draw(st.integers(0, len(lines) - 1))
        vault[rel] = "\n".join([*lines[:at], line, *lines[at:]])
    return vault, cases


# --- the oracle ---------------------------------------------------------------------------------------


def oracle_fold(text: str) -> str:
    """Full case folding, character by character; then a combining dot above that follows an "i" goes
    (İ folds to "i" + U+0307, and "istanbul" must find "İstanbul")."""
    out: list[str] = []
    previous = ""  # the previous folded character, dropped or not: in "i" + two dots only the first goes
    for ch in text:
        for folded in ch.casefold():
            if not (folded == "\u0307" and previous == "i"):
                out.append(folded)
            previous = folded
    return "".join(out)


def is_capital(ch: str) -> bool:
    return ch.isupper() or ch.istitle()


def typed_capital(query: str, regex: bool) -> bool:
    """Smart case's question: did the person type a capital? In a regex an escape is not one."""
    if not regex:
        return any(is_capital(ch) for ch in query)
    i = 0
    while i < len(query):
        if query[i] == "\\":
            if query[i + 1 : i + 2] in ("p", "P") and query[i + 2 : i + 3] == "{":
                end = query.find("}", i)
                i = len(query) if end < 0 else end + 1
            elif query[i + 1 : i + 2] in ("p", "P"):  # a one-letter class, \pL: its letter is a name, not typed text
                i += 3
            else:
                i += 2
            continue
        if is_capital(query[i]):
            return True
        i += 1
    return False


def case_insensitive(query: str, regex: bool, case: CaseMode) -> bool:
    return case == "insensitive" or (case == "smart" and not typed_capital(query, regex))


def file_lines(text: str) -> list[str]:
    if not text:
        return []
    return [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")]


def oracle(vault: Vault, query: str, regex: bool, case: CaseMode, all_lines: bool,
           keep: Callable[[str, str], bool] = lambda project, path: True) -> list[Hit]:
    insensitive = case_insensitive(query, regex, case)
    if regex:
        options = re2.Options()
        options.case_sensitive = not insensitive
        compiled = re2.compile(query, options)

        def matches(line: str) -> bool:
            return compiled.search(line) is not None
    else:
        needle = oracle_fold(query) if insensitive else query

        def matches(line: str) -> bool:
            return needle in (oracle_fold(line) if insensitive else line)

    found: list[Hit] = []
    for project, path in sorted(tuple(rel.split("/", 1)) for rel in vault):  # by code point
        if not keep(project, path):
            continue
        rel = f"{project}/{path}"
        for number, line in enumerate(file_lines(vault[rel]), start=1):
            if matches(line):
                found.append((project, path, number))
                if not all_lines:
                    break
    return found


def engine_hits(indexed: IndexedVault, query: str, regex: bool, case: CaseMode, all_lines: bool) -> list[Hit]:
    result = indexed.search(query, regex=regex, case=case, all_lines=all_lines, limit=10_000)
    assert result.complete and not result.has_more
    # the index answers whenever the query holds a literal, one or two characters long included
    assert result.scanned == ((regex_plan(query) if regex else plain_plan(query)) is None), query
    return [(m.project, m.path, m.line) for m in result.matches]


@contextmanager
def indexed_vault(stores: Callable[[Path], Iterator[str]], vault: Vault) -> Iterator[IndexedVault]:
    """``vault`` written to a temporary folder and indexed into a fresh store of the backend under test."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = make_vault(root, dict(vault))
        with contextmanager(stores)(root) as db:
            rt = open_runtime(str(folder), db)
            try:
                yield IndexedVault(rt, sync(rt.settings, rt.store))
            finally:
                rt.close()


@dataclass(frozen=True)
class Backend:
    """Fresh stores on one backend, and how many examples it can afford (a PostgreSQL example creates a
    database: about ten times a SQLite one, so it runs a fifth of the examples)."""

    stores: Callable[[Path], Iterator[str]]
    share: float

    def settings(self, examples: int) -> settings:
        return settings(max_examples=max(5, int(examples * self.share)), deadline=None,
                        suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """A SQLite file in the example's folder, or a new database of the session's PostgreSQL cluster."""
    if request.param == "sqlite":
        def sqlite_store(root: Path) -> Iterator[str]:
            yield str(root / "index.db")
        return Backend(sqlite_store, 1.0)
    cluster = request.getfixturevalue("pg_cluster")

    def postgres_store(root: Path) -> Iterator[str]:
        name = cluster.create_database()
        try:
            yield cluster.url(name)
        finally:
            cluster.drop_database(name)
    return Backend(postgres_store, 0.2)


# Texts are cut into regions of this many bytes (store/regions.py; a search reads and verifies the regions
# that hold its trigrams): the real size, under which these small files are one region, and sizes that
# cut them after every line or every few.
region_sizes = st.sampled_from([regions.REGION_BYTES, 1, 7, 20])


def check(stores: Callable[[Path], Iterator[str]], vault: Vault,
          cases: list[tuple[str, bool, CaseMode]], region_bytes: int = regions.REGION_BYTES) -> None:
    with patch.object(regions, "REGION_BYTES", region_bytes), indexed_vault(stores, vault) as indexed:
        for query, regex, case in cases:
            for all_lines in (False, True):
                expected = oracle(vault, query, regex, case, all_lines)
                assert engine_hits(indexed, query, regex, case, all_lines) == expected, (query, regex, case)


# --- the properties -----------------------------------------------------------------------------------


def test_indexed_search_equals_line_scan(backend: Backend) -> None:
    @backend.settings(100)
    @given(vault_cases=vaults_with_cases(), region_bytes=region_sizes)
    # Regression: a group's exact strings were only its suffix after a repetition, so "xy" was glued to "bcd".
    @example(vault_cases=({"p/a.md": "xyabcd\n"}, [("xy(a+bcd)", True, "insensitive")]), region_bytes=1)
    # Regression: folding drops the dot of "i\u0307", so a literal starting with that dot was not in the index.
    @example(vault_cases=({"p/a.md": "i\u0307bc\n"}, [("\u0307bc", True, "sensitive")]), region_bytes=1)
    @example(vault_cases=({"p/a.md": "Straße\nSTRASSE\n", "q/b.md": "ΣΟΦΙΑ\nσοφια\n"},
                          [("strasse", False, "insensitive"), ("ß", False, "smart"), ("σοφια", False, "insensitive")]),
             region_bytes=1)
    # Smart case: an escape is not a capital the person typed (\S stays case-insensitive; S does not).
    @example(vault_cases=({"p/a.md": "ab\nAB\n"}, [(r"a\S", True, "smart"), (r"A\S", True, "smart")]),
             region_bytes=1)
    # Regions: a match on the last line of a region, and on the first line of the next one.
    @example(vault_cases=({"p/a.md": "ab\ncd\nab cd\n"}, [("cd", False, "insensitive"), ("^ab", True, "smart")]),
             region_bytes=3)
    def prop(vault_cases: tuple[Vault, list[tuple[str, bool, CaseMode]]], region_bytes: int) -> None:
        check(backend.stores, *vault_cases, region_bytes)

    prop()


def test_substrings_of_the_vault_are_found(backend: Backend) -> None:
    """Queries cut from the vault's own lines, so that most of them match (random ones mostly do not)."""

    @backend.settings(60)
    @given(vault=vaults, needles=st.lists(st.text(alphabet=ALPHABET, min_size=3, max_size=5), min_size=1,
                                         max_size=4), region_bytes=region_sizes)
    def prop(vault: Vault, needles: list[str], region_bytes: int) -> None:
        lines = [line for text in vault.values() for line in file_lines(text) if len(line) >= 3]
        picked = [(line[i % (len(line) - 2):][:3 + i % 4], False, CASES[i % 3]) for i, line in enumerate(lines[:6])]
        check(backend.stores, vault, picked + [(n, False, "insensitive") for n in needles], region_bytes)

    prop()


@st.composite
def scopes(draw: st.DrawFn) -> tuple[list[str], str, tuple[str, ...]]:
    projects = draw(st.lists(st.sampled_from(PROJECTS), min_size=1, unique=True))
    prefix = draw(st.sampled_from(["", "", "sub", "sub/c.md", "a.md", "su", "B.md", "sub/"]))
    types = draw(st.sampled_from([(), (".md",), (".txt",), (".md", ".txt")]))
    return projects, prefix, types


def test_filters_and_paging_equal_line_scan(backend: Backend) -> None:
    """Projects, a path prefix (folder or file) and file types filter; pages of ``limit`` add up to the whole."""

    @backend.settings(60)
    @given(vault_cases=vaults_with_cases(), scope=scopes(), limit=st.integers(1, 4), all_lines=st.booleans())
    # Smart case: \pL is a class, its L no capital the person typed (the oracle once read one)
    @example(vault_cases=({"p/a.md": "A\na\n"}, [(r"(?:a|a\pL)", True, "smart")]),
             scope=(["p"], "", ()), limit=1, all_lines=False)
    def prop(vault_cases: tuple[Vault, list[tuple[str, bool, CaseMode]]], scope: tuple[list[str], str, tuple[str, ...]],
             limit: int, all_lines: bool) -> None:
        filtered_pages(backend, vault_cases, scope, limit, all_lines)

    prop()


def filtered_pages(backend: Backend, vault_cases: tuple[Vault, list[tuple[str, bool, CaseMode]]],
                   scope: tuple[list[str], str, tuple[str, ...]], limit: int, all_lines: bool) -> None:
    vault, cases = vault_cases
    projects, prefix, types = scope
    folder = prefix.rstrip("/")

    def keep(project: str, path: str) -> bool:
        in_prefix = not folder or path == folder or path.startswith(folder + "/")
        return project in projects and in_prefix and (not types or posixpath.splitext(path)[1] in types)

    with indexed_vault(backend.stores, vault) as indexed:
        for query, regex, case in cases:
            pages: list[Hit] = []
            while True:
                page = indexed.search(query, regex=regex, case=case, all_lines=all_lines, limit=limit,
                                      offset=len(pages), projects=projects, prefix=folder, file_types=types)
                assert len(page.matches) <= limit and (len(page.matches) == limit or not page.has_more)
                pages += [(m.project, m.path, m.line) for m in page.matches]
                if not page.has_more:
                    break
            assert pages == oracle(vault, query, regex, case, all_lines, keep), (query, regex, case)
