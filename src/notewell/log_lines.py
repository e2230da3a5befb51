"""The structured log line every part writes: ``op=<op> key=value …``, a value quoted when it holds a space,
a quote, ``=`` or a line break (mcp/log.py formats, times and ships them)."""

from __future__ import annotations


def _value(value: object) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n\r\t'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    return text


def line(op: str, **fields: object) -> str:
    """The line of ``op`` and its fields, in the order given; a field that is None is left out."""
    return " ".join([f"op={op}", *(f"{k}={_value(v)}" for k, v in fields.items() if v is not None)])
