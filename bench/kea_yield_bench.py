"""KEA's yield on real sessions: the sessions of bench/data/kea_sessions.jsonl (derived from public Debian
changelogs by bench/kea_sessions.py, which names the sources and how each session and its gold are made) run
through the deterministic extractor, in a real store, by real kea.extract jobs.

    .venv/bin/python bench/kea_yield_bench.py [--db URL_OR_PATH] [--semantic] [--refine] [--show] [--sessions N]

A member closes each session without learnings (its prompt, its events, its outcome), in a project per
package, as an agent would through brain_report_session_outcome; the job runner then empties the queue
(mine mode, the quality filter, the dedup). Reported, for all sessions and for each half: sessions, rules kept
(knowledge tagged with the session), yield (rules per session), precision (rules that match a gold rule of
their session / rules kept; a rule from a session without gold counts as wrong), recall (gold rules matched by
a kept rule / gold rules), and recall by gold kind.

Match criterion: the content words (lower case, stop words dropped, a final "s" dropped) of the kept rule's
trigger and rule cover at least MATCH_COVER of the gold's key words, which are: for ``replace``, X's and Y's
words, with at least one word of each side present; for ``avoid``, R's; for ``recipe``, the fix's (Q).

The sets: the first set's sessions are in half A or B by the parity of their id's SHA-256; half A is the one
meant to be looked at when changing the extractor, B held out (docs/performance.md says how far that held);
the fresh set (other packages) was added after the extractor was changed and never looked at before its
figures were taken. All three are reported.

``--refine`` measures close-capture's refine instead: each session is closed with one learning, the one an agent
that wrote the changelog line would hand over (trigger "when working on <prompt>", rule the entry without its
bug references), so the close refines it at once; the same figures then say how much of what is handed over
refine keeps, and whether what it keeps states a rule. Meaning is off by default (exact-rule dedup; ``--semantic`` loads
the embedding model for the semantic dedup). Figures are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.records.brain import KnowledgeFilter
from notewell.runtime import open_runtime
from notewell.services.brain_limits import MAX_RULE_CHARS, MAX_TRIGGER_CHARS

DATA = Path(__file__).with_name("data") / "kea_sessions.jsonl"
MATCH_COVER = 0.6
STOP = {"a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "by", "with", "from", "at", "as", "is",
        "are", "be", "it", "its", "this", "that", "not", "no", "use", "using", "instead", "rather", "than",
        "when", "you", "hit", "working", "do", "don't", "never", "always", "avoid"}  # connectives


def words(text: str) -> set[str]:
    found = {w.rstrip("s") if len(w) > 3 else w for w in re.findall(r"[a-z0-9][a-z0-9.+_/-]*[a-z0-9]|[a-z0-9]",
                                                                      text.lower())}
    return {w for w in found if w not in STOP}


def matches(rule: str, gold: dict[str, str]) -> bool:
    """Does a kept rule (its trigger and rule) state the gold rule (module docstring)?"""
    have = words(rule)
    if gold["kind"] == "replace":
        x, y = words(gold["prefer"]), words(gold["avoid"])
        if not (x & have and y & have):
            return False
        key = x | y
    else:
        key = words(gold["avoid"] if gold["kind"] == "avoid" else gold["do"])
    return bool(key) and len(key & have) / len(key) >= MATCH_COVER


def half(session_id: str) -> str:
    return "A" if hashlib.sha256(session_id.encode()).digest()[0] % 2 == 0 else "B"


@dataclass
class Tally:
    sessions: int = 0
    kept: int = 0
    right: int = 0
    golds: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)

    def add(self, row: dict[str, Any], rules: list[str]) -> None:
        self.sessions += 1
        self.kept += len(rules)
        self.right += sum(any(matches(r, g) for g in row["gold"]) for r in rules)
        for g in row["gold"]:
            self.golds[g["kind"]] += 1
            self.found[g["kind"]] += any(matches(r, g) for r in rules)

    def line(self, name: str) -> str:
        gold, hit = sum(self.golds.values()), sum(self.found.values())
        kinds = ", ".join(f"{k} {self.found[k]}/{n}" for k, n in sorted(self.golds.items()))
        precision = f"{self.right / self.kept:.2f}" if self.kept else "n/a"
        recall = f"{hit / gold:.2f}" if gold else "n/a"
        rate = f"{self.kept / self.sessions:.2f}" if self.sessions else "n/a"
        return (f"{name}: {self.sessions} sessions, {self.kept} rules kept, yield {rate} "
                f"rules/session; precision {precision} ({self.right}/{self.kept}); recall {recall} ({hit}/{gold}; "
                f"{kinds})")


def learning(row: dict[str, Any]) -> dict[str, str]:
    """What an agent that wrote the row's changelog line would hand over at the close (--refine)."""
    rule = re.sub(r"\s*\((?:closes|lp):?[^)]*\)|\s*closes:\s*#\d+(?:,\s*#\d+)*", "", row["entry"], flags=re.I)
    return {"trigger": f"when working on {row['prompt']}"[:MAX_TRIGGER_CHARS], "rule": rule[:MAX_RULE_CHARS]}


