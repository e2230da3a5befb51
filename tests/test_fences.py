"""The one fenced-code tracker the vault's markdown readers share (vault/fences.py), on CommonMark's rules."""

from __future__ import annotations

import pytest

from notewell.vault.fences import FenceTracker


def code_lines(text: str) -> list[int]:
    fences = FenceTracker()
    return [n for n, line in enumerate(text.split("\n"), start=1) if fences.code(line)]


@pytest.mark.parametrize(("text", "code"), [
    ("a\n```\nb\n```\nc", [2, 3, 4]),
    ("````\n```\nstill code\n````\nout", [1, 2, 3, 4]),  # closed only by a run at least as long
    ("~~~\n```\n~~~\nout", [1, 2, 3]),  # and of the same character
    ("``` python\nx\n```\nout", [1, 2, 3]),  # an info string
    ("```a`b\nnot code", []),  # a backtick in a backtick fence's info string: no fence
    ("~~~a`b\ncode\n~~~", [1, 2, 3]),  # allowed after tildes
    ("```\nx\n``` not a close\n```", [1, 2, 3, 4]),  # text after the run: no close
    ("   ```\nx\n   ```\nout", [1, 2, 3]),  # up to three spaces of indent
    ("    ```\nindented code, not a fence", []),
    ("```\nnever closed\n# heading", [1, 2, 3]),
])
def test_fenced_blocks(text: str, code: list[int]) -> None:
    assert code_lines(text) == code
