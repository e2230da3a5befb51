"""The memory vectors of one store, held in this process as float16 rows, kept current by generation.

Scoring every memory of the store against a query is one pass over the rows (vector_search.similarities: about
15 ms for 100k memories on this machine, against ~100 ms to read their bytes back from the database on each
query). The cache is brought up to date before each search by one small read: the store's vector generation
(store/shared/meaning.py); only vectors of a newer generation are loaded. Vectors of memories forgotten or
superseded since stay in the cache until the process ends: every search checks its candidates against the
live, allowed rows in SQL, so a stale row is never an answer, only a candidate that fails that check.

Its cost is RAM: 768 bytes per memory (77 MB at 100k memories), the price of exact search at that speed.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from notewell.store.shared.dialect import Executor
from notewell.store.vector_search import HALF, similarities

_GROWTH = 1.5


class VectorCache:
    def __init__(self, kind: str, dimensions: int) -> None:
        self.kind = kind
        self.dimensions = dimensions
        self.generation = -1
        self.model = ""
        self._ids = np.empty(0, dtype=np.int64)
        self._rows = np.empty((0, dimensions), dtype=HALF)
        self._size = 0
        self._where: dict[int, int] = {}  # item id -> row
        self._lock = threading.Lock()

    def refresh(self, conn: Executor, model: str) -> None:
        """Load the vectors of ``model`` written since the last refresh (all of them the first time)."""
        current = int(conn.execute("SELECT value FROM meaning_generation WHERE id = 1").fetchone()[0])
        with self._lock:
            if model != self.model:
                self._reset(model)
            if current == self.generation:
                return
            rows = conn.execute("SELECT item_id, vector FROM vectors WHERE kind = ? AND model = ? AND gen > ?"
                                " AND gen <= ?", (self.kind, model, self.generation, current)).fetchall()
            self._add([(int(i), bytes(v)) for i, v in rows])
            self.generation = current

    def _reset(self, model: str) -> None:
        self.model, self.generation, self._size = model, -1, 0
        self._where.clear()

    def _add(self, rows: list[tuple[int, bytes]]) -> None:
        width = self.dimensions * HALF.itemsize
        fresh = [(i, v) for i, v in rows if len(v) == width]
        need = self._size + len(fresh)
        if need > len(self._ids):
            capacity = max(need, int(len(self._ids) * _GROWTH), 1024)
            ids = np.empty(capacity, dtype=np.int64)
            ids[:self._size] = self._ids[:self._size]
            matrix = np.empty((capacity, self.dimensions), dtype=HALF)
            matrix[:self._size] = self._rows[:self._size]
            self._ids, self._rows = ids, matrix
        for item_id, data in fresh:
            vector = np.frombuffer(data, dtype=HALF)
            row = self._where.get(item_id)
            if row is None:
                row = self._size
                self._size += 1
                self._where[item_id] = row
                self._ids[row] = item_id
            self._rows[row] = vector

    def scores(self, query: npt.NDArray[np.float16]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every cached (id, similarity to ``query``)."""
        with self._lock:
            size = self._size
            ids, rows = self._ids[:size], self._rows[:size]
        return ids, similarities(rows, query)
