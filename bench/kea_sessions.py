"""Builds bench/data/kea_sessions.jsonl: coding-agent sessions derived from public Debian changelogs, each
with a gold label computed from its source, for KEA's yield benchmark (bench/kea_yield_bench.py).

Source: the Debian changelogs (debian/changelog, shipped as /usr/share/doc/PACKAGE/changelog.Debian.gz) of the
packages in PACKAGES (the first set) and FRESH (the fresh set), as Debian 12 installs them; each row names its
package, version and set. Each changelog
entry (a ``*`` bullet, or a ``-``/``+`` item under one, with its continuation lines) that describes a fix or a
change of tool is one piece of work a maintainer did, and becomes one session, derived mechanically:

- the *prompt* is the task: ``PACKAGE: fix <the problem>`` for an entry that fixes, avoids, prevents or works
  around something, else ``maintain the PACKAGE VERSION package`` (with the file the entry names, if any);
- the *events*: for a fix, an ``error`` event with the problem, then a ``fix_applied`` event with how it was
  fixed (the entry's ``by …`` part, else the whole entry); for any other entry, a ``change`` event with the
  entry's text;
- the *outcome*: success (the change was released), summary ``Released in PACKAGE VERSION.``; no vote (a
  changelog records none, so the down-vote path is not measured here).

The gold: the rules the entry states in so many words, by a grammar written for the source and independent
of the extractor's (so the benchmark does not grade the miner against itself):

- ``replace``: X instead of / rather than Y; replace Y with (by) X; switch (move, migrate, port) from Y to X:
  ``{"kind": "replace", "prefer": X, "avoid": Y}`` (X and Y at most 6 words, a leading verb dropped);
- ``avoid``: don't / do not / never / stop R: ``{"kind": "avoid", "avoid": R}``;
- ``recipe``: fix P by Q: ``{"kind": "recipe", "when": P, "do": Q}``.

An entry that states none has no gold: whatever is mined from it is counted against precision.

    .venv/bin/python bench/kea_sessions.py [--out FILE]   # rewrites bench/data/kea_sessions.jsonl (or FILE)
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).with_name("data") / "kea_sessions.jsonl"
PACKAGES = ("python3.11", "coreutils", "openssh-client", "curl", "make", "gzip", "perl", "sqlite3",
            "postgresql-15", "libc6", "gcc-12", "util-linux", "git", "gnupg", "openssl")
FRESH = ("linux-libc-dev", "binutils-common", "libnss-systemd", "clang-14", "libglib2.0-0", "chromium-common",
         "debianutils", "gtk-update-icon-cache", "libthai-data", "libgmp-dev")
"""The fresh set, added after the extractor was changed on the first set and never looked at before its figures
were taken: the ten source packages (one changelog each; llvm-toolchain-15 left out as the same project as 14)
whose changelogs have the most lines with the gold grammar's words, outside PACKAGES' sources."""
PER_PACKAGE = 16  # the newest entries of each changelog that qualify
SIDE_WORDS = 6
_WORK = re.compile(r"\b(fix(es|ed)?|crash|fail(s|ed|ure|ures)?|FTBFS|avoid|prevent|work ?around|instead of"
                   r"|rather than|replace[sd]?|switch(es|ed)? (from|to)|don't|do not|never)\b", re.I)
_NOISE = re.compile(r"^(new upstream|bump|update(d)? (standards|copyright|symbols|the changelog)|team upload"
                    r"|non-maintainer upload|rebuild|import patch(es)? for cve)", re.I)
_HEADER = re.compile(r"^(?P<pkg>[a-z0-9][a-z0-9.+-]*) \((?P<ver>[^)]+)\)")
_BUG = re.compile(r"\s*\((?:closes|lp):?[^)]*\)\.?|\s*closes:\s*#\d+(?:,\s*#\d+)*\.?", re.I)
_FILE = re.compile(r"^(?P<file>(?:debian|d)/[^\s:]+|[\w./-]+\.(?:patch|diff|c|h|py|sh|in|pl|mk)):\s*", re.I)
_FIX = re.compile(r"^(?P<verb>fix(?:es|ed)?|avoid|prevent|work ?around)\s+(?P<problem>.+?)"
                  r"(?:\s+by\s+(?P<how>(?:first\s+|also\s+|not\s+)?\w+ing\b.+))?$", re.I)
_SIDE_END = re.compile(r"\s+(?:on|for|when|in|to|if|as|and|since|because|so|which|from|with|by)\s.*$"
                       r"|[,;:(].*$|\.\s.*$", re.I)
_INSTEAD = re.compile(r"\s+(?:instead of|rather than)\s+", re.I)
_REPLACE = re.compile(r"\breplace[sd]?\s+(?P<y>[^.;]+?)\s+(?:with|by)\s+(?P<x>[^;]+)", re.I)
_SWITCH = re.compile(r"\b(?:switch|move|migrate|port)(?:e?s|e?d)?\s+(?:[\w-]+\s+){0,3}?from\s+(?P<y>[^.;]+?)\s+to\s+"
                     r"(?P<x>[^;]+)", re.I)
_AVOID = re.compile(r"(?:^|[.:;]\s+|\band\s+)(?:don't|do not|never|stop)\s+(?P<r>.{3,}?)(?=[.;,(]\s|[.;]?$)",
                    re.I)
AVOID_WORDS = 10


@dataclass
class Entry:
    package: str
    version: str
    text: str
    context: str  # the parent bullet of a sub-item ("" for a bullet)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip()


def entries(package: str) -> Iterator[Entry]:
    """The changelog's entries, newest first, each joined with its continuation lines."""
    with gzip.open(f"/usr/share/doc/{package}/changelog.Debian.gz", "rt", encoding="utf-8",
                   errors="replace") as f:
        lines = f.read().splitlines()
    version, parent, current, is_sub = "", "", [], False
    for raw in [*lines, ""]:
        header = _HEADER.match(raw)
        bullet = re.match(r"^  \* (.*)", raw)
        sub = re.match(r"^\s{3,}[-+*] (.*)", raw)
        if (header or bullet or sub or not raw.strip() or raw.startswith(" -- ")) and current:
            yield Entry(package, version, _clean(" ".join(current)), parent if is_sub else "")
            if not is_sub:
                parent = _clean(" ".join(current))
            current = []
        if header:
            version, parent = header["ver"], ""
        elif bullet:
            current, is_sub = [bullet[1]], False
        elif sub:
            current, is_sub = [sub[1]], True
        elif current and raw.startswith("    "):
            current.append(raw.strip())


