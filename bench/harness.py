"""What the server benchmarks share: the example vault and its text, a free port, ``notewell serve`` in its
own process, and that process's CPU time."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO

import httpx

from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import Runtime, open_runtime
from notewell.services.memory_rank import STOP_WORDS

NORTHWIND = Path(__file__).resolve().parent.parent / "examples" / "northwind"
BENCH_USER = "bench@example.com"


class VaultText:
    """Sentences and word frequencies of the example vault (generated text reads like real notes)."""

    def __init__(self, root: Path = NORTHWIND) -> None:
        files = [p for p in sorted(root.rglob("*")) if p.suffix in (".md", ".txt")]
        text = "\n".join(p.read_text("utf-8", "replace") for p in files)
        sentences = (s.strip().replace("\n", " ") for s in re.split(r"(?<=[.!?])\s+", text))
        self.sentences = [s for s in sentences if 30 <= len(s) <= 300 and not s.startswith(("#", "|", "-"))]
        counts = Counter(w for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in STOP_WORDS)
        self.words, self.weights = list(counts), list(counts.values())


def indexed_example(tmp: Path, scopes: list[str], db: str | None = None) -> tuple[Path, str, str, Runtime]:
    """(vault, db, token, runtime): a copy of the example vault in tmp indexed into ``db`` (an empty store; by
    default a SQLite file in tmp), with a staff user holding a token of ``scopes``. The caller closes the
    runtime."""
    vault = tmp / "vault"
    shutil.copytree(NORTHWIND, vault, ignore=shutil.ignore_patterns(".notewell"))
    db = db or str(tmp / "index.db")
    rt = open_runtime(str(vault), db)
    try:
        rt.indexing.sync()
        token = staff_token(rt, scopes)
    except BaseException:
        rt.close()
        raise
    return vault, db, token, rt


def staff_token(rt: Runtime, scopes: list[str]) -> str:
    """A new token of ``scopes`` for the staff user bench@example.com, added first if the store has none (without
    a home folder: the vault is not written to)."""
    if rt.store.identity.user_by_email(BENCH_USER) is None:
        rt.administration.add_user(LOCAL_OWNER, BENCH_USER, "staff", handle="bench", home_folder=False)
    return rt.administration.mint_token(LOCAL_OWNER, BENCH_USER, scopes).secret


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(vault: Path, db: str, port: int, *options: str,
                 log: IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    """``notewell serve`` (with ``options``) on loopback, once its /healthz answers; no NOTEWELL_ settings.
    Its log lines go to ``log`` (by default nowhere)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEWELL_")}
    return start_process([sys.executable, "-m", "notewell", "serve", "--port", str(port), "--vault", str(vault),
                          "--db", db, *options], f"http://127.0.0.1:{port}/healthz", env=env, log=log)


def start_process(command: list[str], probe: str, *, env: dict[str, str] | None = None,
                  log: IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    """A server started by ``command``, once an HTTP GET of ``probe`` gets an answer (any status)."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log or subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{' '.join(command[:4])} ... exited with {process.returncode}")
        try:
            httpx.get(probe, timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{' '.join(command[:4])} ... did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int) -> tuple[float, float]:
    """The process's resident memory now and at its peak (VmRSS, VmHWM), in MB (Linux /proc)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
