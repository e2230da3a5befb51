"""Path prefixes as ranges, for both backends: ``(path = ? OR (path >= ? AND path < ?))``.

Both stores order paths by code point (SQLite BINARY, PostgreSQL COLLATE "C"), so every path that starts
with a prefix lies between the prefix and the least string after all its continuations. A range, never
LIKE: no character of a prefix is a wildcard (``_`` and ``%`` mean themselves) and case always counts
(SQLite's LIKE would ignore ASCII case).
"""

from __future__ import annotations

from notewell.paths import PATH_MAX_CHARS

_LAST = "\U0010ffff"
_SURROGATES = range(0xD800, 0xE000)


def path_bounds(prefix: str, partial: bool) -> list[str]:
    """The three parameters: the path itself or anything below it (the folder or file ``prefix``), or
    (``partial``) any path that starts with ``prefix``'s characters."""
    if partial:
        return [prefix, prefix, _after(prefix)]
    return [prefix, prefix + "/", prefix + "0"]


def _after(prefix: str) -> str:
    """The least string above every string that starts with ``prefix``: its last character that can grow, grown
    by one code point (skipping the surrogates, which no stored text holds)."""
    stem = prefix.rstrip(_LAST)
    if not stem:  # only U+10FFFF: above every path of at most PATH_MAX_CHARS characters
        return _LAST * (PATH_MAX_CHARS + 1)
    code = ord(stem[-1]) + 1
    return stem[:-1] + chr(0xE000 if code in _SURROGATES else code)
