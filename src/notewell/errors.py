"""Errors that reach a person or an agent.

Each message names the field (or thing) at fault and what is wrong, in the service's own terms: a field
by its domain name (``scopes``, ``project``, ``email``), never a command-line flag or command. Where a
person needs a way out, the error names it as a ``remedy`` key (``list-users``, ``grant``, …), and each
door words it for its own people (notewell.cli.app adds "see 'notewell user list'"; a web page would
link to its form). Doors show the message and never a traceback.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Literal

Remedy = Literal[
    "list-users",  # the user named does not exist: show how to list users
    "list-tokens",  # the token named does not exist: show how to list tokens
    "set-project",  # the project exists already: show how to change it instead
    "grant",  # the user cannot see the project: show how to grant access
    "mint-token",  # the token no longer works: show how to get a new one
    "choose-handle",  # the handle is taken: show how to choose another
    "start-session",  # the coding session named is not the caller's: show how to open one
    "list-brain-projects",  # the brain project named is not one the caller may use: show how to list them
    "user-scoped",  # the action needs a person: show how to act as one (a user-scoped token, --as)
    "list-projects",  # the project named is not one the caller manages: show how to list them
    "create-unversioned",  # a write named a version of a note that is not there: show how to create it (no version)
    "overwrite-whole",  # a note to create is there already: show how to write over it (overwrite, with its version)
    "repair-store",  # the store is damaged: show how to find the damage and rebuild what can be rebuilt
    "list-proposals",  # the skill proposal named is not one of the caller's: show how to list them
    "list-retired",  # the retired item named is not one the caller sees: show how to list what evolution retired
]


MESSAGE_MAX_CHARS = 2000  # an error quoting what it was given (a 200,000-character value) says it shorter
FIELD_MAX_CHARS = 200


def bounded(message: str, most: int = MESSAGE_MAX_CHARS) -> str:
    """``message`` whole, or its start and its end around a note of what was left out: the end holds the fix."""
    if len(message) <= most:
        return message
    tail = most // 4
    return f"{message[:most - tail]}… ({len(message) - most} characters left out) …{message[-tail:]}"


class NotewellError(Exception):
    """A failure with a message fit to show a person as it is (``bounded``)."""

    def __init__(self, message: str, *, field: str | None = None, remedy: Remedy | None = None) -> None:
        message = bounded(message)
        field = bounded(field, FIELD_MAX_CHARS) if field else field  # as a request spelt it: any length
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field  # the domain name of the field at fault, when there is one
        self.detail = message  # the message without the field
        self.remedy = remedy


class InvalidArgument(NotewellError):
    """An argument is out of range or malformed. ``field`` names it."""

    def __init__(self, field: str, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(message, field=field, remedy=remedy)
        self.field: str = bounded(field, FIELD_MAX_CHARS)


_SURROGATE = re.compile("[\ud800-\udfff]")


def not_unicode(value: str) -> str | None:
    """Why ``value`` is no Unicode text, or None: a lone surrogate, which no store, tokenizer or answer can hold. A
    door that reads JSON refuses one as it reads it; a command line hands over bytes that are not UTF-8 as such
    surrogates (U+DC80 to U+DCFF, Python's surrogateescape: the byte is the code point less 0xDC00)."""
    found = _SURROGATE.search(value)
    if found is None:
        return None
    code = ord(found.group())
    if 0xDC80 <= code <= 0xDCFF:
        return (f"is not UTF-8 text (byte 0x{code - 0xDC00:02x} at character {found.start()}); convert it first, "
                "e.g. iconv -f LATIN1 -t UTF-8")
    return f"holds a lone UTF-16 surrogate (U+{code:04X} at character {found.start()}), which is no character"


class UnknownParameter(InvalidArgument):
    """A request named a parameter the operation does not take; ``field`` is spelt as the request spelt it."""


class NotFound(NotewellError):
    """The thing does not exist, or the caller may not see it: both give the same answer."""


class ConfigError(NotewellError):
    """The configuration (flags, environment, notewell.toml) is not usable."""


class Unauthenticated(NotewellError):
    """No token, or one that is unknown, expired or revoked, or whose user is deactivated."""


class Forbidden(NotewellError):
    """The caller can see the thing but may not do this to it (no write right, scope not held)."""


class MissingScope(Forbidden):
    """The token lacks the scope this needs. ``scope`` names it."""

    def __init__(self, scope: str) -> None:
        super().__init__(f"Forbidden: this token lacks the {scope} scope; mint a token with {scope}")
        self.scope = scope


class Unavailable(NotewellError):
    """The store cannot be reached now (its database is down, or gives no connection in time): nothing was done,
    and the same request may succeed later. Doors answer 503, with Retry-After ``retry_after_s``."""

    retry_after_s = 5


class StoreCannotWrite(Unavailable):
    """The store refuses writes now: its disk is full, or its file, folder or database is read-only. Nothing was
    written, reads still work, and the message names the cause and its fix. Raised by each backend's database
    layer, the one place its driver's error is read (store/sqlite/database.py, store/postgres/database.py); doors
    answer it as Unavailable (503), with a longer Retry-After: an operator has to act first."""

    retry_after_s = 60

    def __init__(self, problem: str, fix: str, *, cause: Literal["full", "read-only", "wal-deleted"]) -> None:
        super().__init__(f"{problem}; nothing was written: {fix}")
        self.problem = problem  # what refuses: "the store's disk is full (/srv/notewell/index.db)"
        self.fix = fix  # what an operator does about it
        self.cause = cause  # the disk is full, the store is read-only, or its -wal was deleted under the process


class StoreDamaged(Unavailable):
    """The store's file is damaged ("database disk image is malformed"): what was asked was not done, and
    will not be until an operator mends the store. ``reason`` is the database's own words. Raised by the
    database layer (store/sqlite/database.py); doors answer it as Unavailable (503). Most damage is in an
    index the store can rebuild from its rows (store/sqlite/integrity.py); the message says where to start."""

    retry_after_s = 300

    def __init__(self, path: object | None, reason: str) -> None:
        store = "the store" if path is None else f"the store {path}"
        super().__init__(f"{store} is damaged ({reason}); nothing was done: an operator must check and "
                         "mend it (docs/operations.md, \"A damaged store\")")
        self.reason = reason
        self.remedy = "repair-store"


class Conflict(NotewellError):
    """The thing to create exists already (an email, a handle, a project id)."""


class VersionConflict(Conflict):
    """A write named a version of a document that is no longer its version: ``current_version`` is the one it
    has now ("" when it is gone), ``summary`` says in a line how the two differ."""

    def __init__(self, path: str, expected: str, current_version: str, summary: str, *,
                 never_there: bool = False) -> None:
        """``never_there``: no note is at ``path``, and none was at that version as far as the journal knows (not
        one deleted since): the way out is to create it, naming no version."""
        now = f"it is at version {current_version}" if current_version else "it no longer exists"
        message = (f"Conflict: there is no note at {path}, so none at version {expected}" if never_there else
                   f"Conflict: {path} changed since version {expected}: {now} ({summary}); read it again and redo "
                   "the change on what it says now")
        super().__init__(message, field="expected_version", remedy="create-unversioned" if never_there else None)
        self.current_version = current_version
        self.summary = summary


_FILE_REFUSALS = {errno.ENOSPC: "its disk is full", errno.EDQUOT: "its disk quota is used up",
                  errno.EROFS: "its filesystem is read-only", errno.EACCES: "permission denied",
                  errno.EPERM: "permission denied"}
_FILE_FIX = "free space or fix the permissions there, or name a place on another disk"


def file_refusal(field: str, path: object, exc: BaseException) -> InvalidArgument | None:
    """A write to ``path`` (a file or folder a command makes, not the store) that the system refused, named as
    such: its disk full, its filesystem read-only, permission denied; None for any other error. ``exc`` is the
    OSError, or SQLite's error writing that file ("database or disk is full")."""
    reason = _FILE_REFUSALS.get(exc.errno) if isinstance(exc, OSError) and exc.errno is not None else None
    text = str(exc)
    if reason is None and "database or disk is full" in text:
        reason = _FILE_REFUSALS[errno.ENOSPC]
    if reason is None and "readonly database" in text:
        reason = _FILE_REFUSALS[errno.EROFS]
    if reason is None:
        return None
    return InvalidArgument(field, f"cannot write {path}: {reason}; nothing was kept there: {_FILE_FIX}")


def with_way_out(exc: NotewellError, ways_out: Mapping[Remedy, str]) -> str:
    """The error's message, then the way out in a door's own words (``ways_out``) when it names one."""
    way_out = ways_out.get(exc.remedy) if exc.remedy else None
    return f"{exc}; {way_out}" if way_out else str(exc)


@contextmanager
def spelled(**request_names: str) -> Iterator[None]:
    """Within it, a refusal naming a service argument a door spells otherwise (the service's ``query`` is REST's and
    the web pages' ``q``, the brain's ``type`` REST's ``kind``) names the door's instead, as every other refusal of
    the request does."""
    try:
        yield
    except NotewellError as exc:
        field = getattr(exc, "field", None)
        name = None if isinstance(exc, UnknownParameter) or field is None else request_names.get(field)
        if name is None:
            raise
        detail = exc.detail if isinstance(exc, InvalidArgument) else str(exc).split(f"{field}: ", 1)[-1]
        raise InvalidArgument(name, detail, remedy=exc.remedy) from None
