"""Mutation benchmark: do the tests that cover the key rules notice when a rule is broken?

    python bench/mutants.py [--modules policy memory ...] [--mutants ID ...] [--auto] [--auto-limit N]
                            [--timeout S] [--list]

Each mutant is one small change to one named function of a module (a rule clause dropped, a condition
negated, a limit off by one), written as a regular expression that must match exactly once inside that
function and its replacement; ``--auto`` adds the automatic operator swaps of every function of the chosen
modules (== and !=, < and <=, > and >=, in and not in, is and is not, and and or, a ``not`` dropped). The
tree's src, tests, docs and examples are copied once to a temporary folder; each mutant is written into
the copy (never the working tree), the test files that cover its module (``MODULES``) run there with
``pytest -x`` and PYTHONPATH at the copy's src, and the file is restored. A mutant is killed when the
tests fail, timed out when they run past the timeout (counted as killed), and survived when they pass;
one whose pattern no longer matches its function is stale (the code moved: re-point it) and is not
counted. Before any mutant the covering tests run unmutated: a module whose tests fail is skipped.
Prints a line per mutant, then the kill rate and the survivors. Not part of ``make test`` (docs/testing.md).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("src", "tests", "docs", "examples", "pyproject.toml")


@dataclass(frozen=True)
class Module:
    path: str  # below src/notewell
    tests: tuple[str, ...]  # the test files that cover it, fastest and most direct first (pytest -x stops early)


MODULES: dict[str, Module] = {
    "policy": Module("access/policy.py", ("test_access_matrix.py", "test_service_matrix.py", "test_memory_service.py",
                                         "test_tokens.py", "test_own_tokens.py")),
    "memory": Module("services/memory.py", ("test_memory_service.py", "test_service_matrix.py",
                                            "test_memory_context.py", "test_memory_cli.py", "test_mcp_memory.py")),
    "brain": Module("services/brain_sessions.py", ("test_brain_scoring.py", "test_service_matrix.py",
                                                   "test_brain_mcp.py", "test_brain_cli.py")),
    "engine": Module("search/engine.py", ("test_search.py", "test_query_bounds.py", "test_search_property.py")),
    "watcher": Module("watcher.py", ("test_watch.py", "test_watch_settings.py")),
    "knowledge": Module("services/knowledge.py", ("test_service_matrix.py", "test_mcp_tools.py")),
}


def function_span(source: str, where: str) -> tuple[int, int]:
    """The character range of the function or method ``where`` ("refusal", "MemoryService.forget") in
    ``source``, decorators included; KeyError when there is none."""
    tree = ast.parse(source)
    for qualname, node in _functions(tree):
        if qualname == where:
            return _span(source, node)
    raise KeyError(where)


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f"{node.name}.{item.name}", item


def _span(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return starts[first - 1], starts[node.end_lineno or node.lineno]


@dataclass(frozen=True)
class Mutant:
    """One change: ``find`` (a regular expression, matching exactly once inside the function ``where``)
    becomes ``replace`` (re.sub's syntax: \\1 for a group)."""

    id: str
    module: str  # a key of MODULES
    where: str
    find: str
    replace: str
    why: str  # the rule it breaks, in words
    file: str | None = None  # below src/notewell, when the rule lives beside its module's main file

    @property
    def path(self) -> str:
        return self.file or MODULES[self.module].path

    def apply(self, source: str) -> str | None:
        """The mutated module, or None when the function is gone or the pattern does not match it once."""
        try:
            start, end = function_span(source, self.where)
        except KeyError:
            return None
        changed, count = re.subn(self.find, self.replace, source[start:end])
        return source[:start] + changed + source[end:] if count == 1 else None


ALWAYS = "if False:"  # replaces a guard: the clause it guards is dropped
CURATED: tuple[Mutant, ...] = (
    # --- access/policy.py: the one rule -------------------------------------------------------------
    Mutant("M1", "policy", "refusal", r"target\.author_user_id == p\.user_id or ", "",
           "the author may change their own memory: dropped"),
    Mutant("policy.writer-change", "policy", "refusal", r"\s+or _may_write\(p, project, grant\)\)", ")",
           "a writer of the project may change anyone's memory: dropped"),
    Mutant("policy.private", "policy", "refusal", r"if not sees_memory\(p, target\.private_to\):", ALWAYS,
           "a private memory is its author's alone: dropped"),
    Mutant("policy.scope-needs-target", "policy", "refusal",
           r"if rule\.scope is not None and not p\.has_scope\(rule\.scope\):",
           "if rule.scope is not None and not p.has_scope(rule.scope) and target is None:",
           "the scope is checked only when no project is named"),
    Mutant("policy.write-right", "policy", "refusal",
           r"if rule\.right in \(\"write\", \"home\", \"resolve\"\) and not _may_write",
           "if False and not _may_write", "writing needs a write right: dropped"),
    Mutant("policy.manage-home", "policy", "refusal", r"return \"home\" if target\.project\.kind == \"home\" else None",
           "return None", "a home takes no settings, archiving or grants: dropped"),
    Mutant("policy.bound-token", "policy", "_is_visible",
           r"if p\.bound_project is not None and project\.id != p\.bound_project:", ALWAYS,
           "a project-scoped token sees its project only: dropped"),
    Mutant("policy.archived-listing", "policy", "_is_visible", r"not \(include_archived and p\.role == \"admin\"\)",
           "not include_archived", "archived projects are listed to admins only: anyone listing sees them"),
    Mutant("policy.staff-sees", "policy", "_is_visible", r"p\.role in \(\"staff\", \"admin\"\)", "p.role == \"admin\"",
           "staff see every ordinary project: only admins do"),
    Mutant("policy.member-grant", "policy", "_is_visible", r"return grant is not None", "return True",
           "a member sees an ordinary project only with a grant: without one too"),
    Mutant("policy.home-owner", "policy", "_owns_home", r" and project\.owner_user_id == p\.user_id", "",
           "a home is its owner's alone: anyone's"),
    Mutant("policy.read-grant-writes", "policy", "_may_write", r"grant == \"write\"", "grant is not None",
           "a read grant writes"),
    Mutant("policy.manager-bound", "policy", "_is_manager", r" and p\.bound_project is None", "",
           "managing needs a user-scoped token: a project-scoped one manages too"),
    Mutant("policy.mint-admin-bound", "policy", "check_token_scopes", r"if project_bound and ADMIN_SCOPE in wanted:",
           ALWAYS, "the admin scope is minted on user-scoped tokens only: dropped"),
    Mutant("policy.own-token-beyond", "policy", "check_own_token", r"beyond_token = sorted\(wanted - p\.scopes\)",
           "beyond_token: list[str] = []", "a token never mints a scope it lacks: dropped"),
    Mutant("policy.own-token-binding", "policy", "check_own_token",
           r"if p\.bound_project is not None and project_id != p\.bound_project:", ALWAYS,
           "a project-scoped token mints tokens bound to its project only: dropped"),
    # --- services/memory.py ---------------------------------------------------------------------------
    Mutant("memory.forget-right", "memory", "MemoryService.forget",
           r"\n\s+self\._require_change_right\(p, record, \"forget\"\)", "",
           "forget asks for the change right: dropped"),
    Mutant("memory.supersede-right", "memory", "MemoryService.remember",
           r"\n\s+self\._require_change_right\(p, old, \"supersede\"\)", "",
           "supersede asks for the change right: dropped"),
    Mutant("memory.write-as-read", "memory", "MemoryService._write_target",
           r"authorize\(p, \"memory:write\", project or p\.default_project\)",
           "authorize(p, \"memory:read\", project or p.default_project)", "a reader of the project writes to it"),
    Mutant("memory.supersede-live", "memory", "MemoryService.remember", r"if not old\.live:", ALWAYS,
           "only a live memory is superseded: a superseded one too"),
    Mutant("memory.content-max", "memory", "MemoryService.remember", r"len\(content\) > MAX_CONTENT_CHARS",
           "len(content) > MAX_CONTENT_CHARS + 1", "the content limit, off by one"),
    Mutant("memory.already-forgotten", "memory", "MemoryService.forget", r"if record\.deleted_at is not None:", ALWAYS,
           "forgetting a forgotten memory is a conflict: dropped"),
    Mutant("memory.get-forgotten", "memory", "MemoryService._visible",
           r"if record\.deleted_at is not None and not include_forgotten:", ALWAYS,
           "a forgotten memory is not found (superseding it): it is superseded"),
    Mutant("memory.get-forgotten-reader", "memory", "MemoryService.get",
           r"if record\.deleted_at is not None and not self\.authorization\.allowed\(p, \"memory:change\", record\):",
           ALWAYS, "a forgotten memory is read only by whoever could have forgotten it: by every reader"),
    Mutant("memory.path-filter-outside", "memory", "location_filter", r"if project not in readable:", ALWAYS,
           "a path_filter outside the readable projects is refused: it is searched", "services/location_filter.py"),
    Mutant("memory.limit-max", "memory", "check_limit", r"limit > maximum", "limit > maximum + 1",
           "a limit's maximum, off by one", file="services/memory_checks.py"),
    Mutant("memory.limit-min", "memory", "check_limit", r"limit < minimum", "limit < minimum - 1",
           "a limit below the minimum accepted", file="services/memory_checks.py"),
    Mutant("memory.candidates", "memory", "_candidates", r"max\(3 \* limit, CANDIDATES_MIN\)", "limit",
           "the blend re-ranks max(3 x limit, 20) candidates: only limit"),
    Mutant("memory.expiry-working", "memory", "check_expiry", r"if memory_type != \"working\":", ALWAYS,
           "only a working memory expires: any does", file="services/memory_checks.py"),
    Mutant("memory.export-private", "memory", "MemoryService.export",
           r"if not sees_memory\(p, record\.private_to\):", "if False:",
           "export leaves out others' private memories: dropped"),
    Mutant("memory.list-forgotten", "memory", "MemoryService.list_memories",
           r"\[pid for pid in projects if self\.authorization\.allowed\(p, \"memory:change\", pid\)\]",
           "list(projects)", "forgotten memories are listed where the caller could have forgotten them: everywhere"),
    Mutant("memory.context-documents-scope", "memory", "MemoryService.recall_context",
           r"self\.authorization\.authorize\(p, \"knowledge:read\"\)", "pass",
           "include_documents needs knowledge:read: dropped"),
    # --- services/brain*.py (the brain), and the policy's rules for it --------------------------
    # M4 (the learnings' confidence): re-point after the clamp's change by editing where/find/replace.
    Mutant("M4", "brain", "Learning.parse", r"min\(float\(confidence\), CAPTURE_CONFIDENCE_MAX\)",
           "float(confidence)", "a learning's confidence is clamped to CAPTURE_CONFIDENCE_MAX (0.95): not clamped",
           "services/brain_learnings.py"),
    Mutant("M4.range", "brain", "Learning.parse", r" or not confidence >= 0\.0", "",
           "a negative (or NaN) confidence drops the learning: any number passes", "services/brain_learnings.py"),
    Mutant("brain.learnings-max", "brain", "Learnings.parse", r"given\[:LEARNINGS_MAX\]", "given",
           "at most LEARNINGS_MAX learnings per outcome: all of them", "services/brain_learnings.py"),
    # the brain's rules live in the policy (session:own, knowledge:retire): mutated there, against the brain's tests
    Mutant("brain.own-session", "brain", "_session_refusal",
           r"if target\.author_user_id is None or target\.author_user_id != p\.user_id:", ALWAYS,
           "a session is its person's alone: anyone's", "access/policy.py"),
    Mutant("brain.bound-session", "brain", "_session_refusal",
           r"if p\.bound_project is not None and target\.session_project != p\.bound_project:", ALWAYS,
           "a project-scoped token reaches its project's sessions only: dropped", "access/policy.py"),
    Mutant("brain.retire-author", "brain", "refusal", r"target\.author_user_id == p\.user_id or ", "",
           "the author may retire their own knowledge (knowledge:retire, as memory:change): dropped",
           "access/policy.py"),
    # --- search/engine.py -----------------------------------------------------------------------------
    Mutant("engine.limit", "engine", "SearchEngine.search", r"if seen >= wanted:", "if seen > wanted:",
           "a page holds limit matches: one more"),
    Mutant("engine.offset", "engine", "SearchEngine.search", r"if seen >= req\.offset:", "if seen > req.offset:",
           "a page starts at offset: one later"),
    Mutant("engine.first-per-file", "engine", "SearchEngine.search", r"hits \+= 1\n(\s+)if not req\.all_lines:",
           r"hits += 1\n\1if False:", "one match per file unless all_lines: every line"),
    Mutant("engine.budget", "engine", "SearchEngine.search", r"if more_to_read and time\.monotonic\(\) > deadline:",
           ALWAYS, "a scan stops at its time budget: never"),
    Mutant("engine.one-page", "engine", "SearchEngine.search", r"if len\(page\) < size:", "if True:",
           "candidates are read page after page: the first page only"),
    Mutant("engine.limit-min", "engine", "SearchEngine.search", r"if req\.limit < 1:", "if req.limit < 0:",
           "a limit of 0 accepted"),
    Mutant("engine.smart-case", "engine", "ignores_case", r"return not has_upper\(query\)", "return True",
           "smart case: a capital makes the search case-sensitive: never"),
    Mutant("engine.cut", "engine", "_cut", r"if len\(hit\.text\) <= width:", "if len(hit.text) < width:",
           "a line of exactly the width is not shortened: it is"),
    # --- watcher.py -----------------------------------------------------------------------------------
    Mutant("M5", "watcher", "VaultWatcher._scope",
           r"\"\" in paths or any\(p\.rsplit\(\"/\", 1\)\[-1\] in IGNORE_FILES for p in paths\)", "\"\" in paths",
           "a changed ignore file re-syncs the whole vault: only the file"),
    Mutant("watcher.ignore-files-watched", "watcher", "VaultWatcher._wanted", r" or parts\[-1\] in IGNORE_FILES", "",
           "the ignore files are watched although their names are hidden: not watched"),
    Mutant("watcher.moved-vault", "watcher", "VaultWatcher._lead", r"if not _same_folder\(self\._vault, watched\):",
           ALWAYS, "a vault folder moved away and replaced is watched again: dropped"),
    Mutant("watcher.unreadable-retry", "watcher", "VaultWatcher._sync_pending", r"self\._pending = unreadable",
           "self._pending = set()", "a file that could not be read is read again: dropped"),
    # --- services/knowledge.py: hidden answered as missing (M3) ---------------------------------------
    Mutant("M3", "knowledge", "KnowledgeService.read_doc",
           r"(\n\s+)doc = self\.store\.documents\.get",
           r"\1if rel and not self._may_read(p, project) and self.store.identity.project(project) is not None:"
           r"\1    raise NotFound(f'Not found: {path} (it is not shared with you)')\1doc = self.store.documents.get",
           "a hidden document answers a different sentence from a missing one"),
    Mutant("M3.brain", "knowledge", "KnowledgeService._brain", r"if project and seen\.allowed\(READ, project\):",
           "if project and not seen.allowed(READ, project) and self.store.identity.project(project) is not None:\n"
           "            raise NotFound(f\"Not found: {brain_id}\", field=\"brainId\")\n        if project:",
           "a hidden brain's refusal names a field a missing one does not"),
    Mutant("M3.notes-path", "knowledge", "KnowledgeService.search_notes",
           r"if not self\._may_read\(p, path_project\):",
           "if not self._may_read(p, path_project) and self.store.identity.project(path_project) is None:",
           "search_notes with a path in a hidden project searches it (only a missing one is refused)"),
)

_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}


