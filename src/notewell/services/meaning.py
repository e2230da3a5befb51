"""Meaning: query vectors for the tolerant tools, and the runner that embeds what the store has queued.

The model (meaning/model.py) is loaded on first use, once per process. When it is off (``semantic = false``
in notewell.toml, ``notewell serve --no-semantic``) or cannot be loaded, every tolerant tool answers by full
text alone and says so in its ``note`` (`unavailable`); nothing fails.

A text the model mostly cannot read (``UNREAD_MAX`` of its characters or more read as [UNK]: most Chinese;
meaning/reading.py) has no meaning here: as a query it gets no vector, so every tolerant tool answers it by
words alone and says why (`words_only`); as a stored memory or session it keeps its vector, but that vector is
never offered as a meaning match (`nearest_memories`, `nearest_sessions`), nor to the brain's semantic dedup.

The runner (`EmbeddingRunner`) is a thread of `notewell serve` (and of `notewell embed` in the foreground):
it claims due queue rows with a lease, embeds them (one text per model run), writes the vectors, and counts a failure
as an attempt with a growing delay (``RETRY_BASE_SECONDS`` doubled per attempt, at most
``RETRY_MAX_SECONDS``). A write in this process wakes it at once; another process's is seen within
``POLL_SECONDS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import numpy as np

from notewell.errors import Unavailable
from notewell.log_lines import line
from notewell.meaning.model import MODEL_ID, Embedder, ModelMissing, load
from notewell.meaning.reading import unread_share
from notewell.meaning.texts import memory_text, session_text
from notewell.records.brain import SessionRecord
from notewell.records.meaning import Job, QueueState
from notewell.records.memories import MemoryQuery, MemoryRecord
from notewell.store.base import Store
from notewell.store.vector_search import Nearest, from_half, similarities, to_half
from notewell.timestamps import iso

BATCH = 32  # queue rows claimed per step
LEASE_SECONDS = 30  # a runner killed mid-batch: its rows are claimed again after this (a batch takes 1-3 s)
RETRY_BASE_SECONDS = 5.0
RETRY_MAX_SECONDS = 3600.0
POLL_SECONDS = 0.5
QUERY_CACHE = 256  # query vectors kept (an agent repeats its queries)
QUERY_THREADS = 2  # nearest_memories_ahead searches at once; more wait their turn
# a text of which this share of the characters or more is read as [UNK] has no meaning here (docs/memory.md,
# "Meaning": measured on the manual pages of bench/model_compare.py and the Chinese rules of an outside probe)
UNREAD_MAX = 0.5
# texts that say nothing: a query as near to one of them as to a memory found that memory by no meaning of its own
# ("zzz" is at 0.39 from "ok", and from a memory "ok"); services/hybrid.py's meaning_bar
CONTENT_FREE = ("ok", "yes", "no", "done", "thanks", "hmm", "hello", "lgtm", "asdf", "?", "...", "etc")

_log = logging.getLogger("notewell.meaning")


def _at(seconds: float = 0.0) -> str:
    return iso(datetime.now(UTC) + timedelta(seconds=seconds))


def retry_delay(attempts: int) -> float:
    """Seconds before the next try of a job that has failed ``attempts`` times (1 or more)."""
    return float(min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** max(0, attempts - 1)))


class MeaningService:
    def __init__(self, store: Store, enabled: bool = True, off_reason: str = "semantic = false in notewell.toml"):
        self.store = store
        self._off: str | None = None if enabled else off_reason
        self._embedder: Embedder | None = None
        self._failed: str | None = None
        self._loading = threading.Lock()
        self._queries: OrderedDict[str, bytes] = OrderedDict()
        self._queries_lock = threading.Lock()
        self._content_free: np.ndarray | None = None  # CONTENT_FREE's vectors, made once
        self._ahead = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="notewell-query")
        self.work = threading.Event()  # set by a write in this process: the runner looks at once
        self._on_missing: Callable[[str], None] | None = None

    # --- the model --------------------------------------------------------------------------------------

    def turn_off(self, reason: str) -> None:
        self._off = reason

    def when_missing(self, said: Callable[[str], None]) -> None:
        """Call ``said`` with why once the model turns out not to load (at once if it did already): a server
        records it, so that embed --status and doctor, run where the model loads, say its queue only waits."""
        self._on_missing = said
        if self._failed is not None:
            self._tell_missing(self._failed)

    def embedder(self) -> Embedder | None:
        """The loaded model, or None when meaning is off or the model cannot be loaded (`unavailable` says why)."""
        if self._off is not None:
            return None
        if self._embedder is None and self._failed is None:
            failed = None
            with self._loading:
                if self._embedder is None and self._failed is None:
                    try:
                        self._embedder = load()
                    except ModelMissing as exc:
                        self._failed = failed = str(exc)
                        _log.warning("op=meaning.load outcome=error reason=%s", exc)
            if failed is not None:
                self._tell_missing(failed)
        return self._embedder

    def _tell_missing(self, why: str) -> None:
        if self._on_missing is None:
            return
        try:
            self._on_missing(why)
        except Exception as exc:  # the store went away meanwhile: the tools answer by words all the same
            _log.warning(line("meaning.load", outcome="unrecorded", error=" ".join(str(exc).split())[:200]))

    @property
    def switched_off(self) -> bool:
        return self._off is not None

    @property
    def missing(self) -> bool:
        """The model was asked for and could not be loaded (checked without loading it)."""
        return self._failed is not None

    @property
    def unavailable(self) -> str | None:
        """Why the tolerant tools answer by words alone, or None when meaning is on."""
        if self.embedder() is not None:
            return None
        return self._off or self._failed

    def nearest_memories_ahead(self, query: MemoryQuery, text: str) -> Callable[[], list[Nearest[MemoryRecord]]]:
        """Start `nearest_memories` on a thread of its own, for a caller that has its word search to run
        meanwhile (recall, the brain's retrieval); returns the function that waits for its answer. The model's
        run, the scoring of the held vectors and SQLite all release Python's lock, so the two searches overlap
        on the two cores: the call costs the longer of them, not their sum."""
        if self._off is not None or self._failed is not None:
            return list
        try:
            found = self._ahead.submit(self.nearest_memories, query, text)
        except RuntimeError:  # closing: the caller's own thread does it
            return lambda: self.nearest_memories(query, text)
        return found.result

    def query_vector(self, text: str) -> bytes | None:
        """The float16 vector of a query (kept for the next same query), or None when meaning is unavailable or
        the model mostly cannot read ``text`` (`unreadable`)."""
        if self.embedder() is None or unreadable(text):
            return None
        with self._queries_lock:
            if text in self._queries:
                self._queries.move_to_end(text)
                return self._queries[text]
        return self._make(text)

    def alike(self, text: str, other: str) -> float | None:
        """The cosine similarity of two short texts, or None when meaning is unavailable: rule_polarity's swapped
        words (not kept with the queries: they would push agents' queries out)."""
        model = self.embedder()
        if model is None:
            return None
        vectors = model.embed([text, other])
        return float(vectors[0] @ vectors[1])

    def one_word(self, word: str) -> bool:
        """Whether the model knows ``word`` as one word of its vocabulary (True when meaning is unavailable)."""
        model = self.embedder()
        return model is None or model.tokenizer.token_to_id(word) is not None

    def beyond(self, refs: Sequence[str], nearest: Sequence[Nearest[MemoryRecord]],
               text: str) -> tuple[dict[Hashable, float], float | None]:
        """What hybrid.fuse weighs words and meaning by, besides the nearest: the similarity of each memory words
        found (``refs``) beyond the nearest, read from its stored vector, and the query's ``noise``. Nothing
        without the nearest (meaning off, nothing embedded in scope): the words then rank alone."""
        if not nearest:
            return {}, None
        close = {n.item.ref for n in nearest}
        similar: dict[Hashable, float] = {
            ref: s for ref, s in self.similarities([ref for ref in refs if ref not in close], text).items()}
        return similar, self.noise(text)

    def noise(self, text: str) -> float | None:
        """The query's best similarity to a text that says nothing (CONTENT_FREE), or None without its vector."""
        vector = self.query_vector(text)
        model = self.embedder()
        if vector is None or model is None:
            return None
        if self._content_free is None:
            self._content_free = np.asarray(model.embed(CONTENT_FREE), dtype=np.float16)
        return float(similarities(self._content_free, from_half(vector)).max())

    def close(self) -> None:
        """Stop the threads of nearest_memories_ahead (a runtime's end); an answer still asked for is made in the
        caller."""
        self._ahead.shutdown(wait=False, cancel_futures=True)

    def _make(self, text: str) -> bytes | None:
        model = self.embedder()
        if model is None:
            return None
        vector = to_half(model.embed_one(text))
        with self._queries_lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

    def similarities(self, refs: Sequence[str], text: str) -> dict[str, float]:
        """The cosine similarity to ``text`` of each of these memories that has a vector (none when meaning is
        unavailable): for candidates words found beyond the nearest in meaning."""
        vector = self.query_vector(text)
        if vector is None or not refs:
            return {}
        found = self.store.meaning.memory_vectors(refs, MODEL_ID)
        query = from_half(vector)
        known = [(ref, data) for ref, data in found.items() if len(data) == len(vector)]
        if not known:
            return {}
        scores = similarities(np.stack([from_half(data) for _ref, data in known]), query)
        return {ref: float(score) for (ref, _data), score in zip(known, scores, strict=True)}

    def nearest_memories(self, query: MemoryQuery, text: str) -> list[Nearest[MemoryRecord]]:
        """The memories of ``query``'s scope nearest in meaning to ``text`` (none when meaning is unavailable)."""
        vector = self.query_vector(text)
        if vector is None:
            return []
        return [n for n in self.store.memories.nearest(query, vector, MODEL_ID)
                if not unreadable(memory_text(n.item.title, n.item.content, n.item.tags))]

    def nearest_sessions(self, user_id: str, brain_projects: Sequence[str] | None, since: str | None, text: str,
                         limit: int) -> list[Nearest[SessionRecord]]:
        """One person's sessions nearest in meaning to ``text`` (none when meaning is unavailable)."""
        vector = self.query_vector(text)
        if vector is None:
            return []
        return [n for n in self.store.brain.nearest_sessions(user_id, brain_projects, since, vector, MODEL_ID, limit)
                if not unreadable(session_text(n.item.prompt, n.item.summary))]

    # --- the queue --------------------------------------------------------------------------------------

    def state(self) -> QueueState:
        return self.store.meaning.state(MODEL_ID)

    def embed_due(self, batch: int = BATCH) -> int:
        """One step of the runner: embed up to ``batch`` due items; how many were taken off the queue. The model
        is loaded when there is first something to embed (about 80 MB of RAM: a server whose agents never remember
        anything does without it until a tolerant tool asks)."""
        if self.switched_off or not self.store.meaning.has_due(_at()):
            return 0
        model = self.embedder()
        if model is None:
            return 0
        lease = _at(LEASE_SECONDS)
        jobs = self.store.meaning.claim(_at(), lease, batch)
        if not jobs:
            return 0
        present = [j for j in jobs if j.text]
        gone = [(j.kind, j.item_id) for j in jobs if not j.text]
        try:
            vectors = model.embed([j.text for j in present])
        except Exception as exc:  # the model failed on this batch: retry it later, log it, keep running
            self._fail(present, exc, lease)
            self.store.meaning.done(MODEL_ID, [], gone, lease)
            return len(gone)
        made = [(j.kind, j.item_id, to_half(v)) for j, v in zip(present, vectors, strict=True)]
        self.store.meaning.done(MODEL_ID, made, gone, lease)
        return len(jobs)

    def _fail(self, jobs: list[Job], exc: Exception, lease: str) -> None:
        retries = [(job.kind, job.item_id, _at(retry_delay(job.attempts + 1))) for job in jobs]
        self.store.meaning.failed(retries, f"{type(exc).__name__}: {exc}", lease)
        _log.warning("op=meaning.embed outcome=error items=%d error=%s", len(jobs), type(exc).__name__)

    def run_in_background(self) -> EmbeddingRunner:
        runner = EmbeddingRunner(self)
        runner.start()
        return runner


MODEL_UNAVAILABLE = "the embedding model is not available on this server (an operator sees why with notewell doctor)"
UNREADABLE = ("the embedding model cannot read most of this query: its vocabulary is English-first and lacks most "
              "of its characters (most Chinese characters, emoji and other symbols are among them)")


def unreadable(text: str) -> bool:
    """Whether the model mostly cannot read ``text`` (``UNREAD_MAX``): its vector would be noise."""
    return unread_share(text) >= UNREAD_MAX


def words_only(meaning: MeaningService | None, query: str | None = None) -> str | None:
    """Why a tolerant search (of ``query``, when given) answers by words alone, as its caller is told (every
    tolerant tool's note, REST's wordsOnly), or None when meaning is on and read the query. A model that does not
    load is said without its file and fix: those are the operator's (notewell doctor, embed --status, the log),
    not an agent's."""
    if meaning is None:
        return "meaning is not set up here"
    why = meaning.unavailable
    if why is None:
        return UNREADABLE if query is not None and unreadable(query) else None
    if meaning.switched_off:
        return why
    return MODEL_UNAVAILABLE


class EmbeddingRunner:
    """The thread that empties the queue while a server runs; ``stop`` ends it after its current batch."""

    def __init__(self, meaning: MeaningService) -> None:
        self.meaning = meaning
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="notewell-embedding", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        if self.meaning.switched_off:
            return
        requeued = False  # the items another model embedded, queued again once (an upgrade's)
        while not self._stopping.is_set() and not self.meaning.missing:  # missing: said once by the load, and by doctor
            try:
                if not requeued:  # inside the try: a store down as the server starts must not end the runner
                    self.meaning.store.meaning.requeue_other_models(MODEL_ID)
                    requeued = True
                taken = self.meaning.embed_due()
            except Exception as exc:  # the store was unreachable for a moment: try again after a pause
                if isinstance(exc, Unavailable):  # its database down, say: one line with why, as the watcher says
                    _log.warning(line("meaning.runner", outcome="error", error=" ".join(str(exc).split())))
                else:  # not expected: its traceback, for a bug report
                    _log.exception("op=meaning.runner outcome=error")
                taken = 0
                self._stopping.wait(5 * POLL_SECONDS)
            if taken == 0:
                self.meaning.work.wait(POLL_SECONDS)
                self.meaning.work.clear()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self.meaning.work.set()
        self._thread.join(timeout)


def embed_all(meaning: MeaningService, progress: Callable[[int], None] | None = None) -> tuple[int, float]:
    """Empty the queue in the foreground (``notewell embed``): every queued item, those a stopped runner left
    leased and those waiting to be retried included, and every item whose vector another model made (an
    upgrade's); (items taken, seconds)."""
    started = time.monotonic()
    total = 0
    meaning.store.meaning.requeue_other_models(MODEL_ID)
    meaning.store.meaning.all_due()
    while True:
        taken = meaning.embed_due()
        if taken == 0:
            return total, time.monotonic() - started
        total += taken
        if progress is not None:
            progress(total)
