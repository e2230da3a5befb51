"""The brain's refusals, as external-brain words them: ``<CODE>: <what is wrong and how to fix it>``.

A door shows them as they are (the MCP door as ``Error in <tool>: <CODE>: …``). Arguments of the wrong
shape (a missing required argument, a wrong type) are not refusals but InvalidArgument, as elsewhere.
"""

from __future__ import annotations

from notewell.errors import Forbidden, NotewellError, NotFound, Remedy


class BrainNotFound(NotFound):
    """404: a session, project or item that does not exist or is not the caller's (the same answer)."""

    code = "NOT_FOUND"

    def __init__(self, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(f"NOT_FOUND: {message}", remedy=remedy)


class ForbiddenProject(Forbidden):
    """403: the project is outside what this token may use."""

    code = "FORBIDDEN_PROJECT"

    def __init__(self, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(f"FORBIDDEN_PROJECT: {message}", remedy=remedy)


class BrainValidation(NotewellError):
    """400: a value of the right type that breaks a rule (an empty or too long name, too many ids)."""

    code = "VALIDATION"

    def __init__(self, field: str, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(f"VALIDATION: {field}: {message}", remedy=remedy)
        self.field = field
