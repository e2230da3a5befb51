"""The links between documents in SQL both backends run: one table written once over the Dialect.

``document_links`` holds each markdown document's links in reading order (``seq``), with the line, the kind
(its place in ``_KINDS``), the target as written, the anchor and label (NULL when empty), a hash of the
target's folded file name (``name_hash``: what re-resolution finds a link by) and the document it resolved to
(``target_id``; NULL when it names nothing). A row is kept small (issue 29, docs/links.md "What it costs"):
on SQLite it lives in its primary key's b-tree (WITHOUT ROWID).
No text of the line is kept (a snippet per link would cost about as much as the links themselves): a read
takes each link's line from the source's stored regions (``_line_texts``), which both backends keep alike.
A deleted source takes its links with it and a deleted target leaves them unresolved (foreign keys), inside
the indexer's transaction. The indexer resolves (vault/link_resolution.py); this module only keeps the rows.
``document_links_pending`` names the documents stored before links (or, in a ``meetings`` folder, their
action items) were kept: the indexer reads their texts once (indexer._relink) and empties it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final

from notewell.records.documents import DocKey
from notewell.records.links import LINE_TEXT_MAX, LinkInput, LinkRecord, LinkToResolve
from notewell.store.regions import id_range, unpack
from notewell.store.shared.dialect import Dialect, Executor, marks
from notewell.store.shared.migrations import Migration

_CROWDED_AT: Final = 999  # the place of a document's last kept link, as the crowded index was made

LINK_MIGRATIONS: list[Migration] = [
    (
        """
        CREATE TABLE document_links (
            source_id {int64} NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            line INTEGER NOT NULL,
            kind {key} NOT NULL,
            target TEXT NOT NULL,
            anchor TEXT NOT NULL,
            label TEXT NOT NULL,
            name_key {key} NOT NULL,
            target_id {int64} REFERENCES documents (id) ON DELETE SET NULL,
            PRIMARY KEY (source_id, seq)
        )
        """,
        "CREATE INDEX document_links_target ON document_links (target_id)",
        "CREATE INDEX document_links_name ON document_links (name_key)",
        "CREATE TABLE document_links_pending (id {int64} PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE)",
        "INSERT INTO document_links_pending (id) SELECT id FROM documents",
    ),
    (  # meeting notes stored before their action items were kept: the indexer reads them once (vault/meeting_sync.py)
        "INSERT INTO document_links_pending (id) SELECT id FROM documents WHERE lower(path) LIKE '%meetings/%'"
        " AND id NOT IN (SELECT id FROM document_links_pending)",
    ),
    (  # a smaller row (issue 29): no rowid on SQLite, the kind a number, "" as NULL, the folded name as a hash;
        # the links are read again from the documents' texts (pending) rather than converted: a hash needs Python
        "DROP TABLE document_links",
        """
        CREATE TABLE document_links (
            source_id {int64} NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            line INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            target TEXT NOT NULL,
            anchor TEXT,
            label TEXT,
            name_hash INTEGER NOT NULL,
            target_id {int64} REFERENCES documents (id) ON DELETE SET NULL,
            PRIMARY KEY (source_id, seq)
        ){without_rowid}
        """,
        "CREATE INDEX document_links_target ON document_links (target_id)",
        "CREATE INDEX document_links_name ON document_links (name_hash)",
        "INSERT INTO document_links_pending (id) SELECT id FROM documents"
        " WHERE id NOT IN (SELECT id FROM document_links_pending)",
    ),
    (  # the documents holding as many links as the index keeps, found without a probe of every document (a
        # move looks for them: 55 ms at 118,000 documents); 999 is MAX_LINKS_PER_DOCUMENT - 1, written out as a
        # released step is never changed (crowded() asks for the place its caller names, so a new bound stays
        # right, only slower)
        f"CREATE INDEX document_links_crowded ON document_links (source_id) WHERE seq = {_CROWDED_AT}",
    ),
]
_KINDS = ("wikilink", "markdown", "mention")  # the stored number of a kind is its place here
_KIND = "CASE l.kind WHEN 0 THEN 'wikilink' WHEN 1 THEN 'markdown' ELSE 'mention' END"
_MENTION = _KINDS.index("mention")
_BATCH = 500  # names or rows per statement
_COLUMNS = (f"s.project, s.path, l.line, {_KIND}, l.target, coalesce(l.anchor, ''), coalesce(l.label, ''),"
            " l.source_id, t.project, t.path")
_FROM = "FROM document_links l JOIN documents s ON s.id = l.source_id LEFT JOIN documents t ON t.id = l.target_id"


@lru_cache(maxsize=8192)  # a build writes each name for every link to it
def name_hash(name_key: str) -> int:
    """The stored stand-in of a folded file name: 32 bits of its hash (a row holds 4 bytes, not the name). Two
    names may share one: re-resolution then reads a link it did not need to, and finds its target unchanged."""
    return int.from_bytes(hashlib.blake2b(name_key.encode("utf-8"), digest_size=4).digest(), "big", signed=True)


def _region_of(heads: Sequence[tuple[int, int]], line: int) -> tuple[int, int] | None:
    """The (region id, first line) of the region holding ``line``, from a document's regions in order."""
    holding = [head for head in heads if head[1] <= line]
    return holding[-1] if holding else None