@dataclass(frozen=True)
class AutoMutant:
    """An automatic operator swap: the ``index``-th swappable node (in ast.walk order) of function ``where``."""

    id: str
    module: str
    where: str
    index: int
    why: str

    def apply(self, source: str) -> str | None:
        tree = ast.parse(source)
        node = next((n for q, n in _functions(tree) if q == self.where), None)
        if node is None:
            return None
        candidates = list(_swappable(node))
        if self.index >= len(candidates):
            return None
        _swap(candidates[self.index])
        start, end = _span(source, node)
        indent = " " * node.col_offset
        text = "\n".join(indent + line if line else line for line in ast.unparse(node).splitlines()) + "\n"
        return source[:start] + text + source[end:]


def _swappable(node: ast.AST) -> Iterator[ast.AST]:
    for child in ast.walk(node):
        compare = isinstance(child, ast.Compare) and len(child.ops) == 1 and type(child.ops[0]) in _SWAPS
        negation = isinstance(child, ast.UnaryOp) and isinstance(child.op, ast.Not)
        if compare or negation or isinstance(child, ast.BoolOp):
            yield child


def _swap(node: ast.AST) -> None:
    if isinstance(node, ast.Compare):
        node.ops = [_SWAPS[type(node.ops[0])]()]
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):  # "not x" becomes "not not x": the negation dropped, in place
        node.operand = ast.UnaryOp(ast.Not(), node.operand)


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Compare):
        return f"{type(node.ops[0]).__name__} -> {_SWAPS[type(node.ops[0])].__name__}"
    if isinstance(node, ast.BoolOp):
        return "and -> or" if isinstance(node.op, ast.And) else "or -> and"
    return "not dropped"


