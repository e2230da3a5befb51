"""Repositories written once in SQL both backends run: identity, credentials and audit.

Each takes a ``Dialect`` (shared/dialect.py), the few things the backends do differently for these plain
tables: placeholders, the column types of keys, flags and generated ids, integrity errors, transactions.
Documents and memories stay per backend: their search indexes (FTS5 vs pg_trgm and tsvector) differ.
"""
