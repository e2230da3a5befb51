"""Values as a person reads them: an audit entry's detail or a document's front matter as "key: value" text,
never raw JSON or YAML."""

from __future__ import annotations


def plain(value: object) -> str:
    """One value as text: lists joined with commas, nested objects as "k: v; k: v", yes/no, none."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(plain(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {plain(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def readable(detail: dict[str, object]) -> list[tuple[str, str]]:
    """An object's fields as (key, text) lines."""
    return [(str(key), plain(value)) for key, value in detail.items()]
