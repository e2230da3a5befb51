"""The store: every SQL statement lives below this package, behind the interfaces in base.py."""

from notewell.store.base import Store
from notewell.store.factory import open_store

__all__ = ["Store", "open_store"]
