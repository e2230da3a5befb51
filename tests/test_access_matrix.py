"""The permission matrix: every access decision against a table of expectations written here.

Dimensions: role (member, staff, admin) x token kind (user-scoped; project-scoped bound to the project
asked about; project-scoped bound to another project) x scopes (each single scope, none, all) x project
(ordinary active, ordinary archived, the caller's own home, another member's home) x the caller's grant
on that project (none, read, write) x action (list, read, search, write, manage): 4,320 decisions.

``expected`` encodes the rules of issue 3 on its own, from the words of the issue, not from the code.
Each principal is a real token, minted by the administration service and authenticated (a combination
no token can have, such as a member holding admin, must be refused at mint time, as the table says).
The authorization service answers through authorize (the refusal's type and message are checked against
the table, and a hidden project must get byte for byte the answer a missing one gets) and through the
project listing ``projects``, on a real SQLite store where the grants really exist; grants on homes are
written straight into the store (the service refuses them) to show that a grant never opens a home.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import runtime_over
from notewell.access.authorization import Authorization
from notewell.access.policy import Action, Target, allowed, refusal
from notewell.access.principal import LOCAL_OWNER, SCOPES, Principal
from notewell.errors import Forbidden, NotewellError, NotFound
from notewell.records.identity import Grant, GrantLevel, Project, Role
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


def outcome(action: str, role: Role, kind: str, scopes: tuple[str, ...], case: str, grant: GrantLevel | None) -> str:
    """The rules, restated, with the kind of answer: "allow"; "hidden" (Not found, the very answer a project that
    does not exist gets); or "forbidden:<why>" (scope, manage, home, write) for what the caller can see but may
    not do. The scope is checked first and names itself whatever the project, so it reveals nothing."""
    if action == "manage":
        # Admins manage (with the admin scope, on a user-scoped token), ordinary projects only,
        # archived ones included: that is how they are found again and unarchived.
        if not (role == "admin" and "admin" in scopes and kind == "user-scoped"):
            return "forbidden:manage"
        return {"active": "allow", "archived": "allow", "own-home": "forbidden:home", "other-home": "hidden"}[case]
    needed = "knowledge:write" if action == "write" else "knowledge:read"
    if needed not in scopes:
        return "forbidden:scope"
    if not visible(action, role, kind, case, grant):
        return "hidden"
    if action == "write" and not (case == "own-home" or grant == "write" or role == "admin"):
        return "forbidden:write"
    return "allow"


def visible(action: str, role: Role, kind: str, case: str, grant: GrantLevel | None) -> bool:
    if kind == "bound-elsewhere":  # a project-scoped token sees its own project and nothing else
        return False
    if case == "other-home":  # nobody, admin included, sees another person's home; grants do not change it
        return False
    if case == "own-home":  # the owner reads and writes their home
        return True
    if case == "archived":  # hidden from everyone, except an admin who lists them
        return action == "list" and role == "admin"
    return role in ("staff", "admin") or grant is not None  # a member needs a grant


def expected(action: str, role: Role, kind: str, scopes: tuple[str, ...], case: str, grant: GrantLevel | None) -> bool:
    return outcome(action, role, kind, scopes, case, grant) == "allow"


def mintable(role: Role, kind: str, scopes: tuple[str, ...], case: str, grant: GrantLevel | None) -> bool:
    """Which tokens exist at all: only admins hold the admin scope, and only on a user-scoped token; a token is
    bound only to a project its person can see; a token holds at least one scope."""
    if not scopes:
        return False
    if "admin" in scopes and (role != "admin" or kind != "user-scoped"):
        return False
    if kind == "bound-here":
        return visible("read", role, "user-scoped", case, grant)
    if kind == "bound-elsewhere":
        return visible("read", role, "user-scoped", "active", grant)
    return True


@dataclass
class World:
    rt: Runtime
    users: dict[tuple[Role, GrantLevel | None], tuple[str, str, str]]  # -> (user id, email, handle)
    principals: dict[tuple[str, tuple[str, ...], str | None], Principal | str] = field(default_factory=dict)

    def principal(self, email: str, scopes: tuple[str, ...], bound: str | None) -> Principal | str:
        """The principal of a real token minted for ``email`` (and authenticated), or the refusal to mint it."""
        key = (email, scopes, bound)
        if key not in self.principals:
            try:
                minted = self.rt.administration.mint_token(LOCAL_OWNER, email, list(scopes), project_id=bound)
            except NotewellError as exc:
                self.principals[key] = f"{type(exc).__name__}: {exc}"
            else:
                self.principals[key] = self.rt.authentication.authenticate(minted.secret)
        return self.principals[key]


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


def _answer(authz: Authorization, p: Principal, action: str, project: str) -> tuple[str, str]:
    """What authorize says: ("allow", "") or the refusal's type and message."""
    try:
        authz.authorize(p, POLICY_ACTION[action], project)
    except (NotFound, Forbidden) as exc:
        return type(exc).__name__, str(exc)
    return "allow", ""


