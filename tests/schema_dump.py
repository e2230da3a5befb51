"""The schema of a store as plain data (tables, columns, indexes), read from the database itself."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

# Both backends' column types in one vocabulary: SQLite has no boolean (a flag is an INTEGER 0/1 there).
_PG_TYPES = {"text": "text", "integer": "integer", "bigint": "integer", "smallint": "integer", "boolean": "integer",
             "double precision": "real", "real": "real", "bytea": "blob"}
_SQLITE_TYPES = {"TEXT": "text", "INTEGER": "integer", "REAL": "real", "BLOB": "blob"}



@dataclass
class Table:
    columns: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> (type, NOT NULL)
    indexes: dict[str, tuple[tuple[str, ...], bool]] = field(default_factory=dict)  # name -> (columns, unique)


Schema = dict[str, Table]


def sqlite_schema(path: Path) -> Schema:
    conn = sqlite3.connect(path)
    try:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        schema: Schema = {}
        for table in tables:
            columns = {name: (_SQLITE_TYPES.get(decl.upper(), decl.upper()), bool(notnull or pk))
                       for _cid, name, decl, notnull, _default, pk in conn.execute(f"PRAGMA table_info('{table}')")}
            indexes: dict[str, tuple[tuple[str, ...], bool]] = {}
            for _seq, name, unique, origin, _partial in conn.execute(f"PRAGMA index_list('{table}')"):
                if origin == "c":  # made by CREATE INDEX, not by a key or UNIQUE constraint
                    cols = tuple(r[2] for r in conn.execute(f"PRAGMA index_info('{name}')"))
                    indexes[name] = (cols, bool(unique))
            schema[table] = Table(columns, indexes)
        return schema
    finally:
        conn.close()


def postgres_schema(url: str) -> Schema:
    with psycopg.connect(url) as conn:
        schema: Schema = {}
        tables = [name for (name,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            " AND table_type = 'BASE TABLE' ORDER BY table_name")]
        for table in tables:
            columns = {name: (_PG_TYPES.get(kind, kind), nullable == "NO") for name, kind, nullable in conn.execute(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
                " WHERE table_schema = 'public' AND table_name = %s", (table,))}
            indexes: dict[str, tuple[tuple[str, ...], bool]] = {}
            # an expression in an index (attnum 0) reads as None, as SQLite's index_info gives it
            for name, unique, cols in conn.execute(
                "SELECT i.relname, x.indisunique, array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(n, o)"
                "   LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o)"
                " FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid"
                " WHERE t.relname = %s AND t.relnamespace = 'public'::regnamespace"
                " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)", (table,)):
                indexes[name] = (tuple(cols), bool(unique))
            schema[table] = Table(columns, indexes)
        return schema
