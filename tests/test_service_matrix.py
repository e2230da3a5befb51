"""The permission matrix at the service layer: every knowledge, links, memory and brain method, no door in between.

The same dimensions as tests/test_access_matrix.py (role x token kind x scopes x project x grant) and the
same table of expectations (``expected`` there, written from the rules, not from the code), asked of the
services the runtime builds, with real documents, brains and memories in every project. The scopes
count everywhere: a principal without knowledge:read gets nothing from any knowledge method, one without
memory:read nothing from any memory read, whatever it may see. Every refusal is worded without the
command line's flags or commands: each door words its own fix.

SQLite only: the decisions are the policy's, the same on either store (the store contract tests compare
the backends' answers).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

import pytest

from conftest import make_vault
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER, Principal
from notewell.errors import Forbidden, NotewellError, NotFound
from notewell.records.identity import GrantLevel, Role
from notewell.runtime import Runtime, open_runtime
from test_access_matrix import CASES, GRANTS, ROLES, SCOPE_SETS, TOKEN_KINDS, expected, mintable

NEEDLE = "quokka"
ORDINARY = ("apollo", "attic", "elsewhere")


@dataclass
class World:
    rt: Runtime
    users: dict[tuple[Role, GrantLevel | None], tuple[str, str, str]]  # -> (user id, email, handle)
    memories: dict[str, str] = field(default_factory=dict)  # project -> the ref of a memory kept there
    knowledge: dict[str, str] = field(default_factory=dict)  # project -> an item the local owner taught there
    recipes: dict[str, str] = field(default_factory=dict)  # project -> a recipe matured by successful use
    olga_session: str = ""  # a coding session of someone no caller is


def _handle(role: Role, grant: GrantLevel | None) -> str:
    return f"{role}-{grant or 'none'}"


def _document(project: str) -> dict[str, str]:
    return {f"{project}/note.md": f"# Note of {project}\n\nThe {NEEDLE} lives in {project}.\n",
            f"{project}/brain.md": f"# Brain of {project}\n\nAbout the {NEEDLE}.\n\n- [Note](note.md)\n"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("service-matrix")
    vault = make_vault(tmp, {name: text for project in ORDINARY for name, text in _document(project).items()})
    rt = open_runtime(str(vault), str(tmp / "index.db"))
    admin = rt.administration
    rt.indexing.sync()
    olga = admin.add_user(LOCAL_OWNER, "olga@example.com", "member", handle="olga")
    users = {}
    for role, grant in itertools.product(ROLES, GRANTS):
        handle = _handle(role, grant)
        user = admin.add_user(LOCAL_OWNER, f"{handle}@example.com", role, handle=handle)
        users[(role, grant)] = (user.id, user.email, handle)
        if grant is not None:
            for project in ORDINARY:
                admin.grant(LOCAL_OWNER, user.email, project, grant)
    homes = ["~olga", *(f"~{handle}" for _, _, handle in users.values())]
    for home in homes:
        for name, text in _document(home).items():
            (vault / name).write_text(text, encoding="utf-8")
    rt.indexing.sync()
    world = World(rt, users)
    for project in ORDINARY:  # kept by the local owner, so no caller here is the author
        world.memories[project] = rt.memory.remember(LOCAL_OWNER, f"The {NEEDLE} note of {project}.",
                                                     project=project).memory.ref
    for user in [olga, *(admin.user(LOCAL_OWNER, email) for _, email, _ in users.values())]:
        owner = user_principal(user)
        kept = rt.memory.remember(owner, f"The {NEEDLE} note of {owner.handle}.")
        world.memories[owner.home_project] = kept.memory.ref
    for project in ORDINARY:
        world.knowledge[project] = _teach(rt, project)
        recipe = rt.brain.teach(LOCAL_OWNER, rule=f"Cook the {NEEDLE} recipe of {project}.", kind="recipe",
                                project_id=project).item.ref
        for _ in range(3):
            rt.store.brain.record_use(recipe, True, 0.9, "2026-01-01T00:00:00Z")
        world.recipes[project] = recipe
    world.olga_session = rt.brain.start_session(user_principal(olga), prompt=f"The {NEEDLE}").session.id
    admin.archive_project(LOCAL_OWNER, "attic")
    yield world
    rt.close()


def _teach(rt: Runtime, project: str) -> str:
    return rt.brain.teach(LOCAL_OWNER, rule=f"Feed the {NEEDLE} of {project}.", trigger=f"when in {project}",
                          project_id=project).item.ref


def _project_for(case: str, handle: str) -> str:
    return {"active": "apollo", "archived": "attic", "own-home": f"~{handle}", "other-home": "~olga"}[case]


def _principal(world: World, role: Role, grant: GrantLevel | None, kind: str, scopes: tuple[str, ...],
               project: str) -> Principal:
    user_id, email, handle = world.users[(role, grant)]
    bound = {"user-scoped": None, "bound-here": project, "bound-elsewhere": "elsewhere"}[kind]
    return Principal(user_id=user_id, email=email, handle=handle, role=role, scopes=frozenset(scopes),
                     token_id=None if kind == "user-scoped" else "t0", bound_project=bound)


def _rights(role: Role, kind: str, scopes: tuple[str, ...], case: str, grant: GrantLevel | None) -> dict[str, bool]:
    """What the rules allow, per scope: the visibility and write columns of the matrix with that scope."""
    sees = expected("read", role, kind, ("knowledge:read",), case, grant)
    writes = expected("write", role, kind, ("knowledge:write",), case, grant)
    changes = sees and (role == "admin" or writes)  # the local owner kept these memories: p is not the author
    return {
        "knowledge:read": sees and "knowledge:read" in scopes,
        "memory:read": sees and "memory:read" in scopes,
        "memory:write": writes and "memory:write" in scopes,
        "memory:change": changes and "memory:write" in scopes,
        "sessions": sees and "sessions" in scopes and case == "active",
        "sessions:write": writes and "sessions" in scopes and case == "active",
        "knowledge:retire": changes and "sessions" in scopes and case == "active",
        "brain-home": "sessions" in scopes and kind == "user-scoped",
        "manage": expected("manage", role, kind, scopes, "active", grant),
    }


Check = Callable[[World, Principal, str], bool]


def _succeeds(call: Callable[[], object], refusals: list[str]) -> bool:
    try:
        call()
    except (NotFound, Forbidden) as exc:
        refusals.append(str(exc))
        return False
    return True


def _checks(refusals: list[str]) -> dict[str, tuple[str, Check]]:
    """Each service method, asked about one project: (the right it needs, whether the call gave access)."""
    def ok(call: Callable[[], object]) -> bool:
        return _succeeds(call, refusals)

    def forget(w: World, p: Principal, project: str) -> bool:
        ref = w.memories[project]
        if not ok(lambda: w.rt.memory.forget(p, ref, "the matrix")):
            return False
        w.memories[project] = w.rt.memory.remember(LOCAL_OWNER if not project.startswith("~") else p,
                                                   f"The {NEEDLE} note of {project}, again.",
                                                   project=project).memory.ref
        return True

    def session_round(w: World, p: Principal, x: str) -> bool:
        """A session of p's own in x: log to it, read it and its events, find it, close it."""
        brain = w.rt.brain
        started = _or_empty(lambda: [brain.start_session(p, prompt=f"The {NEEDLE} round", project_id=x)], refusals)
        if not started:
            return False
        sid = started[0].session.id  # type: ignore[attr-defined]
        assert brain.log_event(p, sid, "file_edit", {"path": "a.py"})[1]
        assert brain.session(p, sid).id == sid and len(brain.events(p, sid)[0]) == 1
        assert sid in [s.id for s in brain.recent_sessions(p, limit=500)]
        assert sid in [f.session.id for f in brain.search_sessions(p, f"{NEEDLE} round", limit=50)]
        return brain.report_outcome(p, sid, success=True).session.ended_at is not None

    def retire(w: World, p: Principal, x: str) -> bool:
        if not ok(lambda: w.rt.brain.retire(p, w.knowledge[x], "the matrix")):
            return False
        w.knowledge[x] = _teach(w.rt, x)
        return True

    return {
        "knowledge.projects_with_counts": ("knowledge:read", lambda w, p, x: x in [
            i.id for i in _or_empty(lambda: w.rt.knowledge.projects_with_counts(p), refusals)]),
        "knowledge.projects": ("knowledge:read", lambda w, p, x: x in [
            i.id for i in _or_empty(lambda: w.rt.knowledge.projects(p), refusals)]),
        "knowledge.list_docs": ("knowledge:read", lambda w, p, x: ok(lambda: w.rt.knowledge.list_docs(p, x))),
        "knowledge.read_doc": ("knowledge:read", lambda w, p, x: ok(
            lambda: w.rt.knowledge.read_doc(p, f"{x}/note.md"))),
        "knowledge.search_knowledge": ("knowledge:read", lambda w, p, x: any(
            h.path.startswith(f"{x}/") for h in _or_empty(lambda: w.rt.knowledge.search_knowledge(p, NEEDLE).hits,
                                                           refusals))),
        "knowledge.search_knowledge(project)": ("knowledge:read", lambda w, p, x: ok(
            lambda: w.rt.knowledge.search_knowledge(p, NEEDLE, x))),
        "knowledge.find_documents": ("knowledge:read", lambda w, p, x: any(
            h.project == x for h in _or_empty(lambda: w.rt.knowledge.find_documents(p, NEEDLE).hits, refusals))),
        "knowledge.find_documents(path_filter)": ("knowledge:read", lambda w, p, x: any(
            h.project == x for h in _or_empty(lambda: w.rt.knowledge.find_documents(p, NEEDLE, path_filter=f"{x}/no")
                                              .hits, refusals))),
        "knowledge.list_brains": ("knowledge:read", lambda w, p, x: x in [
            b.id for b in _or_empty(lambda: w.rt.knowledge.list_brains(p), refusals)]),
        "knowledge.get_brain": ("knowledge:read", lambda w, p, x: ok(lambda: w.rt.knowledge.get_brain(p, x))),
        "knowledge.search_brain": ("knowledge:read", lambda w, p, x: ok(
            lambda: w.rt.knowledge.search_brain(p, x, NEEDLE))),
        "knowledge.search_notes": ("knowledge:read", lambda w, p, x: any(
            m.repo == x for m in _or_empty(lambda: w.rt.knowledge.search_notes(p, NEEDLE, limit=100).matches,
                                           refusals))),
        "knowledge.search_notes(repo)": ("knowledge:read", lambda w, p, x: ok(
            lambda: w.rt.knowledge.search_notes(p, NEEDLE, repo=x))),
        "links.links": ("knowledge:read", lambda w, p, x: ok(lambda: w.rt.links.links(p, f"{x}/note.md"))),
        "links.links(backlinks)": ("knowledge:read", lambda w, p, x: any(
            b.source == f"{x}/brain.md" for b in _or_empty(lambda: w.rt.links.links(p, f"{x}/note.md").backlinks,
                                                          refusals))),
        "link_context.build_context": ("knowledge:read", lambda w, p, x: ok(
            lambda: w.rt.link_context.build_context(p, path=f"{x}/brain.md"))),
        "link_context.build_context(query)": ("knowledge:read", lambda w, p, x: any(
            i.ref == f"{x}/note.md" for i in _or_empty(
                lambda: w.rt.link_context.build_context(p, query=NEEDLE, max_tokens=100_000).items, refusals))),
        "memory.get": ("memory:read", lambda w, p, x: ok(lambda: w.rt.memory.get(p, w.memories[x]))),
        "memory.search_memory": ("memory:read", lambda w, p, x: w.memories[x] in [
            r.memory.ref for r in _or_empty(lambda: w.rt.memory.search_memory(p, NEEDLE, limit=50).results,
                                            refusals)]),
        "memory.recall": ("memory:read", lambda w, p, x: w.memories[x] in [
            r.memory.ref for r in _or_empty(lambda: w.rt.memory.recall(p, NEEDLE, limit=50).results, refusals)]),
        "memory.recall_context": ("memory:read", lambda w, p, x: w.memories[x] in [
            i.ref for i in _or_empty(lambda: w.rt.memory.recall_context(p, NEEDLE, max_tokens=100_000).items,
                                     refusals)]),
        "memory.list_memories": ("memory:read", lambda w, p, x: ok(
            lambda: w.rt.memory.list_memories(p, project=x))),
        "memory.export": ("memory:read", lambda w, p, x: w.memories[x] in [
            m.ref for m in _or_empty(lambda: list(w.rt.memory.export(p)), refusals)]),
        "memory.remember": ("memory:write", lambda w, p, x: ok(
            lambda: w.rt.memory.remember(p, "A write from the matrix.", project=x))),
        "memory.forget": ("memory:change", forget),
        "brain.projects": ("sessions", lambda w, p, x: x in [
            b.id for b in _or_empty(lambda: w.rt.brain.projects(p), refusals)]),
        "brain.resolve": ("sessions", lambda w, p, x: ok(lambda: w.rt.brain.resolve(p, x))),
        "brain.create_project": ("brain-home", lambda w, p, x: ok(
            lambda: w.rt.brain.create_project(p, "Matrix"))),
        "brain.start_session": ("sessions", lambda w, p, x: ok(
            lambda: w.rt.brain.start_session(p, prompt=NEEDLE, project_id=x))),
        "brain.session and its events": ("sessions", session_round),
        "brain.teach": ("sessions:write", lambda w, p, x: ok(
            lambda: w.rt.brain.teach(p, rule="Taught by the matrix.", project_id=x))),
        "brain.retrieve": ("sessions", lambda w, p, x: w.knowledge[x] in [
            s.item.ref for s in _or_empty(lambda: w.rt.brain.retrieve(p, NEEDLE, limit=50).items, refusals)]),
        "brain.knowledge": ("sessions", lambda w, p, x: w.knowledge[x] in [
            k.ref for k in _or_empty(lambda: w.rt.brain.knowledge(p, limit=500), refusals)]),
        "brain.skills": ("sessions", lambda w, p, x: w.recipes[x] in [
            s.item.ref for s in _or_empty(lambda: w.rt.brain.skills(p, NEEDLE, limit=20), refusals)]),
        "brain.retire": ("knowledge:retire", retire),
        "administration.users": ("manage", lambda w, p, x: ok(lambda: w.rt.administration.users(p))),
        "administration.projects_page": ("manage", lambda w, p, x: ok(
            lambda: w.rt.administration.projects_page(p, 10, 0))),
    }


