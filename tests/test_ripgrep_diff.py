"""Differential test against ripgrep: the same files and the same first matching line per file (the
generated vault on both backends).

ripgrep runs with flags that make it see exactly the files Notewell indexes:
- the top-level folders (the projects) are searched, and the files at the vault root (a second run
  with --max-depth 1), which Notewell holds as the project _root (but notewell.toml, its settings);
- hidden files and folders are skipped by both (ripgrep needs --glob '!.*': a --type match would
  otherwise let a hidden file through);
- .gitignore files count outside a git repository too (--no-require-git); ignore files above the vault
  do not count (--no-ignore-parent), and the vault root's own .gitignore and .notewellignore are passed
  with --ignore-file. ripgrep does not read .notewellignore below the root, so the generated vault puts
  an identical .ignore file (which ripgrep reads, and Notewell, being hidden, does not) beside each one;
- the indexed file types are a ripgrep file type (--type-add).

Case: `rg -i` uses Unicode *simple* case folding, Notewell's plain search *full* case folding. The
queries below are chosen where the two agree: no ß (full folding makes it "ss"), no Turkish İ; Greek
σ/ς/Σ and accented capitals fold the same way in both. Regexes: ripgrep's \\w, \\d, \\s and \\b are
Unicode-aware and RE2's are ASCII-only, so the patterns use explicit classes such as [a-z] and [0-9].
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from conftest import NORTHWIND, IndexedVault, index_into
from notewell.config import CONFIG_FILE_NAME as ROOT_SETTINGS
from notewell.config import DEFAULT_FILE_TYPES
from notewell.search.engine import MAX_LINE_CHARS, CaseMode
from pg import BACKENDS

FirstLines = dict[str, tuple[int, str]]  # vault-relative path -> (line, text)
OurLines = dict[str, tuple[int, str, bool]]  # vault-relative path -> (line, text, shortened)
RG_CASE: dict[CaseMode, str] = {"insensitive": "--ignore-case", "sensitive": "--case-sensitive",
                                "smart": "--smart-case"}


def rg_first_lines(rg: str, vault: Path, query: str, regex: bool, case: CaseMode = "insensitive") -> FirstLines:
    return {path: lines[0] for path, lines in rg_lines(rg, vault, query, regex, first_only=True, case=case).items()}


def rg_lines(rg: str, vault: Path, query: str, regex: bool, first_only: bool,
             case: CaseMode = "insensitive") -> dict[str, list[tuple[int, str]]]:
    projects = sorted(p.name for p in vault.iterdir() if p.is_dir() and not p.name.startswith("."))
    types = ",".join(t.lstrip(".") for t in DEFAULT_FILE_TYPES)
    args = [rg, "--no-config", RG_CASE[case], "--line-number", "--with-filename", "--null", "--no-heading",
            "--color", "never", "--no-require-git", "--no-ignore-parent",
            "--type-add", f"notewell:*.{{{types}}}", "--type", "notewell", "--glob", "!.*"]
    if first_only:
        args += ["--max-count", "1"]
    for name in (".gitignore", ".notewellignore"):
        if (vault / name).is_file():
            args += ["--ignore-file", name]
    args += ["-e", query] if regex else ["--fixed-strings", "-e", query]
    found: dict[str, list[tuple[int, str]]] = {}
    runs = [[*args, "--max-depth", "1", "--glob", f"!{ROOT_SETTINGS}", "--", "."]]
    if projects:
        runs.append([*args, "--", *projects])
    for run in runs:
        proc = subprocess.run(run, cwd=vault, capture_output=True, timeout=120, check=False)
        assert proc.returncode in (0, 1), proc.stderr.decode()
        for row in proc.stdout.decode("utf-8").splitlines():
            path, _, rest = row.partition("\0")
            line, _, text = rest.partition(":")
            if path.startswith("./"):  # a file at the vault root
                path = f"_root/{path[2:]}"
            found.setdefault(path, []).append((int(line), text))
    return found


def notewell_first_lines(indexed: IndexedVault, query: str, regex: bool, case: CaseMode = "insensitive") -> OurLines:
    result = indexed.search(query, regex=regex, case=case, limit=100_000)
    assert result.complete and not result.has_more
    return {m.vault_path: (m.line, m.text, m.shortened) for m in result.matches}


def assert_same(ours: OurLines, theirs: FirstLines) -> None:
    """Same files, same first line, same text: exactly, unless Notewell marked its line shortened, in which
    case it is a window of MAX_LINE_CHARS characters cut from ripgrep's longer line."""
    assert sorted(ours) == sorted(theirs)
    for path, (line, text, shortened) in ours.items():
        their_line, their_text = theirs[path]
        assert line == their_line, path
        if shortened:
            assert len(text) == MAX_LINE_CHARS < len(their_text) and text in their_text, path
        else:
            assert text == their_text, path


