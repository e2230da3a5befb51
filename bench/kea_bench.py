"""KEA benchmark: 1,000 closed sessions through the deterministic extractor, against two peers in the same
run: the close that queues each job, and a job that does nothing through the same queue.

    .venv/bin/python bench/kea_bench.py [--sessions N] [--live N] [--db URL_OR_PATH] [--no-semantic]

A member closes ``--sessions`` coding sessions without learnings (each close queues a kea.extract job in its
transaction): prompts are sentences of the example vault; a third carry a correction event ("use X, not Y",
"never …", "always …" with the vault's words), a sixth a failure event followed by a fix, a sixth a down vote
with a reason, the rest nothing to mine. The job runner (services/jobs.py, the one `notewell serve` and
`notewell worker` run) then empties the queue in this process: jobs per second, and each job's time from its
prepare to its commit (p50, p95), against each close's own time (the call the agent waits for) and against as
many jobs of a kind that does nothing, through the same claim and completion (the queue's own cost). Then the
queue lag: ``--live`` sessions are closed one after another while the runner runs on its thread, as in a
server, and each job's wait from its close's call to its start is measured (p50, p95). With meaning on (the
default), each mined rule is embedded for the semantic dedup. Figures are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness import VaultText
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.records.jobs import JobRecord, NewJob
from notewell.runtime import Runtime, open_runtime
from notewell.services.jobs import JobKind, JobRunner, Step
from notewell.services.kea import EXTRACT
from notewell.timestamps import now_iso

SEED = 20261202


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) >= 20 else max(values)


def close_sessions(rt: Runtime, p: Principal, text: VaultText, n: int, rng: random.Random,
                   on_closed: Callable[[str, float], None] | None = None) -> list[float]:
    """Close ``n`` sessions without learnings, the mix of the module docstring; each close's time."""
    closes: list[float] = []
    for i in range(n):
        words = rng.choices(text.words, weights=text.weights, k=4)
        session = rt.brain.start_session(p, prompt=rng.choice(text.sentences), project_name="bench").session.id
        shape = i % 6
        if shape in (0, 1):
            said = [f"use {words[0]} tables, not {words[1]} files", f"never edit the {words[2]} export by hand",
                    f"always check the {words[3]} totals first"][i % 3]
            rt.brain.log_event(p, session, "user_correction", {"text": said})
        elif shape == 2:
            rt.brain.log_event(p, session, "test_error", {"error": f"{words[0]} import failed"})
            rt.brain.log_event(p, session, "fix_applied", {"fix": f"pin the {words[1]} {words[2]} version"})
        elif shape == 3:
            rt.brain.log_event(p, session, "review", {"reason": f"the {words[0]} {words[1]} report was wrong"})
        t0 = time.perf_counter()
        if on_closed is not None:
            on_closed(session, t0)
        rt.brain.report_outcome(p, session, success=shape != 3, user_feedback="down" if shape == 3 else None,
                                summary=rng.choice(text.sentences))
        closes.append(time.perf_counter() - t0)
    return closes


def timed(kind: JobKind, spans: list[float], started: dict[int, float]) -> JobKind:
    """``kind`` with each job's time from its prepare to its commit recorded."""

    def prepare(job: JobRecord) -> Step:
        t0 = time.perf_counter()
        started[job.id] = t0
        step = kind.prepare(job)

        def after(result: str) -> None:
            spans.append(time.perf_counter() - t0)
            step.after(result)

        return Step(step.write, after)

    return JobKind(prepare, kind.failed)


def runner_of(rt: Runtime, kinds: dict[str, JobKind]) -> JobRunner:
    """The runtime's job runner with ``kinds`` only, and without the daily schedule: the day's cross-session and
    evolution jobs are not what is timed here (and a runner that knows only ``kinds`` would fail them and keep them
    pending for a retry, so the live part would wait for them until its deadline)."""
    runner = rt.job_runner()
    runner.kinds = kinds
    runner.on_idle = None
    return runner


def drain(rt: Runtime, kinds: dict[str, JobKind]) -> float:
    runner = runner_of(rt, kinds)
    t0 = time.perf_counter()
    runner.run(drain=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--live", type=int, default=200)
    parser.add_argument("--db", default=None, help="A PostgreSQL URL (default: a SQLite file in a temp folder).")
    parser.add_argument("--no-semantic", action="store_true", help="Exact-rule dedup only (no embedding model).")
    args = parser.parse_args()
    rng = random.Random(SEED)
    text = VaultText()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        if args.no_semantic:
            (vault / "notewell.toml").write_text("semantic = false\n", encoding="utf-8")
        rt = open_runtime(str(vault), args.db or str(Path(tmp) / "index.db"))
        try:
            p = user_principal(rt.administration.add_user(LOCAL_OWNER, "kea@example.com", "member"))
            closes = close_sessions(rt, p, text, args.sessions, rng)
            spans: list[float] = []
            kea = drain(rt, {EXTRACT: timed(rt.brain.kea_kind(), spans, {})})
            mined = len(rt.brain.knowledge(p, limit=10_000))
            for _ in range(args.sessions):
                rt.store.jobs.enqueue(NewJob("bench.noop", {}), now_iso())
            noop = drain(rt, {"bench.noop": JobKind(lambda _job: Step(lambda: "ok"))})
            closed_at: dict[str, float] = {}
            lags: list[float] = []
            started: dict[int, float] = {}
            runner = runner_of(rt, {EXTRACT: timed(rt.brain.kea_kind(), [], started)})
            runner.start()
            close_sessions(rt, p, text, args.live, rng, lambda s, at: closed_at.__setitem__(s, at))
            deadline = time.monotonic() + 120
            while rt.store.jobs.counts().pending + rt.store.jobs.counts().running and time.monotonic() < deadline:
                time.sleep(0.05)
            runner.stop()
            for job in rt.store.jobs.listing("done", args.live, kind=EXTRACT):
                session = str(job.payload["sessionId"])
                if session in closed_at and job.id in started:
                    lags.append(started[job.id] - closed_at[session])
        finally:
            rt.close()
    n = args.sessions
    print(f"store: {'PostgreSQL' if args.db else 'SQLite'}; meaning: {'off' if args.no_semantic else 'on'}")
    print(f"peer 1, brain_report_session_outcome's service call (which queues the job): p50 "
          f"{statistics.median(closes) * 1000:.2f} ms, p95 {p95(closes) * 1000:.2f} ms")
    print(f"KEA (deterministic): {n / kea:.0f} jobs/s; per job p50 {statistics.median(spans) * 1000:.2f} ms, "
          f"p95 {p95(spans) * 1000:.2f} ms; {mined} rules kept from {n} sessions")
    print(f"peer 2, a job doing nothing through the same queue: {n / noop:.0f} jobs/s")
    print(f"ratios: a KEA job's p95 is {p95(spans) / p95(closes):.2f}x a close's; the queue alone runs "
          f"{(n / noop) / (n / kea):.0f}x as many jobs/s")
    if lags:
        print(f"queue lag, {len(lags)} sessions closed while the runner ran: p50 {statistics.median(lags) * 1000:.1f} "
              f"ms, p95 {p95(lags) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
