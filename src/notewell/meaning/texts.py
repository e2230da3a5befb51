"""What an item's vector is made of: the same text whether it is stored or compared before it is written."""

from __future__ import annotations

from collections.abc import Sequence


def memory_text(title: str, content: str, tags: Sequence[str]) -> str:
    """What a memory's vector is made of: its title (when its text does not begin with it), its text, its tags."""
    head = title if not content.startswith(title) else ""
    return "\n".join(part for part in (head, content, " ".join(tags)) if part.strip())


def session_text(prompt: str, summary: str | None) -> str:
    """What a session's vector is made of: its prompt and its summary."""
    return "\n".join(t for t in (prompt, summary) if t)