def assert_same_with_hits(ours: OurLines, theirs: FirstLines) -> None:
    assert theirs, "the query is meant to find something: a test that compares two empty answers proves nothing"
    assert_same(ours, theirs)


# --- the example vault ----------------------------------------------------------------------------------

NORTHWIND_LITERALS = ["maximum discount", "discount", "Partner", "pricing policy", "TODO(", "v2.", "Σταματόπουλος",
                      "ΣΩΤΗΡΊΑ", "müller", "the", "do not know what we were", "ignore previous instructions", "zz"]
NORTHWIND_REGEXES = [r"TODO\([a-z]+\)", r"v[0-9]+\.[0-9]+", r"20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]", r"^#+ .*pric",
                     r"discount|rebate", r"(fixed|day) (fee|rate)", r"[.]$", r"^- ", r"[0-9]{4}", r"per cent\.$",
                     r"^[A-Z][a-z]+:", r"σ[α-ωά-ώ]+ς"]
# The only (query, case) pairs that find nothing, on purpose: every other pair must find something.
NORTHWIND_NO_HITS: set[tuple[str, CaseMode]] = {
    ("zz", "insensitive"), ("zz", "smart"), ("zz", "sensitive"),
    ("müller", "sensitive"), ("ignore previous instructions", "sensitive"),  # the text says Müller, Ignore
    ("σ[α-ωά-ώ]+ς", "sensitive"),  # the name is written Σταματόπουλος
}


CASES: tuple[CaseMode, ...] = ("insensitive", "smart", "sensitive")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("query", NORTHWIND_LITERALS)
def test_northwind_literals(rg: str, northwind: IndexedVault, query: str, case: CaseMode) -> None:
    theirs = rg_first_lines(rg, NORTHWIND, query, regex=False, case=case)
    ours = notewell_first_lines(northwind, query, regex=False, case=case)
    if (query, case) in NORTHWIND_NO_HITS:
        assert ours == {} == theirs
    else:
        assert_same_with_hits(ours, theirs)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("pattern", NORTHWIND_REGEXES)
def test_northwind_regexes(rg: str, northwind: IndexedVault, pattern: str, case: CaseMode) -> None:
    theirs = rg_first_lines(rg, NORTHWIND, pattern, regex=True, case=case)
    ours = notewell_first_lines(northwind, pattern, regex=True, case=case)
    if (pattern, case) in NORTHWIND_NO_HITS:
        assert ours == {} == theirs
    else:
        assert_same_with_hits(ours, theirs)


def test_northwind_seed_query_has_three_files(rg: str) -> None:
    assert sorted(rg_first_lines(rg, NORTHWIND, "maximum discount", regex=False)) == [
        "northwind-advisory/2026-q2-pricing-review.md", "northwind-advisory/meetings/meeting-2026-08-14-pricing.md",
        "northwind-advisory/pricing-policy.md"]


# --- a generated vault of a few thousand files ------------------------------------------------------------

GENERATED_FILES = 3000
PLANTED = ["zephyrine", "Quokka", "QUOKKA", "quokka", "maximum discount", "Σοφία", "ΣΟΦΊΑ", "v2.1", "v10.4",
           "2026-08-14", "rebate", "中文文档", "日本語の文書", "文"]


