"""Both backends make the same schema: the same tables, columns (name, type, NOT NULL) and indexes (name,
columns, uniqueness), read back from a fresh SQLite file and a fresh PostgreSQL database.

The only differences allowed are the ones the search indexes need, listed here: SQLite's FTS5 tables
(trigram candidates and their counts, memory and brain session text search) with the index of each project's
document ids that narrows them, PostgreSQL's document words with their trigram index and grams with theirs
(and the index of the rows whose grams are still to fill in), and the tsvector columns
with their GIN indexes (and the memories' word counts and their totals, which FTS5 keeps inside its tables),
and, where the database has pgvector, the vectors' halfvec column with its HNSW index
and the index of the rows still to copy into it. A new backend-specific part of a search index is added to
these lists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from notewell.store import open_store
from pg import PgCluster
from schema_dump import Schema, postgres_schema, sqlite_schema

SQLITE_ONLY_TABLES = re.compile(
    r"(document_trigrams_\d+|memory_words|memory_stems)(_config|_data|_docsize|_idx)?|trigram_counts"
    r"|brain_session_words_(config|content|data|docsize|idx)")
SQLITE_ONLY_INDEXES = {("documents", "documents_project_id")}  # a scope's range of ids for FTS5
TEXT_SEARCH_TABLES = {"brain_session_words"}  # an FTS5 table on SQLite, tsvector rows on PostgreSQL
# bm25's totals and the log of the changes counts follow (store/postgres/word_totals.py): FTS5 keeps its own; the
# live memories' stems the tolerant search walks (store/postgres/live_stems.py): FTS5's memory_stems holds them
POSTGRES_ONLY_TABLES = {"word_totals", "word_changes", "word_changes_kept", "live_memory_stems"}
POSTGRES_ONLY_COLUMNS = {("document_regions", "words"), ("document_regions", "grams"), ("memories", "words"),
                         ("memories", "stems"), ("memories", "word_count")}
POSTGRES_ONLY_INDEXES = {("document_regions", "document_regions_trigrams"),
                         ("document_regions", "document_regions_grams"),
                         ("document_regions", "document_regions_grams_missing"),
                         ("memories", "memories_words"), ("memories", "memories_stems")}
PGVECTOR_COLUMNS = {("vectors", "near")}
PGVECTOR_INDEXES = {("vectors", "vectors_near"), ("vectors", "vectors_near_missing")}
TYPE_DIFFERENCES: dict[tuple[str, str], tuple[tuple[str, bool], tuple[str, bool]]] = {}


def _shared_part(lite: Schema, pg: Schema, pgvector: bool) -> tuple[Schema, Schema]:
    """Both schemas without the listed backend-specific parts (each of which must exist where listed; the
    pgvector ones exactly where the database has the extension)."""
    lite = {t: v for t, v in lite.items() if not SQLITE_ONLY_TABLES.fullmatch(t) and t not in TEXT_SEARCH_TABLES}
    for table, index in SQLITE_ONLY_INDEXES:
        del lite[table].indexes[index]
    assert set(pg) >= TEXT_SEARCH_TABLES
    assert set(pg) >= POSTGRES_ONLY_TABLES
    pg = {t: v for t, v in pg.items() if t not in TEXT_SEARCH_TABLES | POSTGRES_ONLY_TABLES}
    columns, indexes = POSTGRES_ONLY_COLUMNS, POSTGRES_ONLY_INDEXES
    if pgvector:
        columns, indexes = columns | PGVECTOR_COLUMNS, indexes | PGVECTOR_INDEXES
    for table, column in columns:
        del pg[table].columns[column]
    for table, index in indexes:
        del pg[table].indexes[index]
    for (table, column), (in_lite, in_pg) in TYPE_DIFFERENCES.items():
        assert lite[table].columns[column] == in_lite
        assert pg[table].columns[column] == in_pg
        pg[table].columns[column] = in_lite
    return lite, pg


@pytest.mark.parametrize("extension", ["pgvector", "none"])
def test_both_backends_make_the_same_schema(tmp_path: Path, pg_cluster: PgCluster, extension: str) -> None:
    """With the vector extension in the database (where the cluster has it) and without."""
    name = pg_cluster.create_database() if extension == "pgvector" else pg_cluster.create_plain_database()
    pg_url = pg_cluster.url(name)
    open_store(str(tmp_path / "index.db")).close()
    open_store(pg_url).close()
    try:
        lite, pg = _shared_part(sqlite_schema(tmp_path / "index.db"), postgres_schema(pg_url),
                                extension == "pgvector" and pg_cluster.pgvector)
    finally:
        pg_cluster.drop_database(name)
    assert sorted(lite) == sorted(pg)
    for table in sorted(lite):
        assert lite[table] == pg[table], table
    assert {"users", "projects", "grants", "tokens", "audit_log", "memories", "documents"} <= set(lite)
    assert lite["grants"].indexes == {"grants_project": (("project_id",), False)}
