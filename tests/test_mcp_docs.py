"""The committed tool reference (docs/tools/*.md, docs/tools.md, docs/llms.txt) is what the code generates."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from notewell.cli.docs_cmd import EXAMPLE_VAULT, example_server
from notewell.mcp.docs import generate
from notewell.mcp.registry import TOOLSETS

DOCS = Path(__file__).resolve().parent.parent / "docs"
FIX = "run `notewell docs` and commit the result"


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return generate(example_server)


def test_committed_tool_docs_match_the_code(generated: dict[str, str]) -> None:
    for rel, text in generated.items():
        path = DOCS / rel
        assert path.is_file(), f"docs/{rel} is missing: {FIX}"
        assert path.read_text("utf-8") == text, f"docs/{rel} differs from the code: {FIX}"
    stale = {f"tools/{p.name}" for p in (DOCS / "tools").glob("*.md")} - set(generated)
    assert not stale, f"pages for tools that no longer exist: {sorted(stale)}: delete them"


def test_every_tool_page_has_its_sections(generated: dict[str, str]) -> None:
    for toolset in TOOLSETS.values():
        assert f"## Toolset `{toolset.name}`" in generated["tools.md"]
    for rel, text in generated.items():
        if rel.startswith("tools/"):
            for heading in ("## Description", "## Arguments", "## Result", "## Scopes", "## Annotations",
                            "## Refusals and what to do"):
                assert heading in text, f"{rel} lacks {heading}"
    page = generated["tools/searchKnowledge.md"]
    assert '"path": "northwind-advisory/pricing-policy.md"' in page  # the example ran on the example vault
    assert "readOnlyHint: true" in page and "Error in searchKnowledge: Not found" in page


def test_generated_docs_do_not_depend_on_the_day_of_the_checkout(tmp_path: Path,
                                                                  generated: dict[str, str]) -> None:
    """A clone made on a later day dates every file that day: the pages it generates are the same."""
    vault = tmp_path / "northwind"
    shutil.copytree(EXAMPLE_VAULT, vault, ignore=shutil.ignore_patterns(".notewell"))
    later = 4_102_444_800 * 1_000_000_000  # 2100-01-01
    for path in [vault, *vault.rglob("*")]:
        os.utime(path, ns=(later, later))
    assert generate(lambda: example_server(vault)) == generated