def _vocabulary(rng: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gri", "stu", "ol", "an"]
    return sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(400)})


def _text(rng: random.Random, words: list[str], lines_between: tuple[int, int] = (3, 40)) -> str:
    lines = []
    for _ in range(rng.randint(*lines_between)):
        line = [rng.choice(words) for _ in range(rng.randint(0, 14))]
        if line and rng.random() < 0.02:
            line.insert(rng.randrange(len(line) + 1), rng.choice(PLANTED))
        if line and rng.random() < 0.1:
            line[0] = line[0].capitalize()
        lines.append(" ".join(line) + ("." if line and rng.random() < 0.3 else ""))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session", params=BACKENDS)
def generated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexedVault]:
    """~3000 indexed files in three projects, plus files that both tools must pass over; on each backend."""
    root = tmp_path_factory.mktemp("generated")
    vault = root / "vault"
    rng = random.Random(20260814)
    words = _vocabulary(rng)
    projects = ["alpha", "beta", "gamma-notes"]
    exts = [".md"] * 6 + [".txt", ".csv", ".yaml", ".json"]
    for n in range(GENERATED_FILES):
        folder = Path(rng.choice(projects), f"d{rng.randrange(10)}")
        if rng.random() < 0.5:
            folder /= f"s{rng.randrange(4)}"
        path = vault / folder / f"f{n:04}{rng.choice(exts)}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(rng, words), encoding="utf-8")
    big = random.Random(1)  # a few large files, cut into many regions (store/regions.py)
    for n in range(4):
        path = vault / "beta" / "big" / f"changelog-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(big, words, (3000, 9000)), encoding="utf-8")
    (vault / "root-note.md").write_text("A quokka at the vault root.\n", encoding="utf-8")  # the project _root
    passed_over = {
        "alpha/d1/script.py": "zephyrine quokka\n", "beta/notes.log": "zephyrine quokka\n",
        "alpha/.hidden.md": "zephyrine quokka\n", "beta/.cache/x.md": "zephyrine quokka\n",
        "root-file.py": "zephyrine quokka\n", ".root-hidden.md": "zephyrine quokka\n",
        "beta/scratch/a.md": "zephyrine quokka\n", "beta/d2/b.tmp.md": "zephyrine quokka\n",
        "gamma-notes/d3/secret-1.md": "zephyrine quokka\n",
        "alpha/d4/binary.txt": "zephyrine quokka\0\1\2\n",
    }
    ignore_files = {
        ".notewellignore": "/alpha/d9/\n",
        "beta/.notewellignore": "scratch/\n*.tmp.md\n", "beta/.ignore": "scratch/\n*.tmp.md\n",
        "gamma-notes/d3/.gitignore": "secret-*.md\n",
    }
    for rel, text in {**passed_over, **ignore_files}.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    if request.param == "postgres":
        cluster = request.getfixturevalue("pg_cluster")
        indexed = index_into(vault, cluster.url(cluster.create_database()))
    else:
        indexed = index_into(vault, root / "index.db")
    assert indexed.report.added > GENERATED_FILES * 0.85
    return vault, indexed


# one and two characters (answered from the index, records/plan.py) in Latin and CJK, rare and common
GENERATED_LITERALS = ["zephyrine", "quokka", "QUOKKA", "maximum discount", "σοφία", "ΣΟΦΊΑ", "v2.1", "2026-08",
                      "rebate", "quokka zephyrine", "kalo", "zz", "a", "中文", "文", "の", "ζq", "ka", "e", "k"]
GENERATED_REGEXES = [r"zephyr[a-z]+e", r"quok+a +[a-z]+", r"v[0-9]+\.[0-9]+", r"^[a-z]+ quokka", r"quokka$",
                     r"(zephyrine|σοφία) [a-z]", r"[0-9]{4}-[0-9]{2}-[0-9]{2}", r"discount|rebate", r"^ka.*lo\.$",
                     r"σοφ(ί|ι)α", r"^$", r"^[a-z]{2}$", r"文.", r"中文|の", r"u.k"]
