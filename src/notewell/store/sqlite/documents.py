"""Documents, their text in regions and the FTS5 trigram index, on SQLite.

A document's text is kept in regions (store/regions.py), compressed, one row each; the trigram index
has a row per region under the region's id. The index is contentless (detail=none) and holds each
region's distinct folded words, so one index answers case-insensitive and case-sensitive queries alike
(a case-sensitive match is also a folded match); the verifier then checks the real text. SQLite 3.40
has no contentless delete, so a delete or an update feeds the old words back to FTS5's 'delete' command.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from itertools import starmap

from notewell.records.documents import CandidateDoc, DocKey, Document, DocumentInput, Scope
from notewell.records.plan import TRIGRAM, And, Lit, Or, Plan, indexed_runs, trigrams
from notewell.store.document_rows import BRAIN_PARENT_IDS, BRAIN_PARENT_INDEX, extension, line_count, meta_from_row
from notewell.store.index_words import indexed_text
from notewell.store.matches import SearchPages, region_bounds
from notewell.store.regions import (
    LAST_SEQ,
    REGION_BITS,
    Region,
    doc_of,
    id_range,
    pack,
    region_changes,
    region_id,
    region_spans,
    split,
    unpack,
)
from notewell.store.shared.dialect import Dialect
from notewell.store.shared.documents import META_COLUMNS, SqlDocuments, SqlDocumentWriter, scope_sql
from notewell.store.shared.migrations import Migration
from notewell.store.shared.project_counts import project_counts_ddl
from notewell.store.sqlite.database import SqliteDatabase, sql_function
from notewell.store.sqlite.dialect import SqliteDialect
from notewell.store.sqlite.match_walk import walk_matches
from notewell.store.sqlite.short_runs import fts_term, pair_terms, region_words, single_term
from notewell.store.sqlite.trigram_counts import DDL as TRIGRAM_COUNTS_DDL
from notewell.store.sqlite.trigram_counts import count_trigrams, rarest, replace_counts, trigram_counts
from notewell.store.sqlite.trigram_shards import (
    SHARDS,
    ParallelShardBuild,
    match_any_shard,
    reindex_shard,
    shard_ddl,
    shard_name,
    shard_of,
    shard_params,
)

MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            path TEXT NOT NULL,
            ext TEXT NOT NULL,
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            line_count INTEGER NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            UNIQUE (project, path)
        )
        """,
        "CREATE INDEX documents_sha ON documents (sha256)",
        """
        CREATE TABLE document_text (id INTEGER PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
            body TEXT NOT NULL)
        """,
        "CREATE VIRTUAL TABLE document_trigrams USING fts5 (body, tokenize = 'trigram', detail = none, content = '')",
        """
        CREATE TABLE skipped_files (project TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL,
            reason TEXT NOT NULL, PRIMARY KEY (project, path))
        """,
        "CREATE TABLE vault_projects (id TEXT PRIMARY KEY)",
        """
        CREATE TABLE brains (
            project TEXT NOT NULL, folder TEXT NOT NULL, title TEXT NOT NULL, summary TEXT NOT NULL,
            parent TEXT, documents TEXT NOT NULL, PRIMARY KEY (project, folder)
        )
        """,
    ),
    # The indexed text is folded already: FTS5 folding it again only cost time (~7% of a build).
    (
        "DROP TABLE document_trigrams",
        """
        CREATE VIRTUAL TABLE document_trigrams USING fts5 (
            body, tokenize = 'trigram case_sensitive 1', detail = none, content = '')
        """,
        """
        INSERT INTO document_trigrams (rowid, body)
            SELECT id, notewell_indexed_text(body) FROM document_text ORDER BY id
        """,
    ),
    # The index in shards by document id, so that a build of a fresh store fills them in parallel; each
    # holds a document's distinct words (indexed_text) rather than its whole folded text.
    (
        "DROP TABLE document_trigrams",
        shard_ddl(shard_name(0)),
        shard_ddl(shard_name(1)),
        f"""
        INSERT INTO {shard_name(0)} (rowid, body)
            SELECT id, notewell_indexed_text(body) FROM document_text WHERE id % 2 = 0 ORDER BY id
        """,
        f"""
        INSERT INTO {shard_name(1)} (rowid, body)
            SELECT id, notewell_indexed_text(body) FROM document_text WHERE id % 2 = 1 ORDER BY id
        """,
    ),
    # The text in compressed regions, each with its own trigram row (store/regions.py). SqliteDocuments
    # moves the texts of document_text over and re-indexes them, then drops it (_move_old_texts).
    ("CREATE TABLE document_regions (id INTEGER PRIMARY KEY, first_line INTEGER NOT NULL, body BLOB NOT NULL)",),
    # How many regions hold each trigram: a query asks FTS5 for its rarest ones (trigram_counts.py).
    (TRIGRAM_COUNTS_DDL,),
    # Each project's first and last document id, so that a scoped query asks FTS5 for that range only.
    ("CREATE INDEX documents_project_id ON documents (project, id)",),
    # Each project's count and bytes, kept by the writer (store/shared/project_counts.py).
    project_counts_ddl(SqliteDialect.words),
    # Each region's words end with their distinct characters, so runs of one or two characters are
    # answered from the index (short_runs.py): every region is indexed again.
    tuple(statement for shard in range(SHARDS) for statement in reindex_shard(shard)),
    # A brain's parent by its id, so that it may be a brain of another project (docs/indexing.md).
    BRAIN_PARENT_IDS,
    # A brain's sub-brains found by their parent (getBrain, listBrains).
    BRAIN_PARENT_INDEX,
]

