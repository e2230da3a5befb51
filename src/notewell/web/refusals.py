"""A refusal as a page words it: the service's message, and its way out (a remedy key, notewell.errors) in a
browser user's terms: a page of this site, never a command, which needs a shell on the server they have not."""

from __future__ import annotations

from notewell.errors import NotewellError, Remedy

WEB_REMEDIES: dict[Remedy, str] = {
    "list-proposals": "the Skill proposals page lists yours",
    "list-retired": "the Skill proposals page lists what evolution retired that you can see",
}


def refusal(exc: NotewellError) -> str:
    """The error's message, and its way out where the web has one."""
    way_out = WEB_REMEDIES.get(exc.remedy) if exc.remedy else None
    return f"{exc}; {way_out}" if way_out else str(exc)
