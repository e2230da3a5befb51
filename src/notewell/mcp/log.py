"""One structured line per MCP request on stderr: ``op=mcp.tool tool=… durMs=… outcome=…``.

The ops and fields follow external-brain's observability table (mcp.unauth, mcp.session.open,
mcp.tools.list, mcp.tool, mcp.session.close, mcp.session.orphan, mcp.session.token_mismatch), with its
names: a session appears as ``sessionPrefix`` (its id's first 8 characters, never the whole id),
mcp.session.open carries ``total`` (live sessions), and mcp.tool's ``outcome`` is ``ok`` or ``error``, an
error followed by ``reason`` (unknown_tool, invalid_args, refused or internal). A token secret is never
logged: callers pass the token id.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

from notewell import metrics
from notewell.errors import ConfigError

logger = logging.getLogger("notewell.mcp")


def _value(value: object) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n\r\t'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    return text


def line(op: str, **fields: object) -> str:
    return " ".join([f"op={op}", *(f"{k}={_value(v)}" for k, v in fields.items() if v is not None)])


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


def setup(level: str = "info") -> None:
    """Send Notewell's lines (notewell.mcp requests at info, notewell.watch, ...) at ``level`` and above
    to stderr as they are (idempotent: a second call only changes the level)."""
    root = logging.getLogger("notewell")
    root.setLevel(level.upper())
    root.propagate = False
    if not any(isinstance(h, _StderrHandler) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
