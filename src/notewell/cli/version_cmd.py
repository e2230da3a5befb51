"""notewell --version: the installed version, and the Python running it."""

from __future__ import annotations

import platform
from typing import Annotated

import typer

from notewell import __version__
from notewell.cli.app import app, console


def _print_version(value: bool) -> None:
    if value:
        console.print(f"notewell {__version__} (Python {platform.python_version()})", highlight=False, markup=False)
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                                          callback=_print_version)] = False,
) -> None:
    """Notewell: a knowledge and memory server for AI agents. Index a vault, search it, serve it over MCP."""