def _line_in(body: bytes, first: int, line: int) -> str:
    lines = unpack(bytes(body)).decode("utf-8", "replace").split("\n")
    return lines[line - first][:LINE_TEXT_MAX] if 0 <= line - first < len(lines) else ""


class LinkWrites:
    """The links' writes inside a document write transaction (a SqlDocumentWriter holds one)."""

    def __init__(self, sql: Executor, dialect: Dialect) -> None:
        self.sql = sql
        self.dialect = dialect

    def set_links(self, key: DocKey, links: Sequence[LinkInput]) -> None:
        """The document's links, replacing the ones it had (none for a document not stored)."""
        row = self.sql.execute("SELECT id FROM documents WHERE project = ? AND path = ?", key).fetchone()
        if row is None:
            return
        text = self.dialect.text
        self.sql.execute("DELETE FROM document_links WHERE source_id = ?", (row[0],))
        self.sql.executemany(
            f"INSERT INTO document_links (source_id, seq, line, kind, target, anchor, label, name_hash, target_id)"
            f" VALUES ({marks(9)})",
            [(row[0], seq, link.line, _KINDS.index(link.kind), text(link.target), text(link.anchor) or None,
              text(link.label) or None, name_hash(link.name_key), link.target_id) for seq, link in enumerate(links)])

    def links_named(self, name_keys: Sequence[str]) -> list[LinkToResolve]:
        """The stored links whose target's file name (folded) is one of ``name_keys`` (and a few more, whose
        name shares a hash with one: resolving them again changes nothing)."""
        found: list[LinkToResolve] = []
        hashes = sorted({name_hash(key) for key in name_keys})
        for start in range(0, len(hashes), _BATCH):
            clause, params = self.dialect.one_of("l.name_hash", hashes[start : start + _BATCH])
            rows = self.sql.execute(
                f"SELECT l.source_id, l.seq, s.project, s.path, {_KIND}, l.target, l.target_id FROM document_links l"
                f" JOIN documents s ON s.id = l.source_id WHERE {clause}", params).fetchall()
            found += [LinkToResolve(r[0], r[1], (r[2], r[3]), r[4], r[5], r[6]) for r in rows]
        return found

    def retarget(self, changes: Sequence[tuple[int, int, int | None]]) -> None:
        """New targets for stored links: (source id, seq, target id or None) each."""
        self.sql.executemany("UPDATE document_links SET target_id = ? WHERE source_id = ? AND seq = ?",
                             [(target, source, seq) for source, seq, target in changes])

    def take_pending(self) -> list[DocKey]:
        """The documents stored before links were kept, taken off the list (their links are the caller's now)."""
        rows = self.sql.execute("SELECT d.project, d.path FROM document_links_pending p"
                                " JOIN documents d ON d.id = p.id ORDER BY d.project, d.path").fetchall()
        self.sql.execute("DELETE FROM document_links_pending")
        return [(r[0], r[1]) for r in rows]


_CROWDED: Final = "EXISTS (SELECT 1 FROM document_links l WHERE l.source_id = s.id AND l.seq = ?)"
"""Whether the document ``s`` holds a link at the place given (from 0): at ``links`` - 1, ``links`` or more."""