GENERATED_NO_HITS: set[tuple[str, CaseMode]] = {
    ("zz", "insensitive"), ("zz", "smart"), ("zz", "sensitive"),
    ("quokka zephyrine", "insensitive"), ("quokka zephyrine", "smart"), ("quokka zephyrine", "sensitive"),
    ("ζq", "insensitive"), ("ζq", "smart"), ("ζq", "sensitive"),
    ("σοφία", "sensitive"), ("σοφ(ί|ι)α", "sensitive"),  # planted only as Σοφία and ΣΟΦΊΑ
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("query", GENERATED_LITERALS)
def test_generated_literals(rg: str, generated: tuple[Path, IndexedVault], query: str, case: CaseMode) -> None:
    vault, indexed = generated
    ours = notewell_first_lines(indexed, query, regex=False, case=case)
    theirs = rg_first_lines(rg, vault, query, regex=False, case=case)
    if (query, case) in GENERATED_NO_HITS:
        assert ours == {} == theirs
    else:
        assert_same_with_hits(ours, theirs)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("pattern", GENERATED_REGEXES)
def test_generated_regexes(rg: str, generated: tuple[Path, IndexedVault], pattern: str, case: CaseMode) -> None:
    vault, indexed = generated
    ours = notewell_first_lines(indexed, pattern, regex=True, case=case)
    theirs = rg_first_lines(rg, vault, pattern, regex=True, case=case)
    if (pattern, case) in GENERATED_NO_HITS:
        assert ours == {} == theirs
    else:
        assert_same_with_hits(ours, theirs)


def test_generated_vault_passes_over_the_same_files(rg: str, generated: tuple[Path, IndexedVault]) -> None:
    vault, indexed = generated
    theirs = rg_first_lines(rg, vault, "zephyrine quokka", regex=False)
    assert theirs == {} == notewell_first_lines(indexed, "zephyrine quokka", regex=False)
    at_root = {"_root/root-note.md": (1, "A quokka at the vault root.")}
    assert rg_first_lines(rg, vault, "at the vault root", regex=False) == at_root
    assert_same(notewell_first_lines(indexed, "at the vault root", regex=False), at_root)
    assert not any(p.startswith("alpha/d9/") for p in rg_first_lines(rg, vault, "a", regex=False))


@pytest.mark.parametrize(("query", "regex"), [("quokka", False), ("σοφία", False), (r"v[0-9]+\.[0-9]+", True),
                                              (r"^ka", True), ("文", False), ("ze", False)])
def test_generated_every_line(rg: str, generated: tuple[Path, IndexedVault], query: str, regex: bool) -> None:
    """Every matching line, not only the first (search_notes' mode)."""
    vault, indexed = generated
    result = indexed.search(query, regex=regex, all_lines=True, limit=1_000_000)
    ours = sorted((m.vault_path, m.line, m.text) for m in result.matches)
    theirs = sorted((p, line, text) for p, lines in rg_lines(rg, vault, query, regex, False).items()
                    for line, text in lines)
    assert ours == theirs and len(ours) > 50


def test_generated_random_phrases(rg: str, generated: tuple[Path, IndexedVault]) -> None:
    """Phrases cut from the generated text itself (so that they match), as literals and as regexes."""
    vault, indexed = generated
    rng = random.Random(7)
    sample = (vault / "beta").rglob("*.md")
    lines = [line for path in sorted(sample)[:40] for line in path.read_text().splitlines() if len(line) > 12]
    for line in rng.sample(lines, 8):
        start = rng.randrange(len(line) - 8)
        phrase = line[start : start + rng.randint(4, 9)]
        head, tail = (part.replace(".", r"\.") for part in (phrase[:3], phrase[-2:]))  # "." is the text's only metachar
        pattern = f"{head}.*{tail}"
        for query, regex in ((phrase, False), (phrase.upper(), False), (pattern, True)):
            ours = notewell_first_lines(indexed, query, regex)
            assert ours, query
            assert_same_with_hits(ours, rg_first_lines(rg, vault, query, regex))
