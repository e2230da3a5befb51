"""The packages of src/notewell import one another only downwards, and never in a cycle.

Every import counts: module level, inside a function, and under ``if TYPE_CHECKING`` (a cycle that only
the type checker sees is still two packages that cannot be understood apart). A unit is a sub-package
(``notewell.store``) or a top-level module (``notewell.config``); ``notewell`` itself is the root.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import notewell

SRC = Path(notewell.__file__).resolve().parent

# Top to bottom; a unit may import its own layer's units or lower ones, never a higher layer's.
# docs/architecture.md explains the layers; a new package or module gets a place here.
LAYERS: list[tuple[str, set[str]]] = [
    ("entry points", {"__main__", "cli"}),
    ("the HTTP application", {"http"}),
    ("doors", {"mcp", "api", "web"}),
    ("composition root", {"runtime"}),
    ("services", {"services", "indexer", "watcher", "doctor", "limits", "vault"}),
    ("access and search", {"access", "search"}),
    ("store", {"store"}),
    ("the embedding model", {"meaning"}),
    ("records and small helpers", {"records", "fold", "word_breaks", "paths", "timestamps", "errors", "config",
                                   "json_bounds", "answer_bound", "metrics", "log_lines", "malloc_arenas",
                                   "scratch_files", "notewell"}),
]

# Upward imports still to remove (none).
PENDING: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = ["notewell", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "notewell":
        return None
    if len(parts) == 1:
        return "notewell"
    return parts[1]


def _imported(path: Path, module: str) -> list[tuple[str, int]]:
    """(absolute module, line) for every notewell import in the file, wherever it stands."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "notewell":  # "from notewell import x": x is a unit when it is a module
                found += [(f"notewell.{a.name}" if (SRC / a.name).exists() or (SRC / f"{a.name}.py").exists()
                           else "notewell", node.lineno) for a in node.names]
            else:
                found.append((target, node.lineno))
    return found


def _graph() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> the places ("module:line") that make the edge."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        here = _unit(module)
        for target, line in _imported(path, module):
            there = _unit(target)
            if there is not None and there != here:
                edges[(here, there)].append(f"{module}:{line}")
    return edges


def _cycles(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    succ: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(succ) | {b for _, b in edges}):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_packages() -> None:
    edges = _graph()
    cycles = _cycles(edges)
    detail = [f"{a} -> {b}: {', '.join(edges[(a, b)])}" for c in cycles for a in c for b in c if (a, b) in edges]
    assert not cycles, f"import cycles between {cycles}:\n" + "\n".join(detail)


def test_every_unit_has_a_layer() -> None:
    placed = {u for _, units in LAYERS for u in units}
    units = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    } | {"notewell"}
    missing = sorted(units - placed)
    assert not missing, f"{missing} in no layer: add each to LAYERS in tests/test_layers.py (docs/architecture.md)"


def test_imports_go_down_the_layers() -> None:
    depth = {u: i for i, (_, units) in enumerate(LAYERS) for u in units}
    upward = [
        f"{a} ({LAYERS[depth[a]][0]}) imports {b} ({LAYERS[depth[b]][0]}): {', '.join(places)}"
        for (a, b), places in sorted(_graph().items())
        if a in depth and b in depth and depth[b] < depth[a] and (a, b) not in PENDING
    ]
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_cycle_check_sees_a_cycle() -> None:
    """The check itself, on a made-up graph: store <-> access is a cycle, records -> store is not."""
    edges = {("store", "access"): ["x:1"], ("access", "store"): ["y:2"], ("records", "store"): ["z:3"],
             ("search", "records"): ["w:4"]}
    assert _cycles(edges) == [["access", "store"]]


DOORS = {"__main__", "cli", "http", "mcp", "api", "web"}
WIRED_BY_THE_ROOT = {"notewell.store", "notewell.search"}  # only runtime.py wires the store and the engine


def test_no_door_reaches_past_the_services() -> None:
    """Doors build nothing: no door imports the store or the search engine, or reads the runtime's store or
    engine; they call the services the composition root built (docs/architecture.md)."""
    found: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        if _unit(module) not in DOORS:
            continue
        for target, line in _imported(path, module):
            if any(target == w or target.startswith(f"{w}.") for w in WIRED_BY_THE_ROOT):
                found.append(f"{module}:{line} imports {target}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("store", "engine"):
                found.append(f"{module}:{node.lineno} reads .{node.attr}")
    assert not found, "\n".join(found)


TOOL_PAGES = SRC.parent.parent / "docs" / "tools"  # one generated page per MCP tool (test_mcp_docs keeps them true)


def _said(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module but its docstrings (which may say which tool a service serves)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_service_words_an_answer_in_mcp_tools() -> None:
    """No MCP words in services: a service names a way out by a key (errors.Remedy, brain_scoring.AskBack,
    brain_oracle.NextStep) and each door words it; no string a service answers names an MCP tool."""
    tools = sorted(p.stem for p in TOOL_PAGES.glob("*.md") if "_" in p.stem or p.stem != p.stem.lower())
    assert "brain_teach_knowledge" in tools and "searchKnowledge" in tools
    named = re.compile(r"\b(" + "|".join(map(re.escape, tools)) + r")\b")
    found = [f"{path.relative_to(SRC)}:{node.lineno}: {node.value[:80]!r}"
             for unit in ("services", "access") for path in sorted((SRC / unit).rglob("*.py"))
             for node in _said(ast.parse(path.read_text(encoding="utf-8"), str(path))) if named.search(node.value)]
    assert not found, "MCP tool names in services (return a key the doors word):\n" + "\n".join(found)