def _or_empty(call: Callable[[], list[object]], refusals: list[str]) -> list[object]:
    """What the call lists, or nothing when it is refused (the refusal kept for the wording check)."""
    try:
        return list(call())
    except (NotFound, Forbidden) as exc:
        refusals.append(str(exc))
        return []


def test_every_service_method_follows_the_matrix(world: World) -> None:
    refusals: list[str] = []
    checks = _checks(refusals)
    differences: list[str] = []
    decisions = 0
    for role, kind, scopes, case, grant in itertools.product(ROLES, TOKEN_KINDS, SCOPE_SETS, CASES, GRANTS):
        project = _project_for(case, _handle(role, grant))
        p = _principal(world, role, grant, kind, scopes, project)
        rights = _rights(role, kind, scopes, case, grant)
        for name, (right, check) in checks.items():
            if name.startswith("brain.") and case != "active":
                continue  # the brain lists ordinary projects; homes hold personal brain projects instead
            decisions += 1
            got = check(world, p, project)
            if got != rights[right]:
                differences.append(f"{name:36} role={role} token={kind} scopes={','.join(scopes) or '-'} "
                                   f"project={case} grant={grant or '-'}: got {got}, table says {rights[right]}")
    assert decisions > 15_000
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:60])
    worded_for_the_cli = sorted({r for r in refusals if "--" in r or "notewell " in r})
    assert refusals and not worded_for_the_cli, worded_for_the_cli[:5]


