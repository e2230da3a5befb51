"""notewell index --watch: the vault watcher alone, as a standalone indexer."""

from __future__ import annotations

import threading

from notewell.cli.app import err_console
from notewell.mcp import log
from notewell.runtime import Runtime


def watch_until_interrupted(rt: Runtime) -> None:
    """Watch until Ctrl-C (SIGTERM ends the process, which frees the writer's lease as well)."""
    log.setup(log.resolve_level(None, "info"), log.resolve_format(None))
    watcher = rt.indexing.watch()
    err_console.print(f"Watching {rt.settings.vault}; Ctrl-C stops it", highlight=False, markup=False)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