def auto_mutants(module: str) -> list[AutoMutant]:
    source = (ROOT / "src" / "notewell" / MODULES[module].path).read_text(encoding="utf-8")
    found: list[AutoMutant] = []
    for where, node in _functions(ast.parse(source)):
        for index, target in enumerate(_swappable(node)):
            line = getattr(target, "lineno", node.lineno)
            found.append(AutoMutant(f"auto.{module}.{where}.{index}", module, where, index,
                                    f"line {line}: {_describe(target)}"))
    return found


AnyMutant = Mutant | AutoMutant


@dataclass(frozen=True)
class Outcome:
    mutant: AnyMutant
    status: str  # killed, timeout, survived, stale, invalid
    seconds: float
    detail: str  # the first failing test, or why it was not run


def _copy_tree(dest: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".notewell", "*.egg-info")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=skip)
        else:
            shutil.copy2(source, dest / name)


class Runner:
    """The copy of the tree and the covering tests' runs in it."""

    def __init__(self, copy: Path, timeout: float | None) -> None:
        self.copy = copy
        self.timeout = timeout
        self.baseline: dict[str, float] = {}
        self._stamp = int(time.time())  # each write gets a later mtime: no stale .pyc is ever reused

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")
        self._stamp += 2
        os.utime(path, (self._stamp, self._stamp))

    def pytest(self, module: str, timeout: float) -> tuple[str, float, str]:
        tests = [f"tests/{name}" for name in MODULES[module].tests]
        env = {**os.environ, "PYTHONPATH": str(self.copy / "src")}
        started = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                                  cwd=self.copy, env=env, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            return "timeout", time.monotonic() - started, f"over {timeout:.0f} s"
        seconds = time.monotonic() - started
        if proc.returncode == 0:
            return "passed", seconds, ""
        lines = proc.stdout.splitlines()
        failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))] or lines[-1:] or ["?"]
        return "failed", seconds, failed[0][:150]

    def check_baseline(self, module: str) -> str | None:
        """Run the module's tests unmutated: None when they pass, else what failed."""
        status, seconds, detail = self.pytest(module, timeout=1800)
        self.baseline[module] = seconds
        return None if status == "passed" else f"{status}: {detail}"

    def run(self, mutant: AnyMutant) -> Outcome:
        path = self.copy / "src" / "notewell" / mutant.path
        original = path.read_text(encoding="utf-8")
        mutated = mutant.apply(original)
        if mutated is None or mutated == original:
            return Outcome(mutant, "stale", 0.0, f"no single match in {mutant.where}: re-point the mutant")
        try:
            compile(mutated, str(path), "exec")
        except SyntaxError as exc:
            return Outcome(mutant, "invalid", 0.0, f"the mutated module does not compile: {exc}")
        timeout = self.timeout or max(60.0, 3 * self.baseline.get(mutant.module, 60.0))
        self._write(path, mutated)
        try:
            status, seconds, detail = self.pytest(mutant.module, timeout)
        finally:
            self._write(path, original)
        return Outcome(mutant, {"failed": "killed", "passed": "survived"}.get(status, status), seconds, detail)