def test_without_knowledge_read_no_knowledge_method_answers(world: World) -> None:
    user_id, email, handle = world.users[("admin", "write")]
    everything_but = Principal(user_id, email, handle, "admin",
                               frozenset({"knowledge:write", "memory:read", "memory:write", "sessions", "admin"}))
    knowledge = world.rt.knowledge
    calls: list[Callable[[], object]] = [
        lambda: knowledge.projects_with_counts(everything_but), lambda: knowledge.projects(everything_but),
        lambda: knowledge.list_docs(everything_but, "apollo"),
        lambda: knowledge.read_doc(everything_but, "apollo/note.md"),
        lambda: knowledge.search_knowledge(everything_but, NEEDLE), lambda: knowledge.list_brains(everything_but),
        lambda: knowledge.find_documents(everything_but, NEEDLE),
        lambda: knowledge.get_brain(everything_but, "apollo"),
        lambda: knowledge.search_brain(everything_but, "apollo", NEEDLE),
        lambda: knowledge.search_notes(everything_but, NEEDLE),
        lambda: world.rt.memory.recall_context(everything_but, NEEDLE, include_documents=True),
        lambda: world.rt.links.links(everything_but, "apollo/note.md"),
        lambda: world.rt.link_context.build_context(everything_but, path="apollo/note.md"),
    ]
    for call in calls:
        with pytest.raises(Forbidden, match="knowledge:read") as refused:
            call()
        assert isinstance(refused.value, NotewellError) and "--" not in str(refused.value)


