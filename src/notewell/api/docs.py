"""The OpenAPI document as committed in docs/openapi.json: what ``notewell docs`` writes and a test compares."""

from __future__ import annotations

import json
from pathlib import Path

from notewell.api.app import build_api

OPENAPI_FILE = "openapi.json"


def openapi_text() -> str:
    """The REST API's OpenAPI document, as stable text (the same code gives the same bytes)."""
    return json.dumps(build_api().openapi(), indent=2, ensure_ascii=False) + "\n"


def write(out: Path) -> Path:
    path = out / OPENAPI_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(openapi_text(), encoding="utf-8")
    return path