_TEXT_BATCH = 16
_OLD_TEXTS = "SELECT 1 FROM sqlite_master WHERE name = 'document_text'"
FEW_MATCHES = 8192  # up to this many trigram matches, candidates are looked up by id (see candidates)
MANY_MATCHES = 32768  # and up to this many when a walk in order did not fill the page
RANGE_PROJECTS = 16  # a scope of up to this many projects asks FTS5 for its documents' ids only
MAX_REGION_ID = 2**63 - 1


def fts_query(plan: Plan, counts: Mapping[str, int] | None = None,
              pairs: Mapping[str, str | None] | None = None) -> str | None:
    """The FTS5 MATCH expression for a plan: AND of each literal's terms, OR between branches; None when
    no region can match (a pair of characters no word holds). A run of three characters or more asks for
    its trigrams (with ``counts``, its rarest ones: trigram_counts.py), a pair as ``pairs`` says (any of the
    trigrams it starts, or its two characters), a single character for its own term (short_runs.py)."""
    if isinstance(plan, Lit):
        terms: list[str] = []
        for run in indexed_runs(plan.text):
            if len(run) >= TRIGRAM:
                terms += map(fts_term, trigrams(run) if counts is None else rarest(trigrams(run), counts))
            elif len(run) == 1:
                terms.append(fts_term(single_term(run)))
            elif found := (pairs or {}).get(run):
                terms.append(found)
            else:
                return None
        return " AND ".join(dict.fromkeys(terms))
    assert isinstance(plan, And | Or)
    parts = [fts_query(p, counts, pairs) for p in plan.parts]
    if isinstance(plan, And):
        return None if None in parts else "(" + " AND ".join(p for p in parts if p is not None) + ")"
    kept = [p for p in parts if p is not None]
    return "(" + " OR ".join(kept) + ")" if kept else None


def plan_trigrams(plan: Plan) -> list[str]:
    """Every trigram a plan's literals could ask for."""
    if isinstance(plan, Lit):
        return [g for run in plan.text.split() for g in trigrams(run)]
    assert isinstance(plan, And | Or)
    return [g for part in plan.parts for g in plan_trigrams(part)]


def plan_pairs(plan: Plan) -> list[str]:
    """Every run of two characters a plan's literals ask for."""
    if isinstance(plan, Lit):
        return [run for run in indexed_runs(plan.text) if len(run) == 2]
    assert isinstance(plan, And | Or)
    return [pair for part in plan.parts for pair in plan_pairs(part)]


def _region_range(conn: sqlite3.Connection, scope: Scope) -> tuple[int, int]:
    """The first and last region id of the scope's projects' documents (every region id when the scope
    names more than ``RANGE_PROJECTS``). A query scoped to one of six copies of a vault read all six
    copies' trigram rows, then dropped five sixths of the matches: `kerberos` at 1 GB 2.5 ms p95 against
    1.1 at 170 MB; asked for the copy's range, FTS5 takes 0.15 ms instead of 0.63."""
    if not scope.projects or len(scope.projects) > RANGE_PROJECTS:
        return 0, MAX_REGION_ID
    ends = " UNION ALL ".join("SELECT (SELECT min(id) FROM documents WHERE project = ?) AS lo,"
                              " (SELECT max(id) FROM documents WHERE project = ?) AS hi" for _ in scope.projects)
    row = conn.execute(f"SELECT min(lo), max(hi) FROM ({ends})",
                       [p for project in scope.projects for p in (project, project)]).fetchone()
    if row is None or row[0] is None:
        return 1, 0  # no document: no region
    return id_range(row[0])[0], id_range(row[1])[1]


