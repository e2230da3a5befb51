"""The structured log line every part writes: ``op=<op> key=value …``, a value quoted when it holds a space,
a quote, ``=`` or a line break (mcp/log.py formats, times and ships them).

And the secrets the libraries' own lines must not show (``masked``): psycopg_pool's "error connecting in
'notewell': …" quotes libpq, which names a host as it read the --db URL, and a password with an unencoded "@"
and "," is read in pieces, one of them a host ("failed to resolve host 'Pw9@127.0.0.1'"). Each PostgreSQL
database registers its URL's mask as it opens (store/postgres/database.py); mcp/log.py applies them all.
"""

from __future__ import annotations

from collections.abc import Callable

_MASKS: dict[str, Callable[[str], str]] = {}  # by what each masks (a database's URL): one mask each


def _value(value: object) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n\r\t'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    return text


def line(op: str, **fields: object) -> str:
    """The line of ``op`` and its fields, in the order given; a field that is None is left out."""
    return " ".join([f"op={op}", *(f"{k}={_value(v)}" for k, v in fields.items() if v is not None)])


def mask_in_library_lines(source: str, mask: Callable[[str], str]) -> None:
    """Pass every library's log line through ``mask`` (which takes ``source``'s secrets out of a text)."""
    _MASKS[source] = mask


def masked(text: str) -> str:
    """``text`` (a library's log line) with every registered mask applied."""
    for mask in list(_MASKS.values()):
        text = mask(text)
    return text
