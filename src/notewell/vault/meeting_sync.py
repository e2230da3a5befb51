"""Meeting notes' action items kept in the brain, inside the indexer's write transaction (docs/brain.md,
"Meeting action items").

Each markdown document a sync writes, moves or removes is reconciled: the items its lines make now
(vault/meetings.py) against the items it yielded before (``brain.note_items``, found by their memory path
``brain-actions/<note path>`` and their source ``meeting_note``). An item is keyed by what it says (its
text and tags, ``rule_key``): the same line yields the same item at every sync, a new or edited line a new
item, and an item whose line was ticked, removed or edited, or whose note was deleted, moved to another project or
stopped being a meeting note, is retired (a note moved within its project keeps its items: ``moved``). An item
a person resolved at a session's close stays retired while its line is unchanged. Items are written and retired
by the vault itself (``VAULT_AUTHOR``), in the note's project, so the project's readers see them (the one
policy, as every memory). A full sync reads again the notes that
hold live items when someone joined the team after the newest of them was written (so the items naming them
are assigned to them).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from notewell.fold import fold
from notewell.paths import composed, indexed_spelling
from notewell.records.brain import MEETING_SOURCE, VAULT_AUTHOR, KnowledgeInput, NoteItemMove
from notewell.records.documents import DocKey
from notewell.records.identity import User, email_key
from notewell.records.memories import MemoryInput
from notewell.store.base import Store
from notewell.timestamps import now_iso
from notewell.vault.meetings import Meeting, parse_meeting

MEMORY_FOLDER = "brain-actions"
MAX_TITLE_CHARS = 200


def memory_path(note_path: str) -> str:
    """Where a note's items live among the project's memories: composed (NFC), as every memory's path is kept
    (paths.composed), whichever form the note's file is named in. Two notes whose names differ in form alone
    (two files on Linux) share it: each item names its note exactly (``from_note``)."""
    return composed(f"{MEMORY_FOLDER}/{note_path}")


def from_note(source: str) -> str:
    """An item's rationale: the meeting note ``project/path`` that yields it, named exactly as its file is."""
    return f"from the meeting note {source}"


class Team:
    """The active users a meeting note of a project names, as it names them: by email, full name, handle
    (``@tom`` or ``tom``), or first name; a name two people share names nobody."""

    def __init__(self, users: Sequence[User]) -> None:
        named: dict[str, set[str]] = {}
        first: dict[str, set[str]] = {}
        for user in users:
            if not user.active:
                continue
            email = email_key(user.email)
            words = user.name.split()
            for key in (email, fold(" ".join(words)), fold(user.handle), f"@{fold(user.handle)}"):
                named.setdefault(key, set()).add(email)
            if words:
                first.setdefault(fold(words[0]), set()).add(email)
        self._named = {k: next(iter(v)) for k, v in named.items() if len(v) == 1}
        self._first = {k: next(iter(v)) for k, v in first.items() if len(v) == 1}

    def email(self, who: str) -> str | None:
        key = fold(" ".join(who.split()))
        return self._named.get(key) or self._first.get(key)


@dataclass(frozen=True)
class Wanted:
    key: str  # the item's identity: its text and tags
    rule: str
    tags: tuple[str, ...]


def wanted_items(meeting: Meeting, team: Team) -> tuple[list[Wanted], set[str]]:
    """(the open items, the keys of the ticked ones) the meeting's lines make with this team."""
    items: dict[str, Wanted] = {}
    ticked: set[str] = set()
    for line in meeting.items:
        emails = list(dict.fromkeys(e for e in (team.email(a) for a in line.assignees) if e is not None))
        if line.needs_assignee and not emails:
            continue
        tags = ("action_item", "open-question" if line.question else "action-item",
                *(f"for:{e}" for e in emails), meeting.tag, *(("blocker",) if line.blocker else ()))
        key = "meeting:" + hashlib.sha256("\x00".join([line.text, *tags]).encode("utf-8")).hexdigest()[:40]
        if line.done:
            ticked.add(key)
        else:
            items.setdefault(key, Wanted(key, line.text, tags))
    return list(items.values()), ticked - set(items)