def _words(data: bytes) -> str:
    """What the trigram index holds of a region's text."""
    return region_words(data.decode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class _Matched:
    """The regions the index named for one search, kept for its pages (store/matches.py)."""

    regions: list[int]  # ascending
    documents: str  # their documents' ids, a JSON array
    bounds: dict[int, tuple[int, int]]  # where each document's regions lie in ``regions``

    @classmethod
    def of(cls, conn: sqlite3.Connection, match: list[object]) -> _Matched:
        regions = sorted(rid for (rid,) in conn.execute(match_any_shard(), match))
        return cls(regions, json.dumps(list(dict.fromkeys(map(doc_of, regions)))), region_bounds(regions))

    def page(self, conn: sqlite3.Connection, where: str, params: Sequence[object], order: str,
             page: Sequence[object]) -> list[CandidateDoc]:
        """The page of documents in ``where`` (after the last page's key), in order, each naming its regions."""
        rows = conn.execute(  # CROSS JOIN: SQLite keeps this order, the ids first
            "SELECT d.id, d.project, d.path FROM json_each(?) AS matched CROSS JOIN documents d"
            f" ON d.id = matched.value WHERE {where}{order}", [self.documents, *params, *page])
        return [CandidateDoc(doc_id, project, path, tuple(self.regions[slice(*self.bounds[doc_id])]))
                for doc_id, project, path in rows]


class _Writer(SqlDocumentWriter):
    """Writes in one transaction; trigram rows go to the store's shards, or to a parallel build."""

    def __init__(self, conn: sqlite3.Connection, dialect: Dialect, build: ParallelShardBuild | None = None) -> None:
        super().__init__(conn, dialect)
        self.conn = conn
        self.build = build

    def add_text(self, doc_id: int, text: str) -> None:
        """Store the document's text in regions and index each."""
        self._index(doc_id, split(text.encode("utf-8", "surrogatepass")))

    def _index(self, doc_id: int, regions: Sequence[Region]) -> None:
        """Store these regions of the document and index each."""
        rows = []
        for region in regions:
            rid = region_id(doc_id, region.seq)
            rows.append((rid, region.first_line, pack(region.data)))
            if self.build is not None:
                self.build.insert(rid, _words(region.data))
            else:
                self.conn.execute(f"INSERT INTO {shard_of(doc_id)} (rowid, body) VALUES (?, ?)",
                                  (rid, _words(region.data)))
        self.conn.executemany("INSERT INTO document_regions (id, first_line, body) VALUES (?, ?, ?)", rows)

    def _stored(self, doc_id: int) -> list[Region]:
        return [Region(rid & LAST_SEQ, first_line, unpack(body)) for rid, first_line, body in self.conn.execute(
            "SELECT id, first_line, body FROM document_regions WHERE id BETWEEN ? AND ? ORDER BY id", id_range(doc_id))]

    def _unindex(self, doc_id: int, regions: Sequence[Region]) -> None:
        """Take these regions of the document out of the index (their old words, as FTS5 wants) and the store."""
        table = shard_of(doc_id)
        for region in regions:
            rid, words = region_id(doc_id, region.seq), _words(region.data)
            if self.build is not None:
                self.build.delete(rid, words)
            else:
                self.conn.execute(f"INSERT INTO {table} ({table}, rowid, body) VALUES ('delete', ?, ?)", (rid, words))
        self.conn.executemany("DELETE FROM document_regions WHERE id = ?",
                              [(region_id(doc_id, r.seq),) for r in regions])

    def upsert(self, doc: DocumentInput) -> None:
        ext = extension(doc.path)
        lines = line_count(doc.text)
        row = self.conn.execute(
            "SELECT id, size FROM documents WHERE project = ? AND path = ?", (doc.project, doc.path)
        ).fetchone()
        values = (doc.title, doc.summary, doc.size, doc.mtime_ns, doc.sha256, lines, doc.note, ext)
        self.changed += 1
        self.counts.add(doc.project, 0 if row else 1, doc.size - (row[1] if row else 0))
        if row:
            doc_id, stored = row[0], self._stored(row[0])
            self.conn.execute(
                "UPDATE documents SET title=?, summary=?, size=?, mtime_ns=?, sha256=?, line_count=?, note=?, ext=?"
                " WHERE id = ?", (*values, doc_id),
            )
        else:
            cur = self.conn.execute(
                "INSERT INTO documents (title, summary, size, mtime_ns, sha256, line_count, note, ext, project, path)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*values, doc.project, doc.path),
            )
            doc_id, stored = int(cur.lastrowid or 0), []
        changes = region_changes(stored, split(doc.text.encode("utf-8", "surrogatepass")))
        self._unindex(doc_id, changes.stale)  # only the regions the new text changed
        self.conn.executemany("UPDATE document_regions SET first_line = ? WHERE id = ?",
                              [(r.first_line, region_id(doc_id, r.seq)) for r in changes.moved])
        self._index(doc_id, changes.fresh)

    def delete(self, key: DocKey) -> None:
        row = self.conn.execute("SELECT id, size FROM documents WHERE project = ? AND path = ?", key).fetchone()
        if not row:
            return
        self.changed += 1
        self.counts.add(key[0], -1, -row[1])
        self._unindex(row[0], self._stored(row[0]))
        self.conn.execute("DELETE FROM documents WHERE id = ?", (row[0],))


class SqliteDocuments(SqlDocuments):
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        self._pages: SearchPages[_Matched] = SearchPages()
        db.conn.create_function("notewell_indexed_text", 1, sql_function(indexed_text), deterministic=True)
        db.conn.create_function("notewell_region_words", 1, sql_function(lambda body: _words(unpack(body))),
                                deterministic=True)
        super().__init__(SqliteDialect(db), MIGRATIONS)
        self._move_old_texts()

    def _move_old_texts(self) -> None:
        """Texts stored whole by an older version (document_text) go into regions, re-indexed (once)."""
        if not self.db.conn.execute(_OLD_TEXTS).fetchone():
            return
        with self.db.transaction() as conn:
            if not conn.execute(_OLD_TEXTS).fetchone():
                return  # another process moved them while this one waited for the lock
            for shard in range(SHARDS):
                conn.execute(f"INSERT INTO {shard_name(shard)} ({shard_name(shard)}) VALUES ('delete-all')")
            conn.execute("DELETE FROM document_regions")
            writer = _Writer(conn, self.dialect)
            for doc_id, body in conn.execute("SELECT id, body FROM document_text ORDER BY id"):
                writer.add_text(doc_id, body)
            conn.execute("DROP TABLE document_text")
            count_trigrams(conn)

    @contextmanager
    def writer(self) -> Iterator[_Writer]:
        """One write transaction. On an empty store the trigram shards are built in parallel and copied
        in at the end, on a connection of its own (see SqliteDatabase.isolated_transaction). The trigram
        counts are taken again after a build, or a sync that changed a tenth of the documents or more."""
        if self.db.conn.in_transaction or self._has_documents(self.db.conn):
            with self.db.transaction() as conn:
                yield from self._counted(_Writer(conn, self.dialect))
            return
        with self.db.isolated_transaction() as conn:
            if self._has_documents(conn):  # another indexer filled the store while this one waited for the lock
                yield from self._counted(_Writer(conn, self.dialect))
                return
            with ParallelShardBuild(self.db.path) as build:
                writer = _Writer(conn, self.dialect, build)
                yield writer
                writer.counts.write(writer.sql)
                build.copy_into(conn)
                replace_counts(conn, build.trigram_counts())

    @staticmethod
    def _counted(writer: _Writer) -> Iterator[_Writer]:
        yield writer
        writer.counts.write(writer.sql)
        if not writer.changed:
            return
        documents = writer.conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        if writer.changed * 10 >= documents:
            count_trigrams(writer.conn)

    @staticmethod
    def _has_documents(conn: sqlite3.Connection) -> bool:
        return conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None

    def get(self, project: str, path: str) -> Document | None:
        row = self.db.conn.execute(
            f"SELECT d.id, {META_COLUMNS} FROM documents d WHERE d.project = ? AND d.path = ?", (project, path),
        ).fetchone()
        if not row:
            return None
        bodies = self.db.conn.execute(
            "SELECT body FROM document_regions WHERE id BETWEEN ? AND ? ORDER BY id", id_range(row[0]))
        text = b"".join(unpack(body) for (body,) in bodies).decode("utf-8", "surrogatepass")
        return Document(meta_from_row(row[1:]), text)

    def candidates(self, scope: Scope, plan: Plan | None, *, after: DocKey | None = None,
                   limit: int | None = None) -> list[CandidateDoc]:
        """Few trigram matches (at most ``FEW_MATCHES`` regions) are looked up by id and sorted, and each
        candidate names its matching regions: the cost follows the matches. More are found by walking
        (project, path) in order a batch at a time until the page is full (match_walk.py), which for a
        common literal ends after a few dozen documents. A walk that does not fill the page soon gives
        way (the matches lie further on: Chinese words in a vault of Python): up to ``MANY_MATCHES`` are
        then looked up by id after all, and past that every document whose regions match is walked, those
        candidates read whole. (Walking for a rare literal read the whole scope's index: 11 ms on 165 MB,
        six times that on 1 GB.)"""
        where, params = scope_sql(scope, self.dialect)
        if after is not None:
            where += " AND (d.project, d.path) > (?, ?)"
            params += list(after)
        order, page = " ORDER BY d.project, d.path", []
        if limit is not None:
            order, page = order + " LIMIT ?", [limit]
        conn = self.db.conn
        if plan is None:
            return list(starmap(CandidateDoc, conn.execute(
                f"SELECT d.id, d.project, d.path FROM documents d WHERE {where}{order}", [*params, *page])))
        later, kept = self._pages.kept(plan, scope, after)
        if kept is not None:
            return kept.page(conn, where, params, order, page)
        terms = fts_query(plan, trigram_counts(conn, list(dict.fromkeys(plan_trigrams(plan)))),
                          pair_terms(conn, plan_pairs(plan)))
        if terms is None:
            return []
        match = shard_params(terms, *_region_range(conn, scope))
        if later or self._more_matches(match, FEW_MATCHES):
            self._pages.keep(plan, scope, None)
            if limit is not None and (walked := walk_matches(conn, terms, where, params, limit)) is not None:
                return walked
            if self._more_matches(match, MANY_MATCHES):
                return list(starmap(CandidateDoc, conn.execute(
                    f"SELECT d.id, d.project, d.path FROM documents d"
                    f" WHERE {where} AND d.id IN ({match_any_shard(f'rowid >> {REGION_BITS}')}){order}",
                    [*params, *match, *page])))
        found = _Matched.of(conn, match)
        self._pages.keep(plan, scope, found)
        return found.page(conn, where, params, order, page)

    def _more_matches(self, match: list[object], most: int) -> bool:
        """Whether more than ``most`` regions match, counted in SQLite (bringing 8,193 rows into Python to find
        there are more cost 2.5 ms, this 0.8)."""
        return bool(self.db.conn.execute(f"SELECT count(*) FROM ({match_any_shard()} LIMIT ?)",
                                         [*match, most + 1]).fetchone()[0] > most)

    def texts(self, candidates: Sequence[CandidateDoc],
              plan: Plan | None = None) -> Iterator[tuple[int, int, bytes]]:
        """``plan`` goes unused: no words are kept beside a region to test (the FTS5 index is contentless),
        so every named region is read and verified."""
        conn = self.db.conn
        for start in range(0, len(candidates), _TEXT_BATCH):
            # a span (first, last) as one number: first << REGION_BITS | (last - first), which is < 2**REGION_BITS
            spans = [(first << REGION_BITS) | (last - first)
                     for first, last in region_spans(candidates[start : start + _TEXT_BATCH])]
            rows = conn.execute(  # CROSS JOIN: the spans' order, then each span's regions in order
                "SELECT r.id, r.first_line, r.body FROM json_each(?) AS s CROSS JOIN document_regions r"
                f" ON r.id BETWEEN s.value >> {REGION_BITS} AND (s.value >> {REGION_BITS}) + (s.value & {LAST_SEQ})",
                (json.dumps(spans),))
            for rid, first_line, body in rows:
                yield doc_of(rid), first_line, unpack(body)

    def sizes(self) -> tuple[int, int, int]:
        count, text_bytes = self._totals()
        index_bytes = 0
        with suppress(sqlite3.OperationalError):  # dbstat is a compile-time option of SQLite
            index_bytes = self.db.conn.execute(
                "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'document_trigrams%'"
            ).fetchone()[0]
        return int(count), int(text_bytes), int(index_bytes)