def test_the_memory_change_rule_is_the_policys(world: World) -> None:
    """Author, writer of the project, or admin: a reader who did not write the memory may not forget it."""
    rt = world.rt
    reader = user_principal(rt.administration.user(LOCAL_OWNER, "member-read@example.com"))
    writer = user_principal(rt.administration.user(LOCAL_OWNER, "member-write@example.com"))
    kept = rt.memory.remember(writer, "The writer's own note.", project="apollo").memory
    assert rt.authorization.allowed(writer, "memory:change", rt.store.memories.get(kept.ref))  # type: ignore[arg-type]
    with pytest.raises(Forbidden, match="only the author"):
        rt.memory.forget(reader, kept.ref, "not mine")
    assert rt.memory.forget(writer, kept.ref, "mine").deleted_at


def _olga_brain_ids(world: World) -> set[str]:
    return {world.knowledge[x] for x in ORDINARY} | {world.recipes[x] for x in ORDINARY}


def test_no_brain_method_answers_beyond_the_matrix(world: World) -> None:
    """The brain's listings without a project argument show only what the table lets p use: another
    person's session never, the local owner's knowledge only in a project p may use."""
    brain = world.rt.brain
    leaks: list[str] = []
    for role, kind, scopes, grant in itertools.product(ROLES, TOKEN_KINDS, SCOPE_SETS, GRANTS):
        if not mintable(role, kind, scopes, "active", grant):
            continue  # no token is bound to a project its person cannot see
        p = _principal(world, role, grant, kind, scopes, "apollo")
        usable = {x for x in ORDINARY if _rights(role, kind, scopes, "active" if x != "attic" else "archived",
                                                  grant)["sessions"]}
        try:
            style = brain.user_style(p)
            active = brain.active_project(p)
            sessions = [*brain.recent_sessions(p, limit=500),
                        *(f.session for f in brain.search_sessions(p, NEEDLE, limit=50))]
            items = [*brain.knowledge(p, limit=500), *(s.item for s in brain.retrieve(p, NEEDLE, limit=50).items),
                     *(s.item for s in brain.skills(p, NEEDLE, limit=20))]
        except Forbidden:
            assert "sessions" not in scopes
            continue
        if kind == "bound-elsewhere":
            usable = {"elsewhere"} if _rights(role, "bound-here", scopes, "active", grant)["sessions"] else set()
        seen = {k.brain_project for k in items if k.ref in _olga_brain_ids(world)}
        if not seen <= usable:
            leaks.append(f"{role}/{kind}/{scopes}/{grant}: knowledge of {sorted(seen - usable)}")
        if any(s.user_id != p.user_id for s in sessions) or world.olga_session in {s.id for s in sessions}:
            leaks.append(f"{role}/{kind}/{scopes}/{grant}: another person's session")
        if any(k.ref in _olga_brain_ids(world) for k in style.reflexes):
            leaks.append(f"{role}/{kind}/{scopes}/{grant}: the local owner's reflexes in the user style")
        if active is not None and active[0].id in ORDINARY and active[0].id not in usable:
            leaks.append(f"{role}/{kind}/{scopes}/{grant}: active project {active[0].id}")
    assert not leaks, "\n".join(leaks[:40])


