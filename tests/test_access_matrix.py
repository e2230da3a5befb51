"""The permission matrix: every access decision against a table of expectations written here.

Dimensions: role (member, staff, admin) x token kind (user-scoped; project-scoped bound to the project
asked about; project-scoped bound to another project) x scopes (each single scope, none, all) x project
(ordinary active, ordinary archived, the caller's own home, another member's home) x the caller's grant
on that project (none, read, write) x action (list, read, search, write, manage): 4,320 decisions.

``expected`` encodes the rules of issue 3 on its own, from the words of the issue, not from the code.
The authorization service answers through each of its three calls (authorize, allowed, and the project
listing ``projects``), each column an action of notewell.access.policy, on a real SQLite store where the
grants really exist; grants on homes are written straight into the store (the service refuses them) to
show that a grant never opens a home.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import runtime_over
from notewell.access.authorization import Authorization
from notewell.access.policy import Action
from notewell.access.principal import LOCAL_OWNER, SCOPES, Principal
from notewell.errors import Forbidden, NotFound
from notewell.records.identity import Grant, GrantLevel, Role
from notewell.runtime import Runtime
from notewell.store import open_store

ROLES: tuple[Role, ...] = ("member", "staff", "admin")
TOKEN_KINDS = ("user-scoped", "bound-here", "bound-elsewhere")
SCOPE_SETS: tuple[tuple[str, ...], ...] = (*((s,) for s in SCOPES), (), SCOPES)
CASES = ("active", "archived", "own-home", "other-home")
GRANTS: tuple[GrantLevel | None, ...] = (None, "read", "write")
ACTIONS = ("list", "read", "search", "write", "manage")
POLICY_ACTION: dict[str, Action] = {"list": "project:list", "read": "knowledge:read", "search": "knowledge:read",
                                    "write": "knowledge:write", "manage": "project:manage"}


def expected(action: str, role: Role, kind: str, scopes: tuple[str, ...], case: str, grant: GrantLevel | None) -> bool:
    """The rules, restated: visibility, then binding, then scopes, then the right to write or manage."""
    if action == "manage":
        # Admins manage (with the admin scope, on a user-scoped token), ordinary projects only,
        # archived ones included: that is how they are found again and unarchived.
        return role == "admin" and "admin" in scopes and kind == "user-scoped" and case in ("active", "archived")
    needed = "knowledge:write" if action == "write" else "knowledge:read"
    if needed not in scopes:
        return False
    if kind == "bound-elsewhere":  # a project-scoped token sees its own project and nothing else
        return False
    if case == "other-home":  # nobody, admin included, sees another person's home; grants do not change it
        return False
    if case == "own-home":  # the owner reads and writes their home
        return True
    if case == "archived":  # hidden from everyone, except an admin who lists them
        return action == "list" and role == "admin"
    sees = role in ("staff", "admin") or grant is not None  # a member needs a grant
    if action == "write":
        return sees and (grant == "write" or role == "admin")
    return sees


@dataclass
class World:
    rt: Runtime
    users: dict[tuple[Role, GrantLevel | None], tuple[str, str, str]]  # -> (user id, email, handle)


def _handle(role: Role, grant: GrantLevel | None) -> str:
    return f"{role}-{grant or 'none'}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    store = open_store(str(tmp_path_factory.mktemp("matrix") / "index.db"))
    rt = runtime_over(store, tmp_path_factory.mktemp("matrix-vault"))
    access = rt.administration
    access.sync_vault_projects(["apollo", "attic", "elsewhere"])
    access.archive_project(LOCAL_OWNER, "attic")
    other = access.add_user(LOCAL_OWNER, "olga@example.com", "member", handle="olga")
    users = {}
    for role, grant in itertools.product(ROLES, GRANTS):
        handle = _handle(role, grant)
        user = access.add_user(LOCAL_OWNER, f"{handle}@example.com", role, handle=handle)
        users[(role, grant)] = (user.id, user.email, handle)
        if grant is not None:
            access.grant(LOCAL_OWNER, user.email, "apollo", grant)
            access.grant(LOCAL_OWNER, user.email, "attic", grant)
            access.grant(LOCAL_OWNER, user.email, "elsewhere", grant)
            for home in (other.home_project, f"~{handle}"):
                store.identity.set_grant(Grant(user.id, home, grant, "2026-01-01T00:00:00.000000Z"))
    yield World(rt, users)
    store.close()


def _project_for(case: str, handle: str) -> str:
    return {"active": "apollo", "archived": "attic", "own-home": f"~{handle}", "other-home": "~olga"}[case]


def _principal(world: World, role: Role, grant: GrantLevel | None, kind: str, scopes: tuple[str, ...],
               project: str) -> Principal:
    user_id, email, handle = world.users[(role, grant)]
    bound = {"user-scoped": None, "bound-here": project, "bound-elsewhere": "elsewhere"}[kind]
    return Principal(user_id=user_id, email=email, handle=handle, role=role, scopes=frozenset(scopes),
                     token_id=None if kind == "user-scoped" else "t0", bound_project=bound)


def _authorized(authz: Authorization, p: Principal, action: str, project: str) -> bool:
    try:
        authz.authorize(p, POLICY_ACTION[action], project)
    except (NotFound, Forbidden):
        return False
    return True


def _listed(authz: Authorization, p: Principal, action: str, project: str) -> bool:
    """The same decision from the listing of every project p may do the action on."""
    return project in [x.id for x in authz.projects(p, POLICY_ACTION[action])]


def test_the_permission_matrix(world: World) -> None:
    differences: list[str] = []
    decisions = 0
    for role, kind, scopes, case, grant in itertools.product(ROLES, TOKEN_KINDS, SCOPE_SETS, CASES, GRANTS):
        project = _project_for(case, _handle(role, grant))
        p = _principal(world, role, grant, kind, scopes, project)
        for action in ACTIONS:
            decisions += 1
            want = expected(action, role, kind, scopes, case, grant)
            answers = {
                "authorize": _authorized(world.rt.authorization, p, action, project),
                "allowed": world.rt.authorization.allowed(p, POLICY_ACTION[action], project),
                "projects": _listed(world.rt.authorization, p, action, project),
            }
            for how, got in answers.items():
                if got != want:
                    differences.append(f"{action:6} role={role} token={kind} scopes={','.join(scopes) or '-'} "
                                       f"project={case} grant={grant or '-'}: {how} says {got}, table says {want}")
    assert decisions == 4320
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:60])


def test_refusals_name_the_reason_without_revealing_hidden_projects(world: World) -> None:
    user_id, email, handle = world.users[("member", "read")]
    p = Principal(user_id=user_id, email=email, handle=handle, role="member", scopes=frozenset(SCOPES) - {"admin"})
    with pytest.raises(Forbidden, match="write grant"):
        world.rt.authorization.authorize(p, "knowledge:write", "apollo")
    with pytest.raises(Forbidden, match="knowledge:read"):
        world.rt.authorization.authorize(Principal(user_id, email, handle, "member", frozenset()), "knowledge:read",
                                         "apollo")
    with pytest.raises(Forbidden, match="admin"):
        world.rt.authorization.authorize(p, "project:manage", "apollo")
    for hidden in ("~olga", "attic", "no-such-project"):
        with pytest.raises(NotFound) as caught:
            world.rt.authorization.authorize(p, "knowledge:read", hidden)
        assert str(caught.value) == f"Not found: {hidden}"


def test_the_local_owner_manages_everything_but_sees_no_home(world: World) -> None:
    authz = world.rt.authorization
    ids = [x.id for x in authz.projects(LOCAL_OWNER, "project:list")]
    assert ids == ["apollo", "attic", "elsewhere"]
    assert authz.allowed(LOCAL_OWNER, "access:manage")
    assert not authz.allowed(LOCAL_OWNER, "knowledge:read", "~olga")


def test_a_member_sees_their_home_and_granted_projects_only(world: World) -> None:
    user_id, email, handle = world.users[("member", "write")]
    p = Principal(user_id, email, handle, "member", frozenset({"knowledge:read"}))
    authz = world.rt.authorization
    assert [x.id for x in authz.projects(p, "knowledge:read")] == ["apollo", "elsewhere", "~member-write"]
    assert authz.authorize(p, "project:see", p.default_project).id == "~member-write"
    bound = Principal(user_id, email, handle, "member", frozenset({"knowledge:read"}), "t1", "apollo")
    assert [x.id for x in authz.projects(bound, "knowledge:read")] == ["apollo"]
    assert authz.authorize(bound, "project:see", bound.default_project).id == "apollo"
    staff_id, staff_email, staff_handle = world.users[("staff", None)]
    staff = Principal(staff_id, staff_email, staff_handle, "staff", frozenset({"knowledge:read"}))
    assert [x.id for x in authz.projects(staff, "knowledge:read")] == ["apollo", "elsewhere", "~staff-none"]


def test_the_expected_table_is_not_trivial() -> None:
    """Guard against a table that says yes (or no) to everything, which would hide a broken rule."""
    answers = [expected(a, r, k, s, c, g) for a, r, k, s, c, g in
               itertools.product(ACTIONS, ROLES, TOKEN_KINDS, SCOPE_SETS, CASES, GRANTS)]
    assert 0 < sum(answers) < len(answers) / 4


def test_manage_needs_an_admin_scope_on_a_user_scoped_admin_token(world: World, tmp_path: Path) -> None:
    admin_id, admin_email, admin_handle = world.users[("admin", None)]
    full = Principal(admin_id, admin_email, admin_handle, "admin", frozenset(SCOPES), "t2")
    authz = world.rt.authorization
    assert authz.allowed(full, "access:manage")
    assert not authz.allowed(Principal(admin_id, admin_email, admin_handle, "admin", frozenset(SCOPES) - {"admin"},
                                       "t2"), "access:manage")
    assert not authz.allowed(Principal(admin_id, admin_email, admin_handle, "admin", frozenset(SCOPES), "t2",
                                       "apollo"), "access:manage")
    staff_id, staff_email, staff_handle = world.users[("staff", None)]
    with pytest.raises(Forbidden):
        world.rt.administration.users(Principal(staff_id, staff_email, staff_handle, "staff", frozenset(SCOPES), "t3"))


CASE_LABELS = {"active": "ordinary, active", "archived": "ordinary, archived", "own-home": "own home",
               "other-home": "another person's home"}


def docs_table() -> list[str]:
    """The matrix for a user-scoped token holding every scope its role may hold, as docs/security.md shows it."""
    rows = ["| project | role | grant | list | read | search | write | manage |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for case, role, grant in itertools.product(CASES, ROLES, GRANTS):
        scopes = SCOPES if role == "admin" else tuple(s for s in SCOPES if s != "admin")
        marks = ["yes" if expected(a, role, "user-scoped", scopes, case, grant) else "no" for a in ACTIONS]
        rows.append(f"| {CASE_LABELS[case]} | {role} | {grant or 'none'} | " + " | ".join(marks) + " |")
    return rows


def test_docs_security_shows_this_matrix() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text(encoding="utf-8")
    missing = [row for row in docs_table() if row not in docs.splitlines()]
    assert not missing, "docs/security.md lacks these rows of the matrix:\n" + "\n".join(missing)
