"""Case folding shared by the index and the verifier.

``str.casefold`` is full Unicode case folding (ß → ss, ς → σ). Turkish dotted capital İ folds to
"i" plus a combining dot above; we drop that dot so that "istanbul" finds "İstanbul", as a person
expects. Folding maps each character on its own and never touches a newline, so folding a whole text
keeps its line count and a match in the folded text lies on the same line as in the original.

On ASCII text (most source and markdown) casefold is lower, and ``str.lower`` is twice as fast there.
"""


def fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    folded = text.casefold()
    return folded.replace("i\u0307", "i") if "\u0307" in folded else folded


def has_upper(text: str) -> bool:
    """Smart case: does the query hold a capital (an upper- or title-case letter)?

    Not "a letter that folding changes": folding also changes lower-case letters such as ß (to "ss")
    and final ς (to σ), and "straße" has no capital.
    """
    return any(ch != ch.lower() for ch in text)