def test_another_persons_session_is_answered_as_a_missing_one(world: World) -> None:
    """Every session method: olga's session gets, word for word, what a session that does not exist gets."""
    brain = world.rt.brain
    missing = "ses_00000000000000000000"
    methods: dict[str, Callable[[Principal, str], object]] = {
        "log_event": lambda p, sid: brain.log_event(p, sid, "file_edit", {}),
        "report_outcome": lambda p, sid: brain.report_outcome(p, sid, success=True),
        "session": lambda p, sid: brain.session(p, sid),
        "events": lambda p, sid: brain.events(p, sid),
        "retrieve(session)": lambda p, sid: brain.retrieve(p, NEEDLE, session_id=sid),
    }
    for role, kind, grant in itertools.product(ROLES, ("user-scoped", "bound-here"), GRANTS):
        p = _principal(world, role, grant, kind, ("sessions",), "apollo")
        for name, call in methods.items():
            answers = []
            for sid in (world.olga_session, missing):
                with pytest.raises(NotFound) as refused:
                    call(p, sid)
                answers.append((type(refused.value), str(refused.value).replace(sid, "<id>")))
            assert answers[0] == answers[1], f"{name} as {role}/{kind}/{grant}: {answers}"


def test_the_action_item_rule_is_the_policys(world: World) -> None:
    """Author, an assignee, or a writer of the project resolves an open action item; a reader who is none
    of these leaves it open."""
    rt = world.rt
    reader = user_principal(rt.administration.user(LOCAL_OWNER, "member-read@example.com"))
    writer = user_principal(rt.administration.user(LOCAL_OWNER, "member-write@example.com"))

    def item(assignee: str) -> str:
        return rt.brain.teach(LOCAL_OWNER, rule=f"Call the {NEEDLE} vet about {assignee}.", kind="action_item",
                              tags=[f"for:{assignee}"], project_id="apollo").item.ref

    def resolved(p: Principal, ref: str) -> int | None:
        sid = rt.brain.start_session(p, prompt="closing", project_id="apollo").session.id
        return rt.brain.report_outcome(p, sid, success=True, resolved_action_item_ids=[ref]).resolved_action_items

    assert rt.authorization.allowed(reader, "sessions:use", "apollo")
    assert resolved(reader, item("olga@example.com")) == 0  # neither author, assignee nor writer
    assert resolved(reader, item("Member-Read@example.com")) == 1  # the assignee, whatever the case of the tag
    assert resolved(writer, item("olga@Example.com")) == 1  # a writer of the project


