"""How much of a text the model can read: the share of its characters that fall into [UNK] word pieces.

all-MiniLM-L6-v2's vocabulary (BERT's, uncased) is English-first. It holds the letters of the Latin, Greek,
Cyrillic, Hebrew and Arabic scripts, Japanese kana and Korean jamo (a Hangul syllable is read as its jamo), but
only some of the Chinese characters, each a word of its own: most Chinese text is read as [UNK] pieces (泄漏,
迁移, 缓存 and 配置 are [UNK] [UNK] each), and a run of kana holding one character the vocabulary lacks inside a
word is one [UNK] as a whole. Texts the model mostly cannot read all land near one another whatever they say,
so their similarities are noise (docs/memory.md, "Meaning": what is done about it, and the measured threshold).

The share is of the characters that the model reads (its first ``MAX_TOKENS`` word pieces, of at most the
text's first ``READ_CHARS`` characters: 256 pieces of Chinese are 256 characters, of English about 1,200),
spaces not counted. A text that is ASCII once its accents are taken off, as the tokenizer takes them off
(English, French, German...), is read in full without being tokenized; the shares of others are kept for the
next time (``_KEPT`` texts), as the same memories come back as candidates query after query.
"""

from __future__ import annotations

import functools
import unicodedata
from pathlib import Path
from typing import Any

from notewell.meaning.model import MAX_TOKENS

READ_CHARS = 512
_KEPT = 4096
_TOKENIZER = Path(__file__).with_name("tokenizer.json")


@functools.cache
def _tokenizer() -> Any:
    from tokenizers import Tokenizer  # there whenever the model is (meaning/model.py)

    tokenizer = Tokenizer.from_file(str(_TOKENIZER))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def _plain_ascii(text: str) -> bool:
    return text.isascii() or "".join(c for c in unicodedata.normalize("NFD", text)
                                     if not unicodedata.combining(c)).isascii()


@functools.lru_cache(maxsize=_KEPT)
def _share(head: str) -> float:
    encoding = _tokenizer().encode(head)
    unknown = _tokenizer().token_to_id("[UNK]")
    read = unread = 0
    for piece, (start, end), special in zip(encoding.ids, encoding.offsets, encoding.special_tokens_mask,
                                            strict=True):
        if not special:
            read += end - start
            unread += end - start if piece == unknown else 0
    return unread / read if read else 0.0


def unread_share(text: str) -> float:
    """The share (0 to 1) of the characters of ``text`` that the model reads as [UNK] (see the module's
    docstring)."""
    head = text[:READ_CHARS]
    return 0.0 if _plain_ascii(head) else _share(head)