class SqlLinks:
    """The links repository: a document's outgoing links and its backlinks, within the projects named (which
    ones is the caller's decision: the store knows no permission)."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        dialect.migrate("links", dialect.rendered(LINK_MIGRATIONS))

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.dialect.reading() as conn:
            return conn.execute(sql, params).fetchall()

    def _records(self, rows: Sequence[Any]) -> list[LinkRecord]:
        """Link rows (as _COLUMNS) as records, each with its line's text read from the one region of its source
        that holds it (the regions' first lines are read first: a large source is not read whole)."""
        wanted: dict[tuple[int, int], tuple[int, int] | None] = {}  # (source id, line) -> (region id, first line)
        for source_id in dict.fromkeys(r[7] for r in rows):
            heads = [(rid, first) for rid, first in self._rows(
                "SELECT id, first_line FROM document_regions WHERE id BETWEEN ? AND ? ORDER BY id",
                id_range(source_id))]
            wanted.update({(source_id, r[2]): _region_of(heads, r[2]) for r in rows if r[7] == source_id})
        region_ids = sorted({region[0] for region in wanted.values() if region is not None})
        bodies: dict[int, bytes] = {}
        for start in range(0, len(region_ids), _BATCH):
            clause, params = self.dialect.one_of("id", region_ids[start : start + _BATCH])
            bodies.update(self._rows(f"SELECT id, body FROM document_regions WHERE {clause}", params))
        texts = {key: _line_in(bodies[region[0]], region[1], key[1]) if region is not None else ""
                 for key, region in wanted.items()}
        return [LinkRecord((r[0], r[1]), r[2], r[3], r[4], r[5], r[6], texts[(r[7], r[2])],
                           (r[8], r[9]) if r[8] is not None else None) for r in rows]

    def _outgoing(self, columns: str, source: DocKey, projects: Sequence[str], rest: str = "",
                  page: Sequence[Any] = ()) -> list[Any]:
        """The document's links, their targets shown only inside ``projects`` and mentions only of documents
        there (a mention of nothing is no link); ``columns`` may use ``{visible}``, the target's project test."""
        visible, params = self.dialect.one_of("t.project", list(projects) or [""])
        select = columns.format(visible=visible)
        return self._rows(f"SELECT {select} {_FROM} WHERE s.project = ? AND s.path = ?"
                          f" AND (l.kind <> {_MENTION} OR {visible}){rest}",
                          [*(params * select.count(visible)), *source, *params, *page])

    def outgoing(self, source: DocKey, projects: Sequence[str], limit: int, offset: int = 0) -> list[LinkRecord]:
        """The document's links in reading order, a page of ``limit`` from ``offset``; a target outside
        ``projects`` is left unresolved, and a mention of one left out."""
        columns = (f"s.project, s.path, l.line, {_KIND}, l.target, coalesce(l.anchor, ''), coalesce(l.label, ''),"
                   " l.source_id, CASE WHEN {visible} THEN t.project END, CASE WHEN {visible} THEN t.path END")
        return self._records(self._outgoing(columns, source, projects, " ORDER BY l.seq LIMIT ? OFFSET ?",
                                            (limit, offset)))

    def count_outgoing(self, source: DocKey, projects: Sequence[str]) -> int:
        return int(self._outgoing("count(*)", source, projects)[0][0])

    def _backlinks_where(self, target: DocKey, projects: Sequence[str]) -> tuple[str, list[Any]]:
        clause, params = self.dialect.one_of("s.project", list(projects))
        return f"t.project = ? AND t.path = ? AND {clause}", [*target, *params]

    def backlinks(self, target: DocKey, projects: Sequence[str], limit: int, offset: int = 0) -> list[LinkRecord]:
        """The links to the document from documents of ``projects`` (by source, then line), a page of them."""
        if not projects:
            return []
        where, params = self._backlinks_where(target, projects)
        return self._records(self._rows(
            f"SELECT {_COLUMNS} {_FROM} WHERE {where} ORDER BY s.project, s.path, l.seq LIMIT ? OFFSET ?",
            [*params, limit, offset]))

    def linking(self, target: DocKey, names: Sequence[str], projects: Sequence[str], limit: int) -> list[DocKey]:
        """The documents of ``projects`` that link to the document, or hold a link to a file whose folded name
        is one of ``names`` (which a document arriving or leaving under that name may change), by path, at most
        ``limit``."""
        if not projects:
            return []
        clause, params = self.dialect.one_of("s.project", list(projects))
        named, hashes = self.dialect.one_of("l.name_hash", sorted({name_hash(name) for name in names}) or [0])
        rows = self._rows(f"SELECT DISTINCT s.project, s.path {_FROM} WHERE {clause} AND ((t.project = ? AND "
                          f"t.path = ?) OR {named}) ORDER BY s.project, s.path LIMIT ?",
                          [*params, *target, *hashes, limit])
        return [(str(r[0]), str(r[1])) for r in rows]

    def crowded(self, projects: Sequence[str], links: int, limit: int) -> list[DocKey]:
        """The documents of ``projects`` that hold ``links`` links or more (one at place ``links`` - 1), by path,
        at most ``limit``: those an indexer that keeps a document's first ``links`` links may have cut short. Read
        from the index of such links (document_links_crowded), not a probe of every document."""
        if not projects:
            return []
        clause, params = self.dialect.one_of("s.project", list(projects))
        # the place written out, not bound: a partial index serves a query whose WHERE names its own term; the
        # crowded links first (CROSS JOIN: SQLite's planner walked every document of the projects instead)
        rows = self._rows(f"SELECT s.project, s.path FROM document_links l CROSS JOIN documents s"
                          f" WHERE l.seq = {int(links) - 1:d} AND s.id = l.source_id AND {clause}"
                          " ORDER BY s.project, s.path LIMIT ?", [*params, limit])
        return [(str(r[0]), str(r[1])) for r in rows]

    def is_crowded(self, source: DocKey, links: int) -> bool:
        """Whether the document is one crowded() finds: one probe of the primary key."""
        return bool(self._rows(f"SELECT 1 FROM documents s WHERE s.project = ? AND s.path = ? AND {_CROWDED}",
                               [*source, links - 1]))

    def count_backlinks(self, target: DocKey, projects: Sequence[str]) -> int:
        if not projects:
            return 0
        where, params = self._backlinks_where(target, projects)
        return int(self._rows(f"SELECT count(*) {_FROM} WHERE {where}", params)[0][0])
