"""Notewell: a self-hosted knowledge and memory server for AI agents."""

import os

# NumPy's BLAS scores the vectors (store/vector_cache.py) on the thread of the request. Its own worker threads
# only fight the server's request threads for the same cores: one matrix-vector product over 10k vectors took
# 11 ms with two BLAS threads on a busy 2-core machine and 1.5 ms with one. Set before NumPy is first imported;
# an operator's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