MISSING = "no-such-project"
Named = Callable[[Principal, str], tuple[Callable[[], object], str]]  # (principal, project) -> (call, name given)


def _named_calls(world: World) -> dict[str, Named]:
    """Every KnowledgeService method that is given a project, document or brain by name, as a call on ``project``
    and the words the caller named it with."""
    k = world.rt.knowledge
    return {
        "list_docs": lambda p, x: (lambda: k.list_docs(p, x), x),
        "list_docs(path)": lambda p, x: (lambda: k.list_docs(p, x, "sub"), x),
        "read_doc": lambda p, x: (lambda: k.read_doc(p, f"{x}/note.md"), f"{x}/note.md"),
        "read_doc(offset)": lambda p, x: (lambda: k.read_doc(p, f"{x}/note.md", offset=2, limit=1), f"{x}/note.md"),
        "search_knowledge(project)": lambda p, x: (lambda: k.search_knowledge(p, NEEDLE, x), x),
        "list_brains(project)": lambda p, x: (lambda: k.list_brains(p, x), x),
        "get_brain": lambda p, x: (lambda: k.get_brain(p, x), x),
        "search_brain": lambda p, x: (lambda: k.search_brain(p, x, NEEDLE), x),
        "search_brain(parents)": lambda p, x: (lambda: k.search_brain(p, x, NEEDLE, include_parents=True), x),
        "search_notes(repo)": lambda p, x: (lambda: k.search_notes(p, NEEDLE, repo=x), x),
        "search_notes(path)": lambda p, x: (lambda: k.search_notes(p, NEEDLE, path=f"{x}/note.md"), f"{x}/note.md"),
        "search_notes(folder)": lambda p, x: (lambda: k.search_notes(p, NEEDLE, path=x), x),
        "search_notes(repo, path)": lambda p, x: (lambda: k.search_notes(p, NEEDLE, repo=x, path="note.md"), x),
        # named as a person may type them: the answer names what was given, hidden or missing alike
        "read_doc(spelled)": lambda p, x: (lambda: k.read_doc(p, f"/{x}/./note.md"), f"/{x}/./note.md"),
        "search_notes(spelled)": lambda p, x: (lambda: k.search_notes(p, NEEDLE, path=f"{x}//note.md"),
                                               f"{x}//note.md"),
        "get_brain(spelled)": lambda p, x: (lambda: k.get_brain(p, f"/{x}/"), f"/{x}/"),
    }


