"""What a project folder's README says about the project: its name and description, from the front matter."""

from __future__ import annotations

from pathlib import Path

from notewell.vault.parse import split_front_matter

README_NAMES = ("README.md", "readme.md", "Readme.md")


def readme_fields(folder: Path) -> tuple[str, str]:
    """(name, description) from the folder's README front matter; empty strings when absent."""
    for readme in README_NAMES:
        path = folder / readme
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return "", ""
            meta = split_front_matter(text)[0] or _loose_front_matter(text)
            return _one_line(meta.get("name")), _one_line(meta.get("description"))
    return "", ""


def _loose_front_matter(text: str) -> dict[str, object]:
    """``key: value`` lines of a front matter block that is not valid YAML (say, an unquoted colon in
    the value), which people write and Obsidian shows; the first colon splits key from value."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}
    fields: dict[str, object] = {}
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            return fields
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            fields[key.strip()] = value.strip().strip("\"'")
    return {}


def _one_line(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""
