"""A regex in RE2's syntax respelled for Python's regex parser, which the candidate plan reads (literals.py).

RE2 has spellings Python's parser does not read: ``\\x{1F680}``, ``\\Q...\\E``, ``\\z``, ``(?<name>...)``,
Unicode classes (``\\pL``, ``\\p{Greek}``, ``\\PN``), POSIX classes (``[[:alpha:]]``) and ``\\C``. Without a
respelling such a pattern had no plan, and a search for ``\\x{1F680}launch`` read every document in scope.
The respelling matches the same strings or more, never fewer: a character written in hex or quoted becomes
that character, ``\\z`` Python's ``\\Z``, a named group Python's ``(?P<name>...)``, and a class only RE2 can read
(a Unicode or POSIX class, or a bracket holding one) any one character. A plan drawn from more strings than
the pattern matches still names only literals every match holds: it may find more candidates, never miss one.
"""

from __future__ import annotations

import re

ANY_CHAR = "(?s:.)"
_HEX = re.compile(r"\\x\{([0-9A-Fa-f]{1,8})\}")
_UNICODE_CLASS = re.compile(r"\\[pP](?:\{[^}]*\}|[A-Za-z])")
_POSIX_CLASS = re.compile(r"\[:\^?[a-z]+:\]")
_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")


def python_spelling(pattern: str) -> str | None:
    """``pattern`` (RE2 has accepted it) as Python's parser reads the same strings or more; None where a
    spelling is not understood here (the plan is then "no literal": a scan, slower, never wrong)."""
    out: list[str] = []
    at = 0
    while at < len(pattern):
        if pattern[at] in "[\\":  # a bracket expression or an escape, respelled whole
            found = (_bracket if pattern[at] == "[" else _escape)(pattern, at)
            if found is None:
                return None
            spelled, at = found
            out.append(spelled)
        elif (named := _NAMED_GROUP.match(pattern, at)) is not None:
            out.append("(?P<")
            at = named.end()
        else:
            out.append(pattern[at])
            at += 1
    return "".join(out)


def _hex_char(pattern: str, at: int) -> tuple[str, int] | None:
    """``\\x{...}`` at ``at``: the character as Python's escape, and where the spelling ends."""
    found = _HEX.match(pattern, at)
    if found is None or int(found[1], 16) > 0x10FFFF:
        return None
    return f"\\U{int(found[1], 16):08X}", found.end()


def _escape(pattern: str, at: int) -> tuple[str, int] | None:
    """The escape at ``at``, outside brackets, respelled; and where it ends."""
    if at + 1 >= len(pattern):
        return None
    kind = pattern[at + 1]
    if kind == "Q":  # quoted up to \E, or to the end
        end = pattern.find("\\E", at + 2)
        quoted = pattern[at + 2 :] if end < 0 else pattern[at + 2 : end]
        after = len(pattern) if end < 0 else end + 2
        if not quoted and pattern[after : after + 1] in ("*", "+", "?", "{"):
            return None  # "a+\Q\E?" is "(a+)?" to RE2; respelled "a+?" (lazy), it would need an "a"
        return re.escape(quoted), after
    if kind == "x" and pattern.startswith("{", at + 2):
        return _hex_char(pattern, at)
    if kind in "pP":
        found = _UNICODE_CLASS.match(pattern, at)
        return None if found is None else (ANY_CHAR, found.end())
    if kind == "z":
        return "\\Z", at + 2
    if kind == "C":  # any byte
        return ANY_CHAR, at + 2
    return pattern[at : at + 2], at + 2


def _bracket(pattern: str, at: int) -> tuple[str, int] | None:
    """The bracket expression at ``at`` respelled (any one character when it holds a class only RE2 reads);
    and where it ends."""
    out = ["["]
    at += 1
    if pattern.startswith("^", at):
        out.append("^")
        at += 1
    if pattern.startswith("]", at):  # a "]" first is itself
        out.append("\\]")
        at += 1
    only_re2 = False
    while at < len(pattern):
        char = pattern[at]
        if char == "]":
            return (ANY_CHAR if only_re2 else "".join(out) + "]"), at + 1
        if (posix := _POSIX_CLASS.match(pattern, at)) is not None:
            only_re2, at = True, posix.end()
        elif char == "\\":
            if at + 1 >= len(pattern) or pattern[at + 1] == "Q":
                return None
            if pattern[at + 1] in "pP":
                found = _UNICODE_CLASS.match(pattern, at)
                if found is None:
                    return None
                only_re2, at = True, found.end()
            elif pattern[at + 1] == "x" and pattern.startswith("{", at + 2):
                hex_char = _hex_char(pattern, at)
                if hex_char is None:
                    return None
                out.append(hex_char[0])
                at = hex_char[1]
            else:
                out.append(pattern[at : at + 2])
                at += 2
        elif char == "[":  # a "[" inside brackets is itself in RE2; Python would warn of a nested set
            out.append("\\[")
            at += 1
        else:
            out.append(char)
            at += 1
    return None
