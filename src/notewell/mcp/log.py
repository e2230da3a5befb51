"""One structured line per MCP request on stderr: ``op=mcp.tool tool=… durMs=… outcome=…``.

The ops and fields follow external-brain's observability table (mcp.unauth, mcp.session.open,
mcp.tools.list, mcp.tool, mcp.session.close, mcp.session.orphan, mcp.session.token_mismatch), with its
names: a session appears as ``sessionPrefix`` (its id's first 8 characters, never the whole id),
mcp.session.open carries ``total`` (live sessions), and mcp.tool's ``outcome`` is ``ok`` or ``error``, an
error followed by ``reason`` (unknown_tool, scope, invalid_args, refused, unavailable or internal). A token
secret is never logged: callers pass the token id. On stderr each line starts with its UTC time (ISO 8601,
milliseconds), or with ``--log-format json`` is one JSON object of the same fields; every line is also counted
into the metrics it feeds (notewell.metrics).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import sys
from datetime import UTC, datetime
from typing import TextIO

from notewell import metrics
from notewell.errors import ConfigError
from notewell.log_lines import line as line  # re-exported: the doors write log.line(...)
from notewell.log_lines import masked

logger = logging.getLogger("notewell.mcp")


def event(op: str, **fields: object) -> None:
    """Log the line, and count it into the metrics it feeds (notewell.metrics), whether logged or not."""
    metrics.observe(op, fields)
    logger.info(line(op, **fields))


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever sys.stderr is at the moment of each line (test runners swap it)."""

    _notewell = True

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


LEVELS = ("debug", "info", "warning", "error")
LOG_LEVEL_ENV = "NOTEWELL_LOG_LEVEL"


def resolve_level(given: str | None, default: str) -> str:
    """The level --log-level gives, else $NOTEWELL_LOG_LEVEL, else ``default``; a wrong one names its source."""
    level = (given or os.environ.get(LOG_LEVEL_ENV) or default).strip().lower()
    if level not in LEVELS:
        source = "--log-level" if given else LOG_LEVEL_ENV
        raise ConfigError(f"{source}: {level!r} is not a log level; use one of {', '.join(LEVELS)}")
    return level


FORMATS = ("text", "json")
LOG_FORMAT_ENV = "NOTEWELL_LOG_FORMAT"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def resolve_format(given: str | None) -> str:
    """The format --log-format gives, else $NOTEWELL_LOG_FORMAT, else text; a wrong one names its source."""
    chosen = (given or os.environ.get(LOG_FORMAT_ENV) or "text").strip().lower()
    if chosen not in FORMATS:
        source = "--log-format" if given else LOG_FORMAT_ENV
        raise ConfigError(f"{source}: {chosen!r} is not a log format; use one of {', '.join(FORMATS)}")
    return chosen


def _at(created: float) -> str:
    """A record's time in ISO 8601 UTC to the millisecond: lines of several servers sort into one story."""
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TextLines(logging.Formatter):
    """``2026-12-01T23:20:20.123Z op=mcp.tool tool=… …``: the time, then the line as written."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"{_at(record.created)} {record.getMessage()}"
        return f"{text}\n{self.formatException(record.exc_info)}" if record.exc_info else text


class JsonLines(logging.Formatter):
    """One JSON object per line for log shippers: at, level, logger and the line's own fields (op=…), the same
    fields as the text lines; a line that is not ``key=value`` pairs goes whole as ``message``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        data: dict[str, object] = {"at": _at(record.created), "level": record.levelname.lower(),
                                   "logger": record.name}
        data.update(_fields(message) or {"message": message})
        if record.exc_info:
            data["error"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def _fields(message: str) -> dict[str, str]:
    """The ``key=value`` pairs of a line (values quoted as ``line`` quotes them), or {} for any other text."""
    try:
        parts = shlex.split(message, posix=True)
    except ValueError:
        return {}
    pairs = [part.partition("=") for part in parts]
    if not pairs or any(not sep or not _KEY.fullmatch(key) for key, sep, _ in pairs):
        return {}
    return {key: value for key, _, value in pairs}


class _LibraryLines(logging.Filter):
    """A library's record made one of Notewell's lines, ``op=<op> level=… message=…``: psycopg's pool says
    "error connecting in 'notewell': …" while a database is down, which went to stderr as a bare line that no
    op= reader (or JSON shipper) could place. A filter of the libraries' own handler, so that the records of
    their child loggers (psycopg.pq, ...) are made lines too. The one place their text is masked of the database
    URLs' passwords and the pieces libpq cuts them into (log_lines.masked): libpq names a host as it read the URL."""

    def filter(self, record: logging.LogRecord) -> bool:
        op = next(op for name, op in LIBRARY_LOGGERS.items() if record.name == name or record.name.startswith(name))
        record.msg = line(op, level=record.levelname.lower(), message=masked(record.getMessage()))
        record.args = ()
        return True


class _LibraryHandler(_StderrHandler):
    """The libraries' handler (LIBRARY_LOGGERS): Notewell's own stderr, their records made op= lines."""

    def __init__(self) -> None:
        super().__init__()
        self.addFilter(_LibraryLines())


LIBRARY_LOGGERS = {"psycopg.pool": "store.pool", "psycopg": "store.driver"}  # warnings and errors only


def setup(level: str = "info", fmt: str = "text") -> None:
    """Send Notewell's lines (notewell.mcp requests at info, notewell.watch, ...) at ``level`` and above
    to stderr, each with its UTC time, as text or JSON (idempotent: a second call changes level and format);
    the database driver's warnings go the same way, as op= lines of their own (LIBRARY_LOGGERS)."""
    root = logging.getLogger("notewell")
    root.setLevel(level.upper())
    root.propagate = False
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        root.addHandler(handler)
    handler.setFormatter(JsonLines() if fmt == "json" else TextLines())
    library = logging.getLogger("psycopg")  # psycopg.pool's records reach it: LIBRARY_LOGGERS names both
    library.setLevel(logging.WARNING)
    library.propagate = False
    own = next((h for h in library.handlers if isinstance(h, _LibraryHandler)), None)
    if own is None:
        own = _LibraryHandler()
        library.addHandler(own)
    own.setFormatter(handler.formatter)
