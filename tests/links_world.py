"""The links test world: a small vault of tricky names and a project one member may not read, on either backend.

Names: the same name in two folders (plans/plan.md, other/plan.md), spaces, non-ASCII, case, anchors, a
fenced block. ``secret`` links into ``team`` and is linked from it; mia (a member) holds a read grant on
``team`` only, ada is an admin. Both have a knowledge:read token; mia_all adds memory:read and memory:write.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conftest import make_vault
from mcp_world import World
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime

REVIEW = "\n".join([
    "# Q2 review",  # 1
    "See [[pricing-policy]] and [[Kestrel Logistics|Kestrel]] ([[kestrel logistics#Terms]]).",  # 2
    "[The plan](../plans/plan.md#goals) and `clients/acme.md`, not `clients/none.md`.",  # 3
    "Elsewhere: [their plan](/secret/plan.md) and [a lost one](/secret/lost.md); [[Café Menu]].",  # 4
    "```",  # 5
    "[[in-fence]] [x](../plans/plan.md)",  # 6
    "```",  # 7
    "[[plan]] is ambiguous here; `[[in-code]]` is code.",  # 8
    "",
])
FILES = {
    "team/notes/review.md": REVIEW,
    "team/pricing-policy.md": "# Pricing policy\n\nThe maximum discount is 10 per cent.\n",
    "team/clients/Kestrel Logistics.md": "# Kestrel\n\nA logistics client. See [[pricing-policy]].\n",
    "team/clients/acme.md": "# Acme\n\nA small client.\n",
    "team/plans/plan.md": "# The plan\n\nGoals for the year.\n",
    "team/other/plan.md": "# Another plan\n",
    "team/menus/Café Menu.md": "# Café menu\n",
    "secret/plan.md": "# Secret plan\n\nSee [the review](/team/notes/review.md) and [[x]].\n",
    "secret/x.md": "# X\n",
}


def links_world(tmp_path: Path, store_url: str) -> World:
    vault = make_vault(tmp_path, FILES)
    rt = open_runtime(str(vault), store_url)
    rt.indexing.sync()
    admin = rt.administration
    admin.add_user(LOCAL_OWNER, "mia@example.test", "member", handle="mia")
    admin.add_user(LOCAL_OWNER, "ada@example.test", "admin", handle="ada")
    admin.grant(LOCAL_OWNER, "mia@example.test", "team", "read")
    rt.indexing.sync()
    tokens = {h: admin.mint_token(LOCAL_OWNER, f"{h}@example.test", ["knowledge:read"]).secret for h in ("mia", "ada")}
    tokens["mia_all"] = admin.mint_token(LOCAL_OWNER, "mia@example.test",
                                         ["knowledge:read", "memory:read", "memory:write"]).secret
    return World(rt, tokens)


def opened_world(tmp_path: Path, store_url: str) -> Iterator[World]:
    """The world for a fixture: built, handed over, closed."""
    built = links_world(tmp_path, store_url)
    yield built
    built.runtime.close()


