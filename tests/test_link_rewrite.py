"""Links rewritten after a move (vault/link_rewrite.py), checked against the resolver itself: whatever the
layout, the kinds and the ways links are written, every link names after the move what it named before (the
moved note at its new place), and a link that named nothing, or that needed no change, is left as written."""

from __future__ import annotations

import posixpath

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.records.documents import DocKey
from notewell.vault.link_resolution import Resolver
from notewell.vault.link_rewrite import Move, relinked
from notewell.vault.note_links import WrittenLink, written_links

FOLDERS = ["", "a/", "a/b/", "c/"]
NAMES = ["x", "y", "z z", "w(1)", "n\u00a0b", "t`k"]
PATHS = [f"{folder}{name}.md" for folder in FOLDERS for name in NAMES]


def _resolver(documents: dict[str, list[str]]) -> Resolver:
    return Resolver(lambda project: {path: i for i, path in enumerate(documents.get(project, []))})


def _a_name_reaches(after: Resolver, wanted: DocKey, source: DocKey) -> bool:
    """Does any wikilink name, the file name with folders before it or not, reach ``wanted`` from ``source``
    (none does when a note of the same name sits in the source's own folder)?"""
    parts = wanted[1].removesuffix(".md").split("/")
    return any(after.locate("wikilink", "/".join(parts[-n:]), source) == wanted for n in range(1, len(parts) + 1))


def _link(kind: str, way: int, source: DocKey, target: DocKey) -> str:
    """A link from ``source`` to ``target`` written one of several ways (some of which name nothing)."""
    vault_path = f"{target[0]}/{target[1]}"
    stem = target[1].removesuffix(".md")
    if kind == "wikilink":
        return f"[[{[posixpath.basename(stem), stem, 'missing'][way % 3]}{'#h|shown' if way > 2 else ''}]]"
    if kind == "markdown":
        relative = posixpath.relpath(vault_path, posixpath.dirname(f"{source[0]}/{source[1]}"))
        path = [relative, "/" + vault_path, relative.removesuffix(".md"), "nowhere.md"][way % 4]
        return f"[t]({path.replace(' ', '%20')}#anchor)" if way % 2 else f"[t](<{path}>)"
    relative = posixpath.relpath(vault_path, posixpath.dirname(f"{source[0]}/{source[1]}"))
    return f"`{[relative, target[1], vault_path, 'no/such.md'][way % 4]}`"


@settings(max_examples=300, deadline=None)
@given(present=st.sets(st.sampled_from(PATHS), min_size=2),
       other=st.sets(st.sampled_from(PATHS), min_size=1),
       links=st.lists(st.tuples(st.sampled_from(["wikilink", "markdown", "mention"]), st.integers(0, 5),
                                st.booleans(), st.integers(0, 99)), min_size=1, max_size=8),
       data=st.data())
def test_every_link_names_what_it_named_before(present: set[str], other: set[str],
                                               links: list[tuple[str, int, bool, int]], data: st.DataObject) -> None:
    paths = sorted(present)
    moved_from: DocKey = ("p", data.draw(st.sampled_from(paths)))
    moved_to: DocKey = ("p", data.draw(st.sampled_from([p for p in PATHS if p not in present]
                                                       + ["a/b/new name.md", "d/e/x.md"])))
    source_then: DocKey = ("p", data.draw(st.sampled_from(paths)))
    source_now = moved_to if source_then == moved_from else source_then
    before = {"p": paths, "q": sorted(other)}
    after = {"p": sorted({*paths} - {moved_from[1]} | {moved_to[1]}), "q": sorted(other)}
    lines = []
    for kind, way, to_other, pick in links:
        project = "q" if to_other and kind != "wikilink" else "p"
        target = (project, before[project][pick % len(before[project])])
        lines.append(f"see {_link(kind, way, source_then, target)} here")
    text = "\n".join(lines) + "\n"
    move = Move(moved_from, moved_to, before=_resolver(before), after=_resolver(after))

    found = relinked(text, source_now, move)

    old_lines, new_lines = text.split("\n"), found.text.split("\n")
    assert len(old_lines) == len(new_lines)
    assert all(new_lines[n - 1] == old_lines[n - 1] for n in range(1, len(lines) + 1) if n not in found.changed)
    assert all(new_lines[n - 1] != old_lines[n - 1] for n in found.changed)
    was_now = {(w.link.line, w.start): w for w in written_links(*source_now, text)}
    now_by_line: dict[int, list[WrittenLink]] = {}
    for written in written_links(*source_now, found.text):
        now_by_line.setdefault(written.link.line, []).append(written)
    then_by_line: dict[int, list[WrittenLink]] = {}
    for written in written_links(*source_then, text):
        then_by_line.setdefault(written.link.line, []).append(written)
    for number, then in then_by_line.items():
        if number in found.changed:  # a rewritten line holds as many links, in the same order
            assert len(now_by_line[number]) == len(then)
        for i, old in enumerate(then):
            named = move.before.locate(old.link.kind, old.link.target, source_then)
            wanted = moved_to if named == moved_from else named
            already = was_now.get((number, old.start))
            still = already is not None and move.after.locate(already.link.kind, already.link.target,
                                                              source_now) == wanted
            if named is None or still:
                if number in found.changed:  # left as written
                    new = now_by_line[number][i]
                    assert new_lines[number - 1][new.start:new.end] == old_lines[number - 1][old.start:old.end]
                continue
            if number not in found.changed or number in found.broken:
                assert number in found.broken
                assert old.link.kind != "markdown", old_lines[number - 1]  # a path can always be written
                if old.link.kind == "mention":  # a mention cannot hold other whitespace than a space, or a backtick
                    assert any((c.isspace() and c != " ") or c == "`" for c in wanted[1]), old_lines[number - 1]
                    continue
                if not _a_name_reaches(move.after, wanted, source_now):
                    continue
                # only a backtick can stop it: in the name (a code span would swallow it) or on the line
                assert "`" in wanted[1] or "`" in old_lines[number - 1], old_lines[number - 1]
                continue
            new = now_by_line[number][i]
            assert move.after.locate(new.link.kind, new.link.target, source_now) == wanted, new_lines[number - 1]


def test_only_what_names_the_target_changes() -> None:
    documents = {"p": ["notes/plan.md", "notes/log.md"]}
    moved = {"p": ["notes/log.md", "archive/2026/plan v2.md"]}
    move = Move(("p", "notes/plan.md"), ("p", "archive/2026/plan v2.md"), _resolver(documents), _resolver(moved))
    text = ('[[plan#Goals|the goals]] [label](plan.md?raw=1#goals "Title") [x](<plan.md>)\n'
            "```\n[[plan]]\n```\n`notes/plan.md` and `plan.md`\n")
    found = relinked(text, ("p", "notes/log.md"), move)
    assert found.text == ('[[plan v2#Goals|the goals]] [label](../archive/2026/plan%20v2.md?raw=1#goals "Title") '
                         "[x](<../archive/2026/plan v2.md>)\n```\n[[plan]]\n```\n"
                         "`archive/2026/plan v2.md` and `../archive/2026/plan v2.md`\n")
    assert (found.changed, found.broken) == ([1, 5], [])