def run(rows: list[dict[str, Any]], db: str | None, semantic: bool, refine: bool,
        tmp: Path) -> dict[str, list[str]]:
    """Each row closed as a session, the queue emptied; each session's kept rules (trigger and rule)."""
    vault = tmp / "vault"
    vault.mkdir()
    if not semantic:
        (vault / "notewell.toml").write_text("semantic = false\n", encoding="utf-8")
    rt = open_runtime(str(vault), db or str(tmp / "index.db"))
    try:
        p = user_principal(rt.administration.add_user(LOCAL_OWNER, "yield@example.com", "member"))
        ids: dict[str, str] = {}
        projects: set[str] = set()
        for row in rows:
            started = rt.brain.start_session(p, prompt=row["prompt"], project_name=row["package"]).session
            for event in row["events"]:
                rt.brain.log_event(p, started.id, event["type"], event["payload"])
            rt.brain.report_outcome(p, started.id, success=row["success"], user_feedback=row["userFeedback"],
                                    summary=row["summary"], learnings=[learning(row)] if refine else None)
            ids[started.id] = row["id"]
            projects.add(started.brain_project)
        rt.job_runner().run(drain=True)
        kept: dict[str, list[str]] = {row["id"]: [] for row in rows}
        for item in rt.store.brain.list_knowledge(KnowledgeFilter(sorted(projects), order="created",
                                                                        limit=100_000)):
            for tag in item.tags:
                if tag.startswith("session:") and tag[8:] in ids:
                    kept[ids[tag[8:]]].append(f"{item.trigger} :: {item.rule}")
        return kept
    finally:
        rt.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=None, help="A PostgreSQL URL (default: a SQLite file in a temp folder).")
    parser.add_argument("--semantic", action="store_true", help="Meaning on: the semantic dedup (loads the model).")
    parser.add_argument("--refine", action="store_true", help="Close each session with its learning (refine).")
    parser.add_argument("--show", action="store_true", help="Print each session's gold and kept rules.")
    parser.add_argument("--sessions", type=int, default=None, metavar="N",
                        help="only N sessions, every k-th of the file so that each set has some (a smoke run)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.sessions is not None:
        rows = rows[::max(1, len(rows) // max(1, args.sessions))][:args.sessions]
    with tempfile.TemporaryDirectory() as tmp:
        kept = run(rows, args.db, args.semantic, args.refine, Path(tmp))
    tallies = {"all": Tally(), "A": Tally(), "B": Tally(), "fresh": Tally()}
    for row in rows:
        for name in ("all", half(row["id"]) if row["set"] == "first" else "fresh"):
            tallies[name].add(row, kept[row["id"]])
        if args.show and (row["gold"] or kept[row["id"]]):
            where = half(row["id"]) if row["set"] == "first" else "fresh"
            print(f"[{where}] {row['id']}: {row['entry'][:160]}\n    gold {row['gold']}")
            for rule in kept[row["id"]]:
                print(f"    kept {'RIGHT' if any(matches(rule, g) for g in row['gold']) else 'wrong'}: {rule}")
    packages = sorted({row["package"] for row in rows})
    print(f"store: {'PostgreSQL' if args.db else 'SQLite'}; meaning: {'on' if args.semantic else 'off'}; "
          f"mode: {'refine (each close carries its learning)' if args.refine else 'mine (closes without learnings)'}; "
          f"sources: the Debian changelogs of {', '.join(packages)}")
    print(tallies["all"].line("all"))
    print(tallies["A"].line("first set, half A (looked at)"))
    print(tallies["B"].line("first set, half B (held out)"))
    print(tallies["fresh"].line("fresh set (added after the change)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
