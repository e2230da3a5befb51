"""Links rewritten after a move (vault/link_rewrite.py), checked against the resolver itself: whatever the
layout, the kinds and the ways links are written, every link names after the move what it named before (the
moved note at its new place), and a link that named nothing, or that needed no change, is left as written."""

from __future__ import annotations

import posixpath
from collections import Counter

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


def _mendable(kind: str, wanted: DocKey, source: DocKey, line: str, after: Resolver) -> bool:
    """Whether some wording of a link of ``kind`` can name ``wanted`` from ``source``: a markdown path always;
    a mention unless the name holds other whitespace than a space, or one of `<>"|?*; a wikilink when a name reaches
    the note and neither it nor the line holds a backtick (a code span would swallow it)."""
    if kind == "markdown":
        return True
    if kind == "mention":
        return not any((c.isspace() and c != " ") or c in '`<>"|?*' for c in wanted[1])
    return _a_name_reaches(after, wanted, source) and "`" not in wanted[1] and "`" not in line \
        and not any(c in wanted[1] for c in "#[]|")


@settings(max_examples=300, deadline=None)
@given(present=st.sets(st.sampled_from(PATHS), min_size=2),
       other=st.sets(st.sampled_from(PATHS), min_size=1),
       links=st.lists(st.tuples(st.sampled_from(["wikilink", "markdown", "mention"]), st.integers(0, 7),
                                st.booleans(), st.integers(0, 99), st.booleans()), min_size=1, max_size=10),
       data=st.data())
def test_every_link_names_what_it_named_before(present: set[str], other: set[str],
                                               links: list[tuple[str, int, bool, int, bool]],
                                               data: st.DataObject) -> None:
    """Several links a line, of every kind and way, some naming nothing (a path climbing out of the vault
    from one folder and not from another): each that named a document names it after, or its line is
    reported broken for a link no wording can mend; a link that needs nothing keeps its wording."""
    paths = sorted(present)
    moved_from: DocKey = ("p", data.draw(st.sampled_from(paths)))
    moved_to: DocKey = ("p", data.draw(st.sampled_from([p for p in PATHS if p not in present]
                                                       + ["a/b/new name.md", "d/e/x.md", "c/what?.md"])))
    source_then: DocKey = ("p", data.draw(st.sampled_from(paths)))
    source_now = moved_to if source_then == moved_from else source_then
    before = {"p": paths, "q": sorted(other)}
    after = {"p": sorted({*paths} - {moved_from[1]} | {moved_to[1]}), "q": sorted(other)}
    lines: list[str] = []
    for kind, way, to_other, pick, joined in links:
        project = "q" if to_other and kind != "wikilink" else "p"
        target = (project, before[project][pick % len(before[project])])
        written = "[far](../../../nowhere.md)" if way == 7 else _link(kind, way, source_then, target)
        if joined and lines:
            lines[-1] += f" and {written}"
        else:
            lines.append(f"see {written}")
    text = "\n".join(lines) + "\n"
    move = Move(moved_from, moved_to, before=_resolver(before), after=_resolver(after))

    found = relinked(text, source_now, move)

    old_lines, new_lines = text.split("\n"), found.text.split("\n")
    assert len(old_lines) == len(new_lines)
    assert all(new_lines[n - 1] == old_lines[n - 1] for n in range(1, len(lines) + 1) if n not in found.changed)
    assert all(new_lines[n - 1] != old_lines[n - 1] for n in found.changed)
    then_by_line: dict[int, list[WrittenLink]] = {}
    for written in written_links(*source_then, text):
        then_by_line.setdefault(written.link.line, []).append(written)
    now_by_line: dict[int, list[WrittenLink]] = {}
    for written in written_links(*source_now, found.text):
        now_by_line.setdefault(written.link.line, []).append(written)
    for number, then in then_by_line.items():
        owed: Counter[tuple[str, DocKey]] = Counter()
        unmendable = False
        for old in then:
            named = move.before.locate(old.link.kind, old.link.target, source_then)
            if named is not None:
                wanted = moved_to if named == moved_from else named
                owed[(old.link.kind, wanted)] += 1
                unmendable |= not _mendable(old.link.kind, wanted, source_now, old_lines[number - 1], move.after)
        held = Counter((new.link.kind, move.after.locate(new.link.kind, new.link.target, source_now))
                       for new in now_by_line.get(number, []))
        missing = owed - held
        if number in found.broken:
            assert unmendable or (number in found.changed and not missing), old_lines[number - 1]
        else:
            assert not missing, (old_lines[number - 1], new_lines[number - 1], missing)


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


def test_a_name_no_link_can_hold_is_escaped_or_reported() -> None:
    """A backtick, a no-break space, a "#": escaped in a markdown path; a wikilink that cannot hold them is left
    as written and reported. A relative link naming nothing that comes into the vault at the new depth does not
    stop its line being mended."""
    documents = {"p": ["plan.md", "log.md", "x.md"]}
    for new_name, markdown in [("t`k.md", "t%60k.md"), ("n\u00a0b.md", "n%C2%A0b.md"),
                               ("C# notes.md", "C%23%20notes.md")]:
        move = Move(("p", "plan.md"), ("p", new_name), _resolver(documents),
                    _resolver({"p": ["log.md", "x.md", new_name]}))
        found = relinked("[a](plan.md) and `code` and [[plan]]\n", ("p", "log.md"), move)
        wikilink_mended = not any(c in new_name for c in "`#")
        assert found.text.startswith(f"[a]({markdown}) and `code` and "), found
        assert (1 in found.broken) is not wikilink_mended, found
    move = Move(("p", "plan.md"), ("p", "a/b/plan.md"), _resolver(documents),
                _resolver({"p": ["log.md", "x.md", "a/b/plan.md"]}))
    found = relinked("[x](../../x.md) [y](log.md)\n", ("p", "a/b/plan.md"), move)
    assert found.text == "[x](../../x.md) [y](../../log.md)\n" and found.broken == [], found
