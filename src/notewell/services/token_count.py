"""An offline token counter that approximates BPE tokenizers such as cl100k (no vocabulary, no download).

How it counts: the text is first cut into pre-tokens by a regular expression shaped like cl100k's own
pre-tokenizer (English contractions; a letter run with at most one leading non-letter such as a space;
digit groups of 1 to 3; punctuation runs; whitespace runs). A real BPE then merges bytes inside each
pre-token, never across two; lacking its vocabulary we charge each pre-token by its shape:

- a letter run: 1 token per 6 ASCII letters started (common words of up to 6 letters are one token;
  rarer, longer words split into pieces of about 4 to 6 letters), plus 1 token per non-ASCII letter
  (accented and non-Latin letters are 1 to 3 bytes each and rarely merge far), plus 1 for a leading
  mark other than a space (``(word``);
- a digit group (1 to 3 digits): 1 token, exactly as cl100k;
- a punctuation run: 1 token per 2 characters started (``.``, ``",``, ``**`` are single tokens);
- a whitespace run: 1 token (cl100k merges runs of spaces and of newlines).

The count is additive over pre-tokens, and joining two texts with a newline never counts more than the
two apart plus the newline (no pre-token crosses a line break except whitespace and trailing
punctuation, which only merge), so the packer can count items one by one; it still counts the whole
block at the end. docs/memory.md gives its measured error against a real tokenizer.
"""

from __future__ import annotations

import re

_PRE_TOKEN = re.compile(
    r"(?P<contraction>'(?:[sdmt]|ll|ve|re))"  # 's 'd 'm 't 'll 've 're, as cl100k: before anything else
    r"|(?P<word>[^\r\n\w]?[^\W\d_]+)"  # an optional leading space or mark, then letters
    r"|(?P<digits>\d{1,3})"  # digits, in groups of at most three
    r"|(?P<marks> ?(?:(?!'(?:[sdmt]|ll|ve|re))[^\s\w]|_)+[\r\n]*)"  # punctuation, the underscore; not a contraction
    r"|(?P<space>\s+)",  # whitespace
    re.IGNORECASE,
)
ASCII_LETTERS_PER_TOKEN = 6
PUNCTUATION_PER_TOKEN = 2


def _word_cost(piece: str) -> int:
    lead = 0
    if not (piece[0].isalnum() or piece[0] == "_"):  # a leading mark; a leading space is free
        lead = 0 if piece[0].isspace() else 1
        piece = piece[1:]
    ascii_letters = sum(1 for ch in piece if ch.isascii())
    other = len(piece) - ascii_letters
    return lead + max(1, -(-ascii_letters // ASCII_LETTERS_PER_TOKEN) + other)


def count_tokens(text: str) -> int:
    """The estimated number of tokens of ``text`` (0 for the empty string)."""
    total = 0
    for m in _PRE_TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "word":
            piece = m.group()
            if not piece.isascii():
                total += _word_cost(piece)
            elif piece[0].isalpha():  # most words, counted as _word_cost counts them, faster
                total += (len(piece) + ASCII_LETTERS_PER_TOKEN - 1) // ASCII_LETTERS_PER_TOKEN
            else:  # a leading space (free) or mark (1), then at least one letter
                total += (len(piece) + ASCII_LETTERS_PER_TOKEN - 2) // ASCII_LETTERS_PER_TOKEN + (
                    0 if piece[0].isspace() else 1)
        elif kind == "marks":
            total += max(1, -(-len(m.group().strip()) // PUNCTUATION_PER_TOKEN))
        else:
            total += 1
    return total