def _refusal(call: Callable[[], object], named: str) -> tuple[object, ...]:
    """Everything a refusal carries (its type, message, field, detail, remedy and args), with the name the caller
    gave replaced by a placeholder, so a hidden thing and a missing one can be compared."""
    try:
        call()
    except NotewellError as exc:
        def anon(value: object) -> object:
            return value.replace(named, "<named>") if isinstance(value, str) else value
        return (type(exc).__name__, anon(str(exc)), *sorted((k, anon(v)) for k, v in vars(exc).items()),
                tuple(anon(a) for a in exc.args))
    return ("answered",)


def test_hidden_is_answered_exactly_as_missing_by_every_knowledge_method(world: World) -> None:
    """Issue 22 (mutant M3): for every principal that may read documents but not this project (archived, another
    person's home, no grant, a token bound elsewhere), every KnowledgeService method given a hidden project,
    document or brain refuses with what it says for a missing one: the same error type, message, field, detail and
    remedy, once the name given is set aside; and a hidden document gets what a missing document of a project the
    caller reads gets."""
    calls = _named_calls(world)
    differences: list[str] = []
    compared = 0
    for role, kind, scopes, case, grant in itertools.product(ROLES, TOKEN_KINDS, SCOPE_SETS, CASES, GRANTS):
        project = _project_for(case, _handle(role, grant))
        if "knowledge:read" not in scopes or expected("read", role, kind, ("knowledge:read",), case, grant):
            continue
        p = _principal(world, role, grant, kind, scopes, project)
        readable = [pr.id for pr in world.rt.knowledge.projects(p)]
        for name, named_call in calls.items():
            hidden = _refusal(*named_call(p, project))
            missing = _refusal(*named_call(p, MISSING))
            compared += 1
            if hidden != missing or hidden[:2] != ("NotFound", "Not found: <named>"):
                differences.append(f"{name:26} role={role} token={kind} project={case} grant={grant or '-'}: "
                                   f"hidden {hidden} != missing {missing}")
        for doc, absent_doc in ((f"{project}/note.md", f"{other}/no-such.md") for other in readable[:1]):
            hidden = _refusal(partial(world.rt.knowledge.read_doc, p, doc), doc)  # hidden, and missing where p reads
            absent = _refusal(partial(world.rt.knowledge.read_doc, p, absent_doc), absent_doc)
            if hidden != absent:
                differences.append(f"read_doc role={role} token={kind} project={case}: {hidden} != {absent}")
    assert compared > 1000
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:40])


def test_the_author_retires_their_own_knowledge_without_a_write_grant(world: World) -> None:
    """The brain's rule for retiring, as memory's for forgetting: the author, or a writer of the project. A member
    who taught an item and then lost the write grant still retires it; a reader who did not teach it may not."""
    rt = world.rt
    author = rt.administration.add_user(LOCAL_OWNER, "teacher@example.com", "member", handle="teacher")
    rt.administration.grant(LOCAL_OWNER, author.email, "elsewhere", "write")
    teacher = user_principal(author)
    mine = rt.brain.teach(teacher, rule="Run the migrations before the seed.", project_id="elsewhere").item
    other = rt.brain.teach(teacher, rule="Pin the linter's version.", project_id="elsewhere").item
    rt.administration.grant(LOCAL_OWNER, author.email, "elsewhere", "read")  # no longer a writer
    reader = user_principal(rt.administration.user(LOCAL_OWNER, "member-read@example.com"))
    with pytest.raises(Forbidden, match=f"only the author of {other.ref}, a writer of elsewhere or an admin"):
        rt.brain.retire(reader, other.ref, "not mine")
    assert rt.brain.retire(teacher, mine.ref, "done with it").retired_at