def _chosen(args: argparse.Namespace) -> list[AnyMutant]:
    modules = args.modules or list(MODULES)
    mutants: list[AnyMutant] = [m for m in CURATED if m.module in modules]
    if args.auto:
        for module in modules:
            mutants += auto_mutants(module)[: args.auto_limit]
    if args.mutants:
        mutants = [m for m in mutants if m.id in args.mutants]
    return mutants


def _list(mutants: Sequence[AnyMutant]) -> None:
    for m in mutants:
        source = (ROOT / "src" / "notewell" / m.path).read_text(encoding="utf-8")
        state = "applies" if (m.apply(source) or source) != source else "STALE"
        print(f"{m.id:32} {m.path:22} {m.where:30} {state:8} {m.why}")


def _report(outcomes: Sequence[Outcome]) -> None:
    counted = [o for o in outcomes if o.status in ("killed", "timeout", "survived")]
    killed = [o for o in counted if o.status != "survived"]
    survivors = [o for o in counted if o.status == "survived"]
    print()
    for module in dict.fromkeys(o.mutant.module for o in outcomes):
        mine = [o for o in counted if o.mutant.module == module]
        dead = sum(o.status != "survived" for o in mine)
        print(f"{module:10} {dead}/{len(mine)} killed" + (f" ({100 * dead / len(mine):.0f}%)" if mine else ""))
    rate = f"{100 * len(killed) / len(counted):.1f}%" if counted else "n/a"
    print(f"kill rate: {len(killed)}/{len(counted)} = {rate}"
          f" (timeouts {sum(o.status == 'timeout' for o in counted)}; not counted: "
          f"{len(outcomes) - len(counted)} stale or invalid)")
    print("survivors:" + ("" if survivors else " none"))
    for o in survivors:
        print(f"  {o.mutant.id} ({o.mutant.path} {o.mutant.where}): {o.mutant.why}")
    for o in outcomes:
        if o.status in ("stale", "invalid"):
            print(f"  {o.status}: {o.mutant.id}: {o.detail}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--modules", nargs="+", choices=list(MODULES), help="only these modules (default: all)")
    parser.add_argument("--mutants", nargs="+", metavar="ID", help="only these mutants (see --list)")
    parser.add_argument("--auto", action="store_true", help="add the automatic operator swaps")
    parser.add_argument("--auto-limit", type=int, default=None, metavar="N", help="at most N automatic per module")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="seconds per mutant (default: 3 x the module's unmutated run, at least 60)")
    parser.add_argument("--list", action="store_true", help="list the mutants and whether each applies; run nothing")
    args = parser.parse_args(argv)
    mutants = _chosen(args)
    if args.list:
        _list(mutants)
        return 0
    if not mutants:
        print("no mutant chosen; see --list", file=sys.stderr)
        return 2
    outcomes: list[Outcome] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="notewell-mutants-") as tmp:
        copy = Path(tmp)
        _copy_tree(copy)
        runner = Runner(copy, args.timeout)
        for module in dict.fromkeys(m.module for m in mutants):
            broken = runner.check_baseline(module)
            print(f"baseline {module}: {', '.join(MODULES[module].tests)}: "
                  f"{broken or 'passed'} in {runner.baseline[module]:.1f} s", flush=True)
            for mutant in (m for m in mutants if m.module == module):
                outcome = (Outcome(mutant, "invalid", 0.0, "the unmutated tests fail") if broken
                           else runner.run(mutant))
                outcomes.append(outcome)
                print(f"{outcome.status:9} {mutant.id:32} {outcome.seconds:6.1f} s  {outcome.detail or mutant.why}",
                      flush=True)
    _report(outcomes)
    print(f"total {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
