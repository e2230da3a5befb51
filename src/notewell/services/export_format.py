"""The export format (docs/operations.md, "Export and import"): a folder of JSON Lines, one file per table,
and a manifest naming the format's version and each table's columns, row count and SHA-256.

A row is one line: a JSON object of the table's carried columns, keys sorted, no spaces, UTF-8, a flag as
0 or 1, a blob as base64 text. Rows come in the table's key order, so one store's content is one sequence of
bytes whatever backend holds it, and two stores hold the same rows exactly when their manifests are equal.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from notewell.errors import InvalidArgument

FORMAT = "notewell-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MANIFEST_MAX_BYTES = 1 << 20
LINE_MAX_BYTES = 64 << 20  # a row: a memory's content is bounded far below this
HASH_NAME = "sha256"


@dataclass(frozen=True)
class TableEntry:
    """One table as the manifest names it."""

    name: str
    columns: tuple[str, ...]
    rows: int
    sha256: str


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_PLAIN = frozenset({str, int, float, type(None)})  # carried as they are


def line(names: Sequence[str], row: Sequence[Any]) -> bytes:
    """One row as its line (with the newline). Every row of an export, a migration and their checks passes
    here (twice in a migration), so the encoder is made once and plain values are not converted."""
    values = dict(zip(names, row, strict=True))
    for name, value in values.items():
        if type(value) not in _PLAIN:
            values[name] = _carried(value)
    return _ENCODER.encode(values).encode() + b"\n"


def _carried(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def parsed(raw: bytes, table: str, number: int, blobs: Sequence[str]) -> dict[str, Any]:
    """A line read back as values by column (``blobs``: the columns to decode from base64)."""
    try:
        row = json.loads(raw)
    except ValueError as exc:
        raise InvalidArgument("import", f"{table}.jsonl line {number} is not JSON ({exc}); the export is damaged, "
                                        "export again") from None
    if not isinstance(row, dict):
        raise InvalidArgument("import", f"{table}.jsonl line {number} is not a JSON object; export again")
    for name in blobs:
        if isinstance(row.get(name), str):
            row[name] = base64.b64decode(row[name])
    return row


class Checksum:
    """The row count and SHA-256 of a table's lines, as they are written or read."""

    def __init__(self) -> None:
        self.rows = 0
        self._hash = hashlib.sha256()

    def add(self, raw: bytes) -> None:
        self.rows += 1
        self._hash.update(raw)

    @property
    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def manifest_text(entries: Sequence[TableEntry], person: str | None = None, project: str | None = None) -> str:
    """The manifest; ``person``: the email of the one person whose rows alone the export holds; ``project``: the
    id of the one project whose rows alone it holds."""
    tables = {e.name: {"columns": list(e.columns), "rows": e.rows, HASH_NAME: e.sha256} for e in entries}
    data: dict[str, object] = {"format": FORMAT, "version": FORMAT_VERSION, "tables": tables}
    if person is not None:
        data["person"] = person
    if project is not None:
        data["project"] = project
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def read_manifest(folder: Path) -> dict[str, TableEntry]:
    """The tables a manifest names, after checking it is one this Notewell reads."""
    path = folder / MANIFEST
    if not path.is_file():
        raise InvalidArgument("import", f"{folder} holds no {MANIFEST}; name the folder 'notewell export' wrote")
    if path.stat().st_size > MANIFEST_MAX_BYTES:
        raise InvalidArgument("import", f"{path} is over {MANIFEST_MAX_BYTES} bytes, which no export's manifest is")
    try:
        data = json.loads(path.read_bytes())
    except ValueError as exc:
        raise InvalidArgument("import", f"{path} is not JSON ({exc}); export again") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tables"), dict):
        raise InvalidArgument("import", f"{path} is not a Notewell export's manifest (format {FORMAT!r})")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:  # (JSON's true is Python's 1)
        raise InvalidArgument("import", f"{path}: version {_not_a_version(version)}; write \"version\": "
                                        f"{FORMAT_VERSION} (a number, no quotes), or export again")
    if version > FORMAT_VERSION:
        raise InvalidArgument("import", f"the export is in format version {version}, newer than this Notewell "
                                        f"reads ({FORMAT_VERSION}); upgrade Notewell, then import it")
    return {name: _entry(name, table) for name, table in data["tables"].items()}


def _not_a_version(value: object) -> str:
    """What is wrong with a manifest's version that is no format's number, naming its JSON kind where the kind is
    the fault (a string "1" is not the number 1)."""
    if value is None:
        return "is missing (or null)"
    kinds = {str: "the string", bool: "the boolean", float: "the decimal", list: "a list", dict: "an object"}
    kind = kinds.get(type(value), "the number")
    return f"must be the number {FORMAT_VERSION}, not {kind} {json.dumps(value, ensure_ascii=False)[:40]}"


def _entry(name: str, table: Mapping[str, Any]) -> TableEntry:
    columns, rows, digest = table.get("columns"), table.get("rows"), table.get(HASH_NAME)
    if (not isinstance(columns, list) or not all(isinstance(c, str) for c in columns) or not isinstance(rows, int)
            or not isinstance(digest, str)):
        raise InvalidArgument("import", f"the manifest's entry for table {name} lacks columns, rows or {HASH_NAME}; "
                                        "export again")
    return TableEntry(name, tuple(columns), rows, digest)