_BEFORE_X = re.compile(r"\b(?:use|using|uses|used|on|to|with|against|call|calling|set|setting|prefer|ship"
                       r"|install|run|build|now)\s+", re.I)


def _before(text: str) -> str:
    """X of "X instead of Y": at most SIDE_WORDS words before the connective, from the last verb on."""
    words = " ".join(_clean(text).split()[-SIDE_WORDS:])
    starts = [m.end() for m in _BEFORE_X.finditer(words)]
    return _clean(words[starts[-1]:] if starts else words).strip(" ,`'\"")


def _after(text: str) -> str:
    """Y of "X instead of Y" (or either side of "replace Y with X"): its first words, up to a clause."""
    return " ".join(_SIDE_END.sub("", _clean(text)).split()[:SIDE_WORDS]).strip(" `'\"")


def gold(text: str) -> list[dict[str, str]]:
    """The rules the entry states (module docstring)."""
    found: list[dict[str, str]] = []
    parts = _INSTEAD.split(text, maxsplit=1)
    if len(parts) == 2:
        x, y = _before(parts[0]), _after(parts[1])
        if x and y:
            found.append({"kind": "replace", "prefer": x, "avoid": y})
    for pattern in (_REPLACE, _SWITCH):
        m = pattern.search(text)
        if m and not found:
            x, y = _after(m["x"]), _after(m["y"])
            if x and y:
                found.append({"kind": "replace", "prefer": x, "avoid": y})
    m = _AVOID.search(text)
    if m:
        found.append({"kind": "avoid", "avoid": " ".join(_clean(m["r"]).split()[:AVOID_WORDS])})
    m = _FIX.match(text)
    if m and m["how"]:
        found.append({"kind": "recipe", "when": _clean(m["problem"]), "do": _clean(m["how"])})
    return found


def session(entry: Entry, n: int) -> dict[str, object]:
    """The session an entry becomes (module docstring)."""
    text = _BUG.sub("", entry.text).strip()
    where = _FILE.match(text)
    body = text[where.end():] if where else text
    body = body[:1].upper() + body[1:]
    fix = _FIX.match(body)
    events: list[dict[str, object]]
    if fix:
        prompt = f"{entry.package}: {fix['verb'].lower()} {_clean(fix['problem'])}"
        events = [{"type": "error", "payload": {"error": _clean(fix["problem"])}},
                  {"type": "fix_applied", "payload": {"fix": _clean(fix["how"] or body)}}]
    else:
        place = f" ({where['file']})" if where else ""
        prompt = f"maintain the {entry.package} {entry.version} package{place}"
        events = [{"type": "change", "payload": {"text": _clean(body)}}]
    return {"id": f"{entry.package}@{entry.version}#{n}", "source": f"debian/changelog of {entry.package}",
            "package": entry.package, "version": entry.version, "entry": entry.text, "context": entry.context,
            "prompt": prompt, "events": events, "success": True, "userFeedback": None,
            "summary": f"Released in {entry.package} {entry.version}.", "gold": gold(body)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the sessions go (default {OUT})")
    out: Path = parser.parse_args(argv).out
    rows: list[dict[str, object]] = []
    for package in (*PACKAGES, *FRESH):
        seen: set[str] = set()
        taken = 0
        for entry in entries(package):
            key = entry.text.lower()
            if key in seen or not _WORK.search(entry.text) or _NOISE.match(entry.text) or len(entry.text) < 20:
                continue
            seen.add(key)
            rows.append({**session(entry, taken), "set": "fresh" if package in FRESH else "first"})
            taken += 1
            if taken == PER_PACKAGE:
                break
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    versions = {p: subprocess.run(["dpkg-query", "-W", "-f=${Version}", p], capture_output=True, text=True).stdout
                for p in (*PACKAGES, *FRESH)}
    golds = sum(len(r["gold"]) for r in rows)  # type: ignore[arg-type]
    print(f"{len(rows)} sessions, {golds} gold rules -> {out}; from {versions}")


if __name__ == "__main__":
    main()
