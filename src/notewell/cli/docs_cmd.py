"""notewell docs: write the tool reference (docs/tools/<tool>.md, docs/tools.md, docs/llms.txt) and the REST API's
OpenAPI document (docs/openapi.json) from the code."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from notewell.access.principal import LOCAL_OWNER
from notewell.cli.app import app, cli_message, console, fail
from notewell.errors import ConfigError, NotewellError
from notewell.mcp.registry import TOOLSETS
from notewell.mcp.server import NotewellMCP
from notewell.runtime import open_runtime

EXAMPLE_VAULT = Path(__file__).resolve().parents[3] / "examples" / "northwind"
# Every file of the example copy is dated this instant (2026-01-01 12:00 UTC): a clone's checkout dates its files
# the day it is made, and an example that shows a document's date must not say which day that was.
EXAMPLE_MTIME_NS = 1_767_268_800 * 1_000_000_000


def _pin_times(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(EXAMPLE_MTIME_NS, EXAMPLE_MTIME_NS), follow_symlinks=False)


@contextmanager
def example_server(vault: Path = EXAMPLE_VAULT) -> Iterator[NotewellMCP]:
    """Every toolset over a throwaway index of a copy of ``vault`` (the example vault is never written), its files
    dated EXAMPLE_MTIME_NS so that nothing generated depends on the day the checkout was made."""
    if not vault.is_dir():
        raise ConfigError(f"{vault} is missing: run notewell docs from a source checkout (the examples run on it)")
    with tempfile.TemporaryDirectory(prefix="notewell-docs-") as tmp:
        copy = Path(tmp) / "vault"
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".notewell"))
        _pin_times(copy)
        rt = open_runtime(str(copy), str(Path(tmp) / "index.db"))
        try:
            rt.indexing.sync()
            yield NotewellMCP(rt, list(TOOLSETS.values()), lambda _ctx: LOCAL_OWNER)
        finally:
            rt.close()


@app.command("docs")
def docs_command(
    out: Annotated[Path, typer.Option("--out", help="The docs folder to write into.")] = Path("docs"),
) -> None:
    """Generate the tool pages and llms.txt from the tool definitions, with examples run on examples/northwind,
    and docs/openapi.json from the REST API."""
    from notewell.api.docs import write as write_openapi
    from notewell.mcp.docs import write

    try:
        written = [*write(out, example_server), write_openapi(out)]
    except NotewellError as exc:
        raise fail(cli_message(exc)) from None
    console.print(f"Wrote {len(written)} files under {out}", highlight=False, markup=False)
