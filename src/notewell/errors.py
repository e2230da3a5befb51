"""Errors that reach a person or an agent.

Each message names the field (or thing) at fault and what to do about it; doors (CLI, MCP) show the
message as it is and never a traceback.
"""


class NotewellError(Exception):
    """A failure with a message fit to show a person as it is."""


class InvalidArgument(NotewellError):
    """An argument is out of range or malformed. ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


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


class Conflict(NotewellError):
    """The thing to create exists already (an email, a handle, a project id)."""
