"""notewell docs: write the tool reference (docs/tools/<tool>.md, docs/tools.md, docs/llms.txt) and the REST API's
OpenAPI document (docs/openapi.json) from the code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from notewell.cli.app import app, cli_message, console, fail
from notewell.errors import NotewellError


@app.command("docs")
def docs_command(
    out: Annotated[Path, typer.Option("--out", help="The docs folder to write into.")] = Path("docs"),
) -> None:
    """Generate the tool pages and llms.txt from the tool definitions, with examples run on examples/northwind,
    and docs/openapi.json from the REST API."""
    from notewell.api.docs import write as write_openapi
    from notewell.mcp.docs import write

    try:
        written = [*write(out), write_openapi(out)]
    except NotewellError as exc:
        raise fail(cli_message(exc)) from None
    console.print(f"Wrote {len(written)} files under {out}", highlight=False, markup=False)
