"""The servers of bench/load_bench.py: N `notewell serve` processes on one store, each on its own port, and the
kill -9 of the one holding the writer lease (then restarted on its port)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness import free_port, memory_mb, start_server, stop
from notewell.runtime import open_runtime

LEADER_WAIT_S = 120.0  # a lease outlives its holder by its term: the next one is elected within it


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Kill:
    """One kill -9 of the leader: which server, how long until it answered again, and until another (or it,
    restarted) held the lease (None: no leader within LEADER_WAIT_S)."""

    server: int
    restart_s: float
    new_leader: int | None = None
    new_leader_s: float | None = None


@dataclass
class Fleet:
    vault: Path
    db: str
    ports: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(cls, vault: Path, db: str, count: int) -> Fleet:
        fleet = cls(vault, db)
        try:
            for _ in range(count):
                port = free_port()
                fleet.ports.append(port)
                fleet.processes.append(start_server(vault, db, port))
        except BaseException:
            fleet.stop()
            raise
        return fleet

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}/mcp" for port in self.ports]

    def rss_mb(self) -> list[float]:
        with self.lock:
            return [memory_mb(p.pid)[0] for p in self.processes]

    def open_files(self) -> list[int]:
        with self.lock:
            return [open_files(p.pid) for p in self.processes]

    def stop(self) -> None:
        for process in self.processes:
            stop(process)

    def leader(self, not_pid: int | None = None) -> int | None:
        """The index of the server the store records as holding the writer lease (not the process ``not_pid``)."""
        rt = open_runtime(str(self.vault), self.db)
        try:
            record = rt.servers.leader()
        finally:
            rt.close()
        pids = [p.pid for p in self.processes]
        if record is None or record.pid == not_pid or record.pid not in pids:
            return None
        return pids.index(record.pid)

    def wait_leader(self, not_pid: int | None = None) -> int | None:
        deadline = time.monotonic() + LEADER_WAIT_S
        while time.monotonic() < deadline:
            found = self.leader(not_pid)
            if found is not None:
                return found
            time.sleep(0.5)
        return None

    def kill_leader(self) -> Kill | None:
        """kill -9 the leader and start it again on its port; then wait for a leader (None: nobody led)."""
        index = self.wait_leader()
        if index is None:
            return None
        killed = self.processes[index]
        started = time.monotonic()
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        replacement = start_server(self.vault, self.db, self.ports[index])
        with self.lock:
            self.processes[index] = replacement
        kill = Kill(index, time.monotonic() - started)
        kill.new_leader = self.wait_leader(not_pid=killed.pid)
        if kill.new_leader is not None:
            kill.new_leader_s = time.monotonic() - started
        return kill