@dataclass
class MeetingItems:
    """One sync's meeting-note work, run inside its write transaction (the store's writes join it)."""

    store: Store
    now: Callable[[], str] = now_iso
    added: int = 0
    retired: int = 0
    _users: list[User] | None = None
    _teams: dict[str, Team] = field(default_factory=dict)  # by project
    _noted: dict[tuple[str, str], str] | None = None  # (project, memory path) holding live items -> newest
    # the meeting notes, and the notes holding items, that this sync wrote or removed (revisit leaves them be);
    # never every document a build writes
    _seen: set[DocKey] = field(default_factory=set)

    @property
    def users(self) -> list[User]:
        if self._users is None:
            self._users = self.store.identity.users()
        return self._users

    def team(self, project_id: str) -> Team:
        """Who a note of the project names: in a home, its owner alone (no one else ever sees the home's
        items, and naming anyone else would let a member learn from an item's ``for:`` tag who has an account,
        and their email, with no grant at all); in a team project, every active user."""
        if project_id not in self._teams:
            project = self.store.identity.project(project_id)
            if project is not None and project.kind == "home":
                self._teams[project_id] = Team([u for u in self.users if u.id == project.owner_user_id])
            else:
                self._teams[project_id] = Team(self.users)
        return self._teams[project_id]

    def _has_items(self, key: DocKey) -> bool:
        if self._noted is None:
            self._noted = self.store.brain.noted_paths()
        return (key[0], memory_path(key[1])) in self._noted

    def written(self, key: DocKey, text: str) -> None:
        """A document stored with this text (added, changed, or moved here)."""
        meeting = parse_meeting(key[1], text)
        if meeting is None:
            if self._has_items(key):
                self._seen.add(key)
                self._reconcile(key, [], set(), "it is no longer a meeting note")
            return
        self._seen.add(key)
        wanted, ticked = wanted_items(meeting, self.team(key[0]))
        if wanted or ticked or self._has_items(key):
            self._reconcile(key, wanted, ticked, "its line was removed or edited")

    def gone(self, key: DocKey, why: str) -> None:
        """A document removed from the index (deleted, moved away, no longer indexed)."""
        if self._has_items(key):
            self._seen.add(key)
            self._reconcile(key, [], set(), why)

    def moved(self, source: DocKey, key: DocKey, text: str) -> None:
        """A document moved from ``source`` to ``key``, stored with this text. Moved within its project (to another
        folder, another name, or its name in the other Unicode form, as a Mac or a sync tool renames a file), it is
        the same note: its items follow it, so one a person resolved stays resolved and a live one keeps its ref;
        an item whose line the new text no longer has (the indexer calls this too for a rename to the other form
        found with other bytes) is then retired, and a new line adds its own. Moved to another project, which
        other people may read, its items are retired and start again there."""
        if source[0] == key[0] and (self._has_items(source) or parse_meeting(source[1], text) is not None):
            self._follow(source, key)  # (a meeting note whose items were all resolved holds no live one)
        self.gone(source, f"the note moved to {key[0]}/{key[1]}")  # what did not follow
        self.written(key, text)

    def _follow(self, source: DocKey, key: DocKey) -> None:
        """The items (live and retired) of the note at ``source`` moved to ``key`` of the same project: each
        keeps its ref and state, its memory's path and text and its rationale naming the note at ``key``."""
        named = from_note(f"{source[0]}/{source[1]}")
        there, rationale = f"{key[0]}/{key[1]}", from_note(f"{key[0]}/{key[1]}")
        moves = []
        for n in self.store.brain.note_items(source[0], memory_path(source[1])):
            if n.item.rationale == named:
                content = _content(n.item.rule, there, n.item.tags)
                moves.append(NoteItemMove(n.item.ref, memory_path(key[1]), content, _hash(content), rationale))
        if moves and self.store.brain.move_note_items(moves) and self._noted is not None:
            newest = self._noted.get((source[0], memory_path(source[1])))
            if newest is not None:
                here = (key[0], memory_path(key[1]))
                self._noted[here] = max(newest, self._noted.get(here, ""))

    def revisit(self) -> None:
        """Read again every note holding live items that this sync did not touch, when someone joined the team
        after the newest of those items was written (they may be named in them); else nothing to do."""
        if self._noted is None:
            self._noted = self.store.brain.noted_paths()
        newest_item = max(self._noted.values(), default="")
        if not self._noted or max((u.created_at for u in self.users), default="") <= newest_item:
            return
        prefix = f"{MEMORY_FOLDER}/"
        for project, path in sorted(self._noted):
            named = from_note(f"{project}/")
            notes = {n.item.rationale.removeprefix(named) for n in self.store.brain.note_items(project, path)
                     if n.item.live and n.item.rationale.startswith(named)}
            rel = path.removeprefix(prefix)  # composed: the note is looked for as its file is named
            for key in sorted((project, note) for note in notes or [
                    indexed_spelling(self.store.documents, project, rel) or rel]):
                if key in self._seen:
                    continue
                doc = self.store.documents.get(*key)
                if doc is None:
                    self.gone(key, "the note is no longer indexed")
                else:
                    self.written(key, doc.text)

    def _reconcile(self, key: DocKey, wanted: list[Wanted], ticked: set[str], why_gone: str) -> None:
        project, path = key
        source = from_note(f"{project}/{path}")  # not the items of a note named alike in the other form
        existing = [n for n in self.store.brain.note_items(project, memory_path(path)) if n.item.rationale == source]
        live = {n.item.rule_key: n.item for n in existing if n.item.live}
        resolved = {n.item.rule_key for n in existing if not n.item.live and n.retired_by not in (None, VAULT_AUTHOR)}
        now = self.now()
        for item in wanted:
            if item.key not in live and item.key not in resolved:
                self._add(project, path, item, now)
        keep = {w.key for w in wanted}
        for rule_key, old in live.items():
            if rule_key not in keep:
                reason = f"ticked in {project}/{path}" if rule_key in ticked else f"{project}/{path}: {why_gone}"
                self.retired += self.store.brain.retire([old.ref], VAULT_AUTHOR, reason, now)

    def _add(self, project: str, path: str, item: Wanted, now: str) -> None:
        source = f"{project}/{path}"
        content = _content(item.rule, source, item.tags)
        title = item.rule if len(item.rule) <= MAX_TITLE_CHARS else item.rule[: MAX_TITLE_CHARS - 1] + "…"
        memory = MemoryInput(ref=f"mem_{secrets.token_hex(10)}", project=project, author_user_id=VAULT_AUTHOR,
                             author_token_id=None, memory_type="durable", path=memory_path(path), title=title,
                             content=content, tags=item.tags, content_hash=_hash(content), created=now)
        knowledge = KnowledgeInput(brain_project=project, owner_user_id=VAULT_AUTHOR, kind="action_item", trigger="",
                                   rule=item.rule, rationale=from_note(source), source=MEETING_SOURCE,
                                   confidence=1.0, rule_key=item.key, created=now)
        _, created = self.store.brain.add_knowledge(memory, knowledge)
        self.added += int(created)
        if self._noted is not None:
            self._noted[(project, memory_path(path))] = now


def _content(rule: str, source: str, tags: Sequence[str]) -> str:
    """An item's memory text: its line, and the note ``project/path`` it comes from with its tags (the first,
    action_item, left out)."""
    return f"{rule}\nFrom the meeting note {source} ({', '.join(tags[1:])})"


def _hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
