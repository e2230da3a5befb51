"""note:write through the note writing service over the whole permission matrix (tests/test_access_matrix.py's
dimensions: role x token kind x scopes x project x grant), in the service matrix's world: a write happens
exactly where the rule says (the knowledge:write scope, the project visible to the token, and a write grant
or the caller's own home, whatever the role), a hidden project answers as a missing one, and every other
refusal is Forbidden. Each allowed write is also edited, moved, deleted and undone by the same caller."""

from __future__ import annotations

import itertools

from notewell.access.principal import Principal
from notewell.errors import Forbidden, NotewellError, NotFound
from notewell.runtime import Runtime
from notewell.services.note_edits import Edit
from test_access_matrix import CASES, GRANTS, ROLES, TOKEN_KINDS, mintable, visible
from test_service_matrix import World, _principal, _project_for, world  # noqa: F401

EXPECTED_COUNTS = {"allow": 48, "hidden": 102, "forbidden": 105}
SCOPE_SETS = (("knowledge:write",), ("knowledge:read",), ("knowledge:read", "knowledge:write"))


def _write(rt: Runtime, p: Principal, path: str) -> str:
    """What writing ``path`` as p answers: allow, hidden:<message>, forbidden or error:<message>."""
    try:
        rt.notes.write_note(p, path, "x\n", tool="matrix")
    except NotFound as exc:
        return "hidden:" + str(exc)
    except Forbidden:
        return "forbidden"
    except NotewellError as exc:
        return f"error:{exc}"
    return "allow"


def test_note_write_follows_the_rule(world: World) -> None:  # noqa: F811
    rt = world.rt
    differences = []
    counter = itertools.count()
    seen: dict[str, int] = {}
    for role, kind, scopes, case, grant in itertools.product(ROLES, TOKEN_KINDS, SCOPE_SETS, CASES, GRANTS):
        if not mintable(role, kind, scopes, case, grant):
            continue
        handle = world.users[(role, grant)][2]
        project = _project_for(case, handle)
        p = _principal(world, role, grant, kind, scopes, project)
        path = f"{project}/matrix-{next(counter)}.md"
        allowed = ("knowledge:write" in scopes and visible("write", role, kind, case, grant)
                   and (case == "own-home" or grant == "write"))
        want = "allow" if allowed else "forbidden" if "knowledge:write" not in scopes else \
            "hidden" if not visible("write", role, kind, case, grant) else "forbidden"
        got = _write(rt, p, path)
        if got.startswith("hidden:"):
            got = "hidden" if got == f"hidden:Not found: {path}" else got
        seen[want] = seen.get(want, 0) + 1
        if got != want:
            differences.append(f"{role} {kind} {scopes} {case} {grant}: got {got}, rule says {want}")
        if allowed and got == "allow":
            rt.notes.edit_note(p, path, Edit("append", "y"), tool="matrix")
            moved = rt.notes.move_note(p, path, path.replace(".md", "-moved.md"), tool="matrix")
            gone = rt.notes.delete_note(p, moved.path, tool="matrix")
            rt.journal.undo(p, gone.journal_id, tool="matrix")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:40])
    assert seen == EXPECTED_COUNTS, seen  # every kind of answer is asked, in the numbers the table gives
