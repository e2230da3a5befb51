"""What every search tool's note says when its search ran out of its time budget, written once.

A search that found no literal text to narrow it reads every document in scope; one with a literal reads its
candidates; either stops at the budget (limits.SCAN_BUDGET_S). What was found so far is answered, with this
note: the right reason, and a way on that can work (a page deep in a huge result set takes longer to reach
than the budget allows, whatever the page's size).
"""

from __future__ import annotations

from notewell import limits


def stopped_note(scanned: bool, narrower: str, read: str = "document") -> str:
    """The note of a search that stopped at its budget; ``scanned``: no literal text narrowed it; ``narrower``:
    how this tool's call narrows the search (its own arguments); ``read``: what it reads ("document", "note")."""
    budget = f"{limits.SCAN_BUDGET_S:g} seconds"
    if scanned:
        return (f"The query has no literal text to narrow the search, so every {read} was read, and the search "
                f"stopped after {budget}: results may be missing. Add some text to the query.")
    return (f"The search stopped after {budget}, before it had read every {read} that may match: results may be "
            f"missing, and fewer may be shown than match. Search for a longer or rarer text{narrower}.")
