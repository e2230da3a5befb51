"""MemoryService: strict vs tolerant matching, dedup, supersede, forget, visibility, validation, audit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_world import MemoryWorld, build_world
from notewell.access.authentication import user_principal
from notewell.access.principal import LOCAL_OWNER
from notewell.errors import Conflict, Forbidden, InvalidArgument, NotFound
from notewell.services.location_filter import ScopeDivergence
from notewell.services.memory import MAX_CONTENT_CHARS

# A fixed set: (path, title, content). Words chosen so that strict and tolerant answers differ.
FIXED = [
    ("decisions", "Token identity fallback", "When the handle is missing, the token identity falls back to the email."),
    ("decisions", "Tokenizer choice", "We count tokens with a regex pre-tokenizer; identities are not involved."),
    ("notes", "Deploy", "Deploying on Fridays is discouraged; deployments need a reviewer."),
    ("notes", "Fallback plan", "The fallback plan for the launch is a manual export."),
    ("ops/runbooks", "Backups", "Nightly backups run at 02:00 and are kept for thirty days."),
    ("ops/runbooks-old", "Old backups", "Backups used to run weekly."),
    ("people", "Onboarding", "New joiners get a laptop, a badge and a buddy in their first week."),
    ("people", "Leave", "Leave requests go through the HR portal two weeks ahead."),
]


@pytest.fixture
def world(store_url: str, tmp_path: Path) -> Iterator[MemoryWorld]:
    """On each backend (SQLite and PostgreSQL): the service must behave the same."""
    w = build_world(store_url, tmp_path)
    yield w
    w.store.close()


@pytest.fixture
def fixed(world: MemoryWorld) -> dict[str, str]:
    """The fixed set in apollo, written by alice; title -> ref."""
    alice = world.user("alice")
    return {title: world.service.remember(alice, content, path=path, title=title, project="apollo").memory.ref
            for path, title, content in FIXED}


def titles(results: object) -> set[str]:
    return {r.memory.title for r in results.results}  # type: ignore[attr-defined]


# --- strict vs tolerant ---------------------------------------------------------------------------


def test_strict_finds_only_full_whole_word_matches(world: MemoryWorld, fixed: dict[str, str]) -> None:
    alice = world.user("alice")
    found = world.service.search_memory(alice, "token identity fallback")
    assert titles(found) == {"Token identity fallback"}
    assert found.mode == "strict"
    assert "every term matched" in found.results[0].why
    assert found.results[0].matched["title"] == ["Token", "identity", "fallback"]
    # a stem or a prefix is not a whole word: nothing, and that is the honest answer
    assert world.service.search_memory(alice, "deploy friday").results == []
    assert world.service.search_memory(alice, "backup").results == []
    assert titles(world.service.search_memory(alice, "BACKUPS nightly")) == {"Backups"}
    # one missing word is enough to miss
    assert world.service.search_memory(alice, "token identity unicorn").results == []


def test_tolerant_recall_finds_stems_and_prefixes(world: MemoryWorld, fixed: dict[str, str]) -> None:
    alice = world.user("alice")
    assert "Deploy" in titles(world.service.recall(alice, "deploy friday"))  # Deploying, Fridays: stems
    assert {"Backups", "Old backups"} <= titles(world.service.recall(alice, "backup"))  # stem
    assert "Onboarding" in titles(world.service.recall(alice, "onboard"))  # prefix
    near = world.service.recall(alice, "token identity fallback")
    assert {"Token identity fallback", "Tokenizer choice", "Fallback plan"} <= titles(near)
    assert near.results[0].memory.title == "Token identity fallback"  # every word, and in the title
    assert near.mode == "tolerant" and near.results[0].why


def test_path_filter_is_a_prefix_of_the_full_location(world: MemoryWorld, fixed: dict[str, str]) -> None:
    """XMemo: "a logical path prefix", character by character over <project>/<path> (issue 22, item 16); a trailing
    / keeps to that folder; on both backends, with no wildcard but a final % (_ means itself) and case counting."""
    alice = world.user("alice")

    def found(path_filter: str) -> set[str]:
        return titles(world.service.recall(alice, "backups", path_filter=path_filter))

    both = {"Backups", "Old backups"}
    assert found("apollo/ops/runbooks") == both  # runbooks and runbooks-old
    assert found("apollo/ops/run") == both and found("apollo/o") == both and found("apol") == both
    assert found("apollo/ops/runbooks-") == {"Old backups"}
    assert found("apollo/ops/runbooks/") == {"Backups"}  # the folder and below it only
    assert found("apollo/ops") == both and found("apollo") == both and found("apollo/") == both
    assert found("apollo/ops/runbooks%") == both  # a final % adds nothing
    assert found("apollo/OPS") == set() and found("apollo/ops/runbookz") == set()
    assert world.service.recall(alice, "backups", path_filter="~alice").results == []
    for path in ("a_b/x", "aXb/x"):
        world.service.remember(alice, f"Wildcard check at {path}.", path=path, project="apollo")
    assert {r.memory.path for r in world.service.search_memory(alice, "wildcard check",
                                                                path_filter="apollo/a_b").results} == {"a_b/x"}
    assert world.service.search_memory(alice, "backups", limit=0).results == []  # XMemo refuses only a negative one
    with pytest.raises(InvalidArgument, match="limit"):
        world.service.search_memory(alice, "backups", limit=-1)


def test_limit_and_memory_type_filter(world: MemoryWorld, fixed: dict[str, str]) -> None:
    alice = world.user("alice")
    world.service.remember(alice, "Working note: backups paused tonight.", memory_type="working", project="apollo")
    assert len(world.service.recall(alice, "backups", limit=1).results) == 1
    working = world.service.recall(alice, "backups", memory_type="working")
    assert [r.memory.memory_type for r in working.results] == ["working"]
    durable = world.service.recall(alice, "backups", memory_type="durable")
    assert {r.memory.memory_type for r in durable.results} == {"durable"}


def test_prefer_working_ranks_recent_working_memories_first(world: MemoryWorld) -> None:
    alice = world.user("alice")
    for i in range(3):
        world.service.remember(alice, f"Release checklist item {i}: release notes reviewed, release tagged.")
    world.service.remember(alice, "release in progress", memory_type="working")
    plain = world.service.search_memory(alice, "release")
    assert plain.results[0].memory.memory_type == "durable"
    preferred = world.service.search_memory(alice, "release", prefer_working=True)
    assert preferred.results[0].memory.memory_type == "working"
    # the blend re-ranks more candidates than it returns: the weakest text match still comes first with limit 1
    for search in (world.service.search_memory, world.service.recall):
        assert [r.memory.memory_type for r in search(alice, "release", prefer_working=True, limit=1).results] == [
            "working"]


def test_expired_working_memories_leave_search(world: MemoryWorld) -> None:
    alice = world.user("alice")
    ref = world.service.remember(alice, "Standup moved to 10:00 today", memory_type="working",
                                 expires_at="2999-01-01T00:00:00Z").memory.ref
    assert [r.memory.ref for r in world.service.search_memory(alice, "standup").results] == [ref]
    with world.store.db.transaction() as conn:  # type: ignore[attr-defined]  (both stores have one)
        conn.execute("UPDATE memories SET expires_at = '2000-01-01T00:00:00.000000Z'")
    assert world.service.search_memory(alice, "standup").results == []
    with pytest.raises(InvalidArgument, match="expires_at"):
        world.service.remember(alice, "x", expires_at="2999-01-01T00:00:00Z")  # durable memories do not expire


# --- one live copy, supersede, forget -------------------------------------------------------------


def test_same_content_same_place_returns_the_existing_ref(world: MemoryWorld) -> None:
    alice = world.user("alice")
    first = world.service.remember(alice, "Kickoff is on Monday.", path="meetings", project="apollo")
    again = world.service.remember(alice, "Kickoff is on Monday.", path="meetings", project="apollo", title="Other")
    elsewhere = world.service.remember(alice, "Kickoff is on Monday.", path="notes", project="apollo")
    assert first.created and not again.created and elsewhere.created
    assert again.memory.ref == first.memory.ref and elsewhere.memory.ref != first.memory.ref
    assert world.store.memories.count(["apollo"]) == 2


def test_the_same_text_written_again_after_a_working_memory_expired_is_a_new_memory(world: MemoryWorld) -> None:
    """A probe: the expired working memory still held its place's one live copy, so the new write answered
    with it (deduplicated) and wrote nothing: every search then found nothing."""
    alice = world.user("alice")
    text = "Standup is moved to the blue room this week only."
    working = world.service.remember(alice, text, path="exp", memory_type="working", project="apollo",
                                     expires_at="2999-01-01T00:00:00Z").memory.ref
    with world.store.memories.dialect.transaction() as conn:  # its expiry passed (no clock in a test)
        conn.execute("UPDATE memories SET expires_at = ? WHERE ref = ?", ("2001-01-01T00:00:00Z", working))
    assert not world.service.search_memory(alice, "standup blue room").results
    again = world.service.remember(alice, text, path="exp", project="apollo")
    assert again.created and again.memory.ref != working and again.memory.memory_type == "durable", again
    assert [r.memory.ref for r in world.service.search_memory(alice, "standup blue room").results] == [
        again.memory.ref]
    assert world.service.get(alice, working).superseded_by == again.memory.ref


def test_supersede_by_a_text_already_at_that_place_supersedes_the_old_memory(world: MemoryWorld) -> None:
    """A probe: the same words as a live memory at that place answered with that memory and left the memory it
    named in supersedes live, so both contradicting memories were found."""
    alice = world.user("alice")
    kept = world.service.remember(alice, "Lunch order closes at 11:00.", path="dd", project="apollo").memory.ref
    later = world.service.remember(alice, "Lunch order closes at 11:30.", path="dd", project="apollo").memory.ref
    back = world.service.remember(alice, "Lunch order closes at 11:00.", path="dd", project="apollo",
                                  supersedes=later)
    assert (back.created, back.memory.ref, back.superseded) == (False, kept, later), back
    assert [r.memory.ref for r in world.service.search_memory(alice, "lunch order closes").results] == [kept]
    assert world.service.get(alice, later).superseded_by == kept


def test_an_export_with_forgotten_memories_holds_them_only_for_whoever_could_have_forgotten_them(
        world: MemoryWorld) -> None:
    """A probe: `notewell memory export --all --as <a reader>` wrote a forgotten memory, its reason with it, where
    get and the listing answer Not found to that reader."""
    alice, bob = world.user("alice"), world.user("bob")
    ref = world.service.remember(alice, "The vendor shortlist is Acme and Initech.", project="apollo").memory.ref
    world.service.forget(alice, ref, "wrong vendors")
    assert ref not in {m.ref for m in world.service.export(bob, include_inactive=True)}
    assert ref in {m.ref for m in world.service.export(alice, include_inactive=True)}
    assert ref not in {m.ref for m in world.service.export(alice)}


def test_supersede_keeps_the_old_memory_by_ref_but_out_of_every_search(world: MemoryWorld) -> None:
    alice = world.user("alice")
    old = world.service.remember(alice, "The launch date is 3 March.", project="apollo").memory.ref
    new = world.service.remember(alice, "The launch date is 10 March.", project="apollo", supersedes=old)
    assert new.superseded == old
    for search in (world.service.search_memory, world.service.recall):
        assert [r.memory.ref for r in search(alice, "launch date").results] == [new.memory.ref]
    kept = world.service.get(alice, old)
    assert kept.content == "The launch date is 3 March." and kept.superseded_by == new.memory.ref
    with pytest.raises(InvalidArgument, match="supersedes"):
        world.service.remember(alice, "The launch date is 12 March.", project="apollo", supersedes=old)
    pack = world.service.recall_context(alice, "launch date", max_tokens=500)
    assert [item.ref for item in pack.items] == [new.memory.ref]


def test_forget_leaves_search_and_is_audited(world: MemoryWorld) -> None:
    alice = world.user("alice")
    ref = world.service.remember(alice, "The vendor shortlist is Acme and Globex.", project="apollo").memory.ref
    world.service.forget(alice, ref, "wrong vendors")
    assert world.service.search_memory(alice, "vendor shortlist").results == []
    assert world.service.recall(alice, "vendor").results == []
    kept = world.service.get(alice, ref)  # whoever could have forgotten it still reads it, marked forgotten
    assert kept.deleted_at is not None and kept.delete_reason == "wrong vendors"
    with pytest.raises(NotFound, match=f"Not found: {ref}"):  # bob reads apollo but could not have forgotten it
        world.service.get(world.user("bob"), ref)
    with pytest.raises(Conflict, match=f"^Already forgotten: {ref} was forgotten at "):  # said, not "Not found"
        world.service.forget(alice, ref, "again")
    with pytest.raises(NotFound, match=f"^Not found: {ref}$"):  # a forgotten memory is superseded by nothing
        world.service.remember(alice, "The shortlist is Acme and Initech.", project="apollo", supersedes=ref)
    actions = [(e.action, e.target) for e in world.store.audit.list_since() if e.action.startswith("memory.")]
    assert actions == [("memory.remember", ref), ("memory.forget", ref)]
    with pytest.raises(NotFound, match=r"^Not found: mem_x$"):  # a blank reason is no reason: allowed
        world.service.forget(alice, "mem_x", "  ")


def test_a_forgotten_memory_is_said_forgotten_to_every_reader_and_listed_to_its_author(world: MemoryWorld) -> None:
    """A reader who could never have forgotten it still hears "Already forgotten" (not a refusal of the right);
    with include_forgotten, the listing shows it to its author and not to that reader (mutants of issue 22)."""
    alice, bob = world.user("alice"), world.user("bob")
    ref = world.service.remember(alice, "The apollo vendor is Initech.", project="apollo").memory.ref
    world.service.forget(alice, ref, "wrong vendor")
    with pytest.raises(Conflict, match=f"^Already forgotten: {ref} was forgotten at "):
        world.service.forget(bob, ref, "tidy")

    def listed(p: object) -> list[str]:
        page, _ = world.service.list_memories(p, project="apollo", include_forgotten=True)  # type: ignore[arg-type]
        return [m.ref for m in page]
    assert listed(alice) == [ref]
    assert listed(bob) == []

def test_who_may_forget(world: MemoryWorld) -> None:
    alice, bob, ada, sam = (world.user(h) for h in ("alice", "bob", "ada", "sam"))
    world.rt.administration.grant(user_principal(world.store.identity.user_by_email(world.emails["ada"])),
                       world.emails["bob"], "hermes", "write")
    by_bob = world.service.remember(bob, "Hermes vendor demo went well.", project="hermes").memory.ref
    by_alice = world.service.remember(alice, "Apollo phase 2 starts in May.", project="apollo").memory.ref
    with pytest.raises(Forbidden, match="only the author"):
        world.service.forget(bob, by_alice, "not mine")  # bob reads apollo, cannot write it
    with pytest.raises(Forbidden):
        world.service.forget(sam, by_alice, "staff read only")  # staff: visible, no write right
    world.service.forget(ada, by_alice, "admin clean-up")
    world.rt.administration.ungrant(user_principal(world.store.identity.user_by_email(world.emails["ada"])),
                         world.emails["bob"], "hermes")
    with pytest.raises(NotFound):  # bob no longer sees hermes: not even its author may touch it
        world.service.forget(bob, by_bob, "mine")



def test_the_author_changes_their_own_memory_without_a_write_grant(world: MemoryWorld) -> None:
    """Issue 22 (mutant M1): the author may supersede and forget what they wrote, though they are neither an
    admin nor a writer of the project any more; another reader of the project may do neither."""
    alice, bob = world.user("alice"), world.user("bob")
    first = world.service.remember(alice, "Apollo retro is on Thursday.", project="apollo").memory.ref
    second = world.service.remember(alice, "Apollo demo needs the staging box.", project="apollo").memory.ref
    world.rt.administration.grant(LOCAL_OWNER, world.emails["alice"], "apollo", "read")  # no longer a writer
    with pytest.raises(Forbidden, match="not write to it"):
        world.service.remember(alice, "A new apollo note.", project="apollo")
    for attempt in (lambda: world.service.forget(bob, first, "not mine"),
                    lambda: world.service.remember(bob, "Retro moved.", supersedes=first)):
        with pytest.raises(Forbidden, match=f"^Forbidden: only the author of {first}, a writer of apollo"):
            attempt()
    moved = world.service.remember(alice, "Apollo retro moved to Friday.", supersedes=first)  # into her home
    assert moved.superseded == first and moved.memory.project == "~alice"
    assert world.service.get(alice, first).superseded_by == moved.memory.ref
    assert world.service.forget(alice, second, "done").deleted_at
    assert [r.memory.ref for r in world.service.search_memory(bob, "apollo").results] == []

# --- visibility: roles x token kinds x project kinds ---------------------------------------------


def test_permission_matrix(world: MemoryWorld) -> None:
    svc = world.service
    svc.remember(world.user("alice"), "matrix apollo", project="apollo")
    svc.remember(world.user("ada"), "matrix hermes", project="hermes")
    for handle in ("alice", "bob", "carol", "sam", "ada"):
        svc.remember(world.user(handle), f"matrix home {handle}")  # default: the caller's home
    cases = {  # (handle, bound project or None): memories seen
        ("alice", None): {"apollo", "~alice"},
        ("alice", "apollo"): {"apollo"},
        ("bob", None): {"apollo", "~bob"},
        ("bob", "apollo"): {"apollo"},
        ("carol", None): {"~carol"},
        ("sam", None): {"apollo", "hermes", "~sam"},
        ("sam", "hermes"): {"hermes"},
        ("ada", None): {"apollo", "hermes", "~ada"},
        ("ada", "apollo"): {"apollo"},
    }
    for (handle, bound), expected in cases.items():
        p = world.principal(handle, project=bound)
        for search in (svc.search_memory, svc.recall):
            seen = {r.memory.project for r in search(p, "matrix", limit=50).results}
            assert seen == expected, (handle, bound, search.__name__)
        assert {m.project for m in svc.export(p)} == expected
    # another person's home stays hidden from everyone, admin included, by ref too
    carol_home = next(m.ref for m in svc.export(world.user("carol")))
    for handle in ("alice", "sam", "ada"):
        with pytest.raises(NotFound, match=f"^Not found: {carol_home}$"):
            svc.get(world.user(handle), carol_home)


def test_write_rights_and_default_project(world: MemoryWorld) -> None:
    svc = world.service
    assert svc.remember(world.principal("alice", project="apollo"), "bound write").memory.project == "apollo"
    assert svc.remember(world.principal("alice"), "home write").memory.project == "~alice"
    with pytest.raises(Forbidden):
        svc.remember(world.user("bob"), "read grant only", project="apollo")
    with pytest.raises(Forbidden):
        svc.remember(world.user("sam"), "staff has no write grant", project="apollo")
    with pytest.raises(NotFound, match=r"^Not found: apollo$"):
        svc.remember(world.user("carol"), "no grant", project="apollo")
    with pytest.raises(NotFound, match=r"^Not found: ~alice$"):
        svc.remember(world.user("ada"), "another home", project="~alice")
    with pytest.raises(NotFound, match=r"^Not found: ~alice$"):
        svc.remember(world.principal("alice", project="apollo"), "outside the binding", project="~alice")
    assert svc.remember(world.user("ada"), "admin writes anywhere ordinary", project="hermes").created


def test_scopes(world: MemoryWorld) -> None:
    reader = world.principal("alice", scopes=["memory:read"])
    with pytest.raises(Forbidden, match="memory:write"):
        world.service.remember(reader, "no write scope")
    writer = world.principal("alice", scopes=["memory:write"])
    with pytest.raises(Forbidden, match="memory:read"):
        world.service.search_memory(writer, "anything")
    with pytest.raises(Forbidden, match="knowledge:read"):
        world.service.recall_context(reader, "anything", include_documents=True)


def test_path_filter_outside_the_scope_is_a_scope_divergence(world: MemoryWorld) -> None:
    svc = world.service
    for handle, bound, location in [("carol", None, "apollo/decisions"), ("bob", None, "~alice"),
                                    ("alice", "apollo", "~alice/notes"), ("sam", None, "nowhere/x"),
                                    ("ada", None, "~carol")]:
        with pytest.raises(ScopeDivergence, match="path_filter: scope divergence"):
            svc.search_memory(world.principal(handle, project=bound), "anything", path_filter=location)
    with pytest.raises(InvalidArgument, match="path_filter"):
        svc.recall(world.user("alice"), "x", path_filter="../etc")


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": "?!"}, "query"),
    ({"query": "x", "limit": -1}, "limit"),
    ({"query": "x", "limit": 51}, "limit"),
    ({"query": "x", "limit": "5"}, "limit"),
    ({"query": "x", "memory_type": "episodic"}, "memory_type"),
])
def test_validation_names_the_field(world: MemoryWorld, kwargs: dict[str, object], field: str) -> None:
    alice = world.user("alice")
    for search in (world.service.search_memory, world.service.recall):
        with pytest.raises(InvalidArgument) as err:
            search(alice, **kwargs)  # type: ignore[arg-type]
        assert err.value.field == field and str(err.value).startswith(f"{field}: ")


def test_the_content_limit_is_exact(world: MemoryWorld) -> None:
    alice = world.user("alice")
    kept = world.service.remember(alice, "x" * MAX_CONTENT_CHARS, project="apollo")
    assert kept.created and len(kept.memory.content) == MAX_CONTENT_CHARS
    with pytest.raises(InvalidArgument, match=f"^content: is {MAX_CONTENT_CHARS + 1} characters; keep a memory to "):
        world.service.remember(alice, "y" * (MAX_CONTENT_CHARS + 1), project="apollo")


def test_remember_validation(world: MemoryWorld) -> None:
    alice = world.user("alice")
    for kwargs, field in [({"content": " "}, "content"), ({"content": "x", "memory_type": "episodic"}, "memory_type"),
                          ({"content": "x", "tags": ["t" * 100]}, "tags"), ({"content": "x", "path": "../up"}, "path"),
                          ({"content": "x", "title": "t" * 500}, "title"),
                          ({"content": "a\x00b"}, "content"), ({"content": "x", "title": "a\x00"}, "title"),
                          ({"content": "x", "tags": ["a\x00"]}, "tags"), ({"content": "x", "path": "a\x00"}, "path"),
                          ({"content": "x", "memory_type": "working", "expires_at": "soon"}, "expires_at")]:
        with pytest.raises(InvalidArgument) as err:
            world.service.remember(alice, **kwargs)  # type: ignore[arg-type]
        assert err.value.field == field
    for max_tokens in (-1, 0, 10**9):
        with pytest.raises(InvalidArgument, match=r"^max_tokens: "):
            world.service.recall_context(alice, "x", max_tokens=max_tokens)


def test_a_private_memory_is_its_authors_alone(world: MemoryWorld) -> None:
    """Issue 15: XMemo filters by owner too. A private memory is invisible to an admin and to another writer of
    its project, through every read and change; the same words written there by someone else stay theirs."""
    alice, ada, bob = world.user("alice"), world.user("ada"), world.user("bob")
    world.rt.administration.grant(LOCAL_OWNER, world.emails["bob"], "apollo", "write")
    private = world.service.remember(alice, "Platypus budget draft: 40k, not yet agreed.", project="apollo",
                                     path="budget", private=True).memory
    shared = world.service.remember(alice, "Platypus kickoff is on Monday.", project="apollo").memory
    assert private.private and not shared.private
    for who in (ada, bob):
        assert [r.memory.ref for r in world.service.search_memory(who, "platypus budget").results] == []
        assert [r.memory.ref for r in world.service.recall(who, "platypus").results] == [shared.ref]
        assert private.ref not in {i.ref for i in world.service.recall_context(who, "platypus budget").items}
        assert [mem.ref for mem in world.service.list_memories(who, project="apollo", limit=50)[0]] == [shared.ref]
        assert private.ref not in {mem.ref for mem in world.service.export(who, include_inactive=True)}
        for attempt in (lambda p: world.service.get(p, private.ref),
                        lambda p: world.service.forget(p, private.ref, "no"),
                        lambda p: world.service.remember(p, "x", project="apollo", supersedes=private.ref)):
            with pytest.raises(NotFound, match=f"^Not found: {private.ref}$"):
                attempt(who)
    copy = world.service.remember(bob, "Platypus budget draft: 40k, not yet agreed.", project="apollo", path="budget")
    assert copy.created and copy.memory.ref != private.ref and not copy.memory.private  # never alice's ref
    again = world.service.remember(alice, "Platypus budget draft: 40k, not yet agreed.", project="apollo",
                                   path="budget", private=True)
    assert again.memory.ref == private.ref and not again.created  # her own private copy deduplicates
    assert {r.memory.ref for r in world.service.search_memory(alice, "platypus budget").results} == {
        private.ref, copy.memory.ref}
    assert world.service.get(alice, private.ref).private
    world.service.forget(alice, private.ref)
