"""What an item's vector is made of: the same text whether it is stored or compared before it is written."""

from __future__ import annotations


def memory_text(title: str, content: str, tags_json: str) -> str:
    """What a memory's vector is made of: its title, its text, and its tags (the stored JSON array's words)."""
    tags = tags_json.strip("[]").replace('"', "").replace(",", " ")
    head = title if not content.startswith(title) else ""
    return "\n".join(part for part in (head, content, tags) if part.strip())
