"""Words in scripts written without spaces (Chinese, Japanese) and in Korean, for the word indexes.

SQLite's FTS5 ``unicode61`` tokenizer (which both backends' word indexes use: store/postgres/lexemes.py)
ends a word only at a space or a punctuation mark, so a sentence of Han characters or kana is one word:
"我们的生产数据库是PostgreSQL" was a single token, found neither by 数据库 nor by PostgreSQL. Korean puts
spaces between phrases, not words, and 데이터베이스는 ("the database" with its particle) was one token too.

So the word indexes of memories, taught knowledge and sessions read each such character as a word of its
own (``word_text`` puts a space on either side of it before the tokenizer sees the text), and a query's run
of them becomes a phrase of its characters:

- a strict search finds the run as it is written, anywhere inside a run of the text (a substring: there is
  no word boundary to hold it to), and beside a word of another script without a space between them;
- a tolerant search looks for the run's overlapping pairs of characters (``pairs``), any of which matches,
  ranked by how many a text holds, so a question shares some of its pairs with the memory that answers it.

``word_text`` also settles what the tokenizer would read apart from what a query folds alike: a text is
composed (NFC: an accent typed as a separate mark is one character with its letter, as a query's is, and a
Korean syllable typed as its jamo is the syllable), and ß is ss (the tokenizer lower-cases but does not fold
it, while a query is case-folded: Hauptstraße was found by neither "Hauptstraße" nor "hauptstrasse").
"""

from __future__ import annotations

import re
import unicodedata

_CLOSE_SET = (
    "\u1100-\u11ff"  # Hangul jamo
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3005-\u3007\u3021-\u3029\u3038-\u303b"  # ideographic iteration marks and numerals
    "\u3041-\u309f\u30a0-\u30ff"  # hiragana, katakana
    "\u3130-\u318f\u31f0-\u31ff"  # Hangul compatibility jamo, katakana phonetic extensions
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK unified ideographs and extension A
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul jamo extended, syllables
    "\uf900-\ufaff\uff66-\uff9f"  # CJK compatibility ideographs, half-width katakana
    "\U00020000-\U0003ffff"  # CJK unified ideographs, extensions B and later
)
CLOSE_PATTERN = f"[{_CLOSE_SET}]"
"""A regular expression of one such character, in the syntax Python's and PostgreSQL's share."""
CHANGED_PATTERN = (f"[{_CLOSE_SET}ßẞ\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f"
                   "\u0900-\u0dff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\u2126\u212a\u212b\ufe20-\ufe2f]")
"""One character ``word_text`` may change (or compose with the letter before it: the combining marks, the
Indic scripts' vowel signs, the signs NFC replaces such as Ω Ohm and Å Ångström), in the same syntax; where
a database can, it also asks whether the text is NFC already (store/postgres/word_breaks.py)."""
_CLOSE = re.compile(CLOSE_PATTERN)
# where a space goes: beside such a character, where there is none yet (word_text of its own output is itself)
_BREAK = re.compile(f"(?<=\\S)(?=[{_CLOSE_SET}])|(?<=[{_CLOSE_SET}])(?=\\S)")
_SPACES_BESIDE = re.compile(f" *([{_CLOSE_SET}]) *")
_RUNS = re.compile(f"[{_CLOSE_SET}]+|[^{_CLOSE_SET}]+")


def has_close_script(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces between words."""
    return _CLOSE.search(text) is not None


def word_text(text: str) -> str:
    """``text`` as the word indexes read it: composed, ß as ss, and a space on either side of each such
    character (the text itself when none of these changes it)."""
    if not text.isascii():
        if "ß" in text or "ẞ" in text:  # before composing: ẞ and a mark after it compose with the S it becomes
            text = text.replace("ß", "ss").replace("ẞ", "SS")
        text = unicodedata.normalize("NFC", text)
        if _CLOSE.search(text):
            text = _BREAK.sub(" ", text)
    return text


def unspaced(text: str) -> str:
    """A piece of a ``word_text`` without the spaces put beside such characters (and any the text had there):
    the words FTS5's highlight() marked in it, for a result's ``matched``."""
    return _SPACES_BESIDE.sub(r"\g<1>", text) if _CLOSE.search(text) else text


def pairs(term: str) -> list[str]:
    """What a tolerant search looks for of one query word: the word itself when it has no such character;
    otherwise each run of them as its overlapping pairs of characters (a run of one as itself) and each
    run of other characters as a word, in order, without repeats."""
    if not _CLOSE.search(term):
        return [term]
    out: list[str] = []
    for run in _RUNS.findall(term):
        if not _CLOSE.match(run) or len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return list(dict.fromkeys(out))