def _listed(authz: Authorization, p: Principal, action: str, project: str) -> bool:
    """The same decision from the listing of every project p may do the action on."""
    return project in [x.id for x in authz.projects(p, POLICY_ACTION[action])]


MISSING = "no-such-project"
REFUSAL = {  # outcome -> (exception type, words its message must hold)
    "hidden": ("NotFound", "Not found: {project}"),
    "forbidden:manage": ("Forbidden", "admin scope"),
    "forbidden:home": ("Forbidden", "is a home"),
    "forbidden:write": ("Forbidden", "write grant"),
}


def test_the_permission_matrix(world: World) -> None:
    """Every decision through principals of real tokens (minted, then authenticated): allowed or not as the
    table says, refused with the table's kind of answer, and a hidden project answered exactly as a missing one."""
    differences: list[str] = []
    decisions = refused_mints = 0
    authz = world.rt.authorization
    for role, kind, scopes, case, grant in itertools.product(ROLES, TOKEN_KINDS, SCOPE_SETS, CASES, GRANTS):
        _, email, handle = world.users[(role, grant)]
        project = _project_for(case, handle)
        bound = {"user-scoped": None, "bound-here": project, "bound-elsewhere": "elsewhere"}[kind]
        p = world.principal(email, scopes, bound)
        where = f"role={role} token={kind} scopes={','.join(scopes) or '-'} project={case} grant={grant or '-'}"
        if isinstance(p, str):  # no such token can be minted: then the table must say so too
            refused_mints += 1
            if mintable(role, kind, scopes, case, grant):
                differences.append(f"mint    {where}: refused ({p}), table says it can be minted")
            continue
        if not mintable(role, kind, scopes, case, grant):
            differences.append(f"mint    {where}: minted, table says it cannot be")
        for action in ACTIONS:
            decisions += 1
            want = outcome(action, role, kind, scopes, case, grant)
            kind_got, message = _answer(authz, p, action, project)
            if want == "allow" or kind_got == "allow":
                ok = want == kind_got
            elif want == "forbidden:scope":
                needed = "knowledge:write" if action == "write" else "knowledge:read"
                ok = kind_got == "MissingScope" and needed in message
            else:
                exc_type, words = REFUSAL[want]
                ok = kind_got == exc_type and words.format(project=project) in message
            if want == "hidden" and ok:  # hidden == missing, byte for byte once the names are swapped
                ok = (kind_got, message.replace(project, MISSING)) == _answer(authz, p, action, MISSING)
            if not ok:
                differences.append(f"{action:7} {where}: got {kind_got} {message!r}, table says {want}")
            if _listed(authz, p, action, project) != (want == "allow"):
                differences.append(f"{action:7} {where}: the listing disagrees with the table ({want})")
    assert decisions + refused_mints * len(ACTIONS) == 4320
    assert decisions == 2245  # the rest are combinations no token can have (refused at mint, as the table says)
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


def test_who_may_change_a_memory_by_the_rule_itself() -> None:
    """memory:change, asked of the policy directly over role x grant x author: its author, an admin, or a writer of
    the project. The author counts on their own: a member whose write grant became a read grant still changes what
    they wrote, and nobody else who only reads may (issue 22, mutant M1: the author clause dropped survived)."""
    apollo = Project("apollo", "Apollo", "", "ordinary", "active")
    differences = []
    for role, grant, authored in itertools.product(ROLES, GRANTS, (True, False)):
        p = Principal(f"u-{role}", f"{role}@example.com", role, role, frozenset({"memory:read", "memory:write"}))
        target = Target(apollo, grant, author_user_id=p.user_id if authored else "someone-else")
        sees = role in ("staff", "admin") or grant is not None
        want = None if sees and (authored or role == "admin" or grant == "write") else "right" if sees else "hidden"
        got = refusal(p, "memory:change", target)
        if got != want or allowed(p, "memory:change", target) != (want is None):
            differences.append(f"role={role} grant={grant} authored={authored}: got {got}, rule says {want}")
    assert not differences, "\n".join(differences)
    reader = Principal("u-bob", "bob@example.com", "bob", "member", frozenset({"memory:read", "memory:write"}))
    assert refusal(reader, "memory:change", Target(apollo, "read", author_user_id="u-bob")) is None
    assert refusal(reader, "memory:change", Target(apollo, "read", author_user_id="u-alice")) == "right"
    without_write = Principal("u-bob", "bob@example.com", "bob", "member", frozenset({"memory:read"}))
    assert refusal(without_write, "memory:change", Target(apollo, "read", author_user_id="u-bob")) == "scope"
