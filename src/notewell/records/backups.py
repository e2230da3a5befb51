"""A backup of the store, as the store records it (``notewell doctor`` reports the latest one's age)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackupRecord:
    at: str  # when it was taken (timestamps.iso)
    path: str  # where it was written, as given
    bytes: int
    recorded: bool = True  # False: the store could not record it (its disk full, it read-only)
