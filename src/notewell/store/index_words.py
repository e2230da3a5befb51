"""What a trigram index holds of a document: its distinct folded words (both stores index this).

A match lies within a line, and every query trigram is taken inside a run of non-space characters
(records/plan.py), so the trigrams that span spaces and the repeats of a word are never asked for;
leaving them out cuts what is indexed to ~40% of the text (Python source), and the build time with it.
"""

from __future__ import annotations

from notewell.fold import fold


def indexed_text(text: str) -> str:
    """Each distinct word of the folded text once, in order of first use, separated by spaces.

    NUL counts as a space: SQLite's FTS5 tokenizer stops at NUL and PostgreSQL text cannot hold it.
    """
    return " ".join(dict.fromkeys(fold(text).replace("\x00", " ").split()))
