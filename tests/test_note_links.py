"""Link parsing and resolution (vault/note_links.py, vault/link_resolution.py): examples and properties."""

from __future__ import annotations

import posixpath

from hypothesis import given
from hypothesis import strategies as st

from notewell.vault.link_resolution import ProjectIndex, Resolver, mention_paths, wikilink_target
from notewell.vault.note_links import (
    MAX_LINKS_PER_DOCUMENT,
    SNIPPET_CHARS,
    name_key,
    parse_links,
    snippet,
    vault_path,
)


def links(text: str, path: str = "notes/review.md", project: str = "p") -> list[tuple[str, int, str, str, str]]:
    return [(link.kind, link.line, link.target, link.anchor, link.label) for link in parse_links(project, path, text)]


def test_wikilinks_with_labels_anchors_and_embeds() -> None:
    text = ("See [[pricing-policy]] and [[Kestrel Logistics|Kestrel]].\n"
            "![[diagram.png]] then [[plan#Q2 goals|the plan]]\n")
    assert links(text) == [
        ("wikilink", 1, "pricing-policy", "", ""),
        ("wikilink", 1, "Kestrel Logistics", "", "Kestrel"),
        ("wikilink", 2, "diagram.png", "", ""),
        ("wikilink", 2, "plan", "Q2 goals", "the plan"),
    ]


def test_a_heading_of_the_same_note_is_no_link() -> None:
    assert links("[[#Goals]] and [text](#goals)\n") == []


def test_markdown_links_relative_absolute_escaped_and_anchored() -> None:
    text = ("[Kestrel](../clients/kestrel-logistics.md#terms) [root](/other/plan.md)\n"
            "[spaced](<../clients/Kestrel Logistics.md>) [escaped](sub/caf%C3%A9.md \"title\")\n"
            "[web](https://example.com/a.md) [mail](mailto:a@b.c) [out](../../../etc/passwd)\n")
    assert links(text) == [
        ("markdown", 1, "p/clients/kestrel-logistics.md", "terms", "Kestrel"),
        ("markdown", 1, "other/plan.md", "", "root"),
        ("markdown", 2, "p/clients/Kestrel Logistics.md", "", "spaced"),
        ("markdown", 2, "p/notes/sub/café.md", "", "escaped"),
    ]


def test_code_fences_and_inline_code_hold_no_links_but_code_may_mention_a_path() -> None:
    text = ("```\n[[inside-fence]]\n```\n~~~~python\n[x](a.md)\n~~~\nstill fenced [[no]]\n~~~~\n"
            "`[[in-code]]` and ``[x](b.md)`` but `clients/kestrel.md` and `x = 1`\n[[after]]\n")
    assert links(text) == [("mention", 9, "clients/kestrel.md", "", ""), ("wikilink", 10, "after", "", "")]


def test_only_markdown_documents_have_links() -> None:
    assert parse_links("p", "notes.txt", "[[a]]\n") == []


def test_links_are_bounded() -> None:
    many = parse_links("p", "a.md", "[[x]] " * (MAX_LINKS_PER_DOCUMENT + 5))
    assert len(many) == MAX_LINKS_PER_DOCUMENT
    long_line = "word " * 100 + "[[target]]" + " more" * 100
    cut = snippet(long_line, "target")
    assert len(cut) == SNIPPET_CHARS and "[[target]]" in cut
    assert snippet("  short [[x]]  ", "x") == "short [[x]]"


def test_vault_paths_stay_in_the_vault() -> None:
    assert vault_path("p", "a/b.md", "../c.md") == "p/c.md"
    assert vault_path("p", "a/b.md", "../../q/c.md") == "q/c.md"
    assert vault_path("p", "a/b.md", "../../../c.md") is None
    assert vault_path("p", "b.md", "/q/c.md") == "q/c.md"
    assert vault_path("p", "b.md", "/c.md") is None  # a file at the vault's root is in no project


# --- resolution -------------------------------------------------------------------------------------

TRICKY = ["pricing-policy.md", "clients/kestrel.md", "archive/clients/kestrel.md", "meetings/plan.md",
          "projects/plan.md", "notes/review.md", "notes/Plan.md", "Café Menu.md", "folder/Same.md",
          "folder/same.md", "diagram.png"]


def resolve(name: str, source: str = "notes/review.md") -> str | None:
    return wikilink_target(name, source, ProjectIndex({p: i for i, p in enumerate(TRICKY)}).by_key)


def test_wikilink_resolution_rules() -> None:
    assert resolve("pricing-policy") == "pricing-policy.md"
    assert resolve("PRICING-POLICY.md") == "pricing-policy.md"  # case and the ending do not matter
    assert resolve("kestrel") == "clients/kestrel.md"  # the shortest path
    assert resolve("archive/clients/kestrel") == "archive/clients/kestrel.md"  # folders narrow it
    assert resolve("clients/kestrel") == "clients/kestrel.md"
    assert resolve("plan") == "notes/Plan.md"  # the linking note's own folder first
    assert resolve("plan", "other/x.md") is None  # two at the same depth elsewhere: ambiguous, unresolved
    assert resolve("meetings/plan", "other/x.md") == "meetings/plan.md"
    assert resolve("café menu") == "Café Menu.md"
    assert resolve("Cafe\u0301 Menu") == "Café Menu.md"  # NFD as a Mac writes it
    assert resolve("Same", "x.md") == "folder/Same.md"  # equals differing in case: the exact case wins
    assert resolve("diagram.png") == "diagram.png"
    assert resolve("diagram") is None
    assert resolve("nothing") is None


def test_path_links_and_mentions_resolve_exactly() -> None:
    docs = {"p": {"clients/kestrel.md": 1, "notes/a.md": 2}, "q": {"plan.md": 3}}
    resolver = Resolver(lambda project: docs.get(project, {}))
    source = ("p", "notes/a.md")
    assert resolver.resolve("markdown", "p/clients/kestrel.md", source) == 1
    assert resolver.resolve("markdown", "p/clients/kestrel", source) == 1  # .md may be left out
    assert resolver.resolve("markdown", "p/clients/Kestrel.md", source) is None  # paths are case-sensitive
    assert resolver.resolve("markdown", "q/plan.md", source) == 3  # another project: decided when answered
    assert resolver.resolve("mention", "clients/kestrel.md", source) == 1  # inside the project
    assert resolver.resolve("mention", "q/plan.md", source) == 3  # a vault path
    assert resolver.resolve("mention", "a.md", source) == 2  # beside the note
    assert resolver.resolve("wikilink", "kestrel", source) == 1
    assert resolver.resolve("wikilink", "plan", source) is None  # a wikilink stays in its project


# --- properties ------------------------------------------------------------------------------------

_NAME = st.text(st.characters(blacklist_characters="[]|#`\n\r\\", blacklist_categories=("Cs", "Cc")),
                min_size=1, max_size=30).filter(lambda s: s.strip() != "")
_SEGMENT = st.sampled_from(["..", ".", "a", "b c", "é", "", "~x", "-"])


@given(_NAME, st.text(st.characters(blacklist_characters="[]|`\n\r", blacklist_categories=("Cs", "Cc")),
                      max_size=20), st.text(st.characters(blacklist_characters="[]|`\n\r\\",
                                                          blacklist_categories=("Cs", "Cc")), max_size=20))
def test_a_wikilink_reads_back_as_written(name: str, anchor: str, label: str) -> None:
    body = name + (f"#{anchor}" if anchor else "") + (f"|{label}" if label else "")
    found = parse_links("p", "a.md", f"text [[{body}]] more\n")
    target, pipe, label_part = body.partition("|")
    if pipe:
        target = target.removesuffix("\\")  # a backslash before the pipe escapes it inside a table
    name_part, _, anchor_part = target.partition("#")
    assert [(link.target, link.anchor, link.label) for link in found] == [
        (name_part.strip(), anchor_part.strip(), label_part.strip())]


@given(st.lists(st.one_of(st.just("```"), st.just("~~~"), st.just("[[link]]"), st.just("`[[code]]`"),
                          st.just("plain words"), st.just("[md](x.md)")), max_size=30))
def test_nothing_inside_a_fence_or_code_span_is_a_link(lines: list[str]) -> None:
    fenced: set[int] = set()
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        if fence is not None:
            fenced.add(number)
            if line == fence:
                fence = None
        elif line in ("```", "~~~"):
            fence = line
            fenced.add(number)
    found = parse_links("p", "a.md", "\n".join(lines))
    assert all(link.line not in fenced for link in found)
    assert all(link.target != "[[code]]" and link.target != "code" for link in found)
    expected = [n for n, line in enumerate(lines, start=1) if n not in fenced and line in ("[[link]]", "[md](x.md)")]
    assert [link.line for link in found] == expected


@given(st.lists(_SEGMENT, max_size=6), st.lists(_SEGMENT, min_size=1, max_size=6), st.booleans())
def test_a_path_never_leaves_the_vault(source: list[str], target: list[str], absolute: bool) -> None:
    written = ("/" if absolute else "") + "/".join(target)
    found = vault_path("p", "/".join([*source, "n.md"]), written)
    if found is not None:
        assert not found.startswith("/") and ".." not in found.split("/") and "." not in found.split("/")
        assert posixpath.normpath(found) == found and "/" in found
    for candidate in mention_paths("p", "/".join([*source, "n.md"]), written):
        assert ".." not in candidate.split("/") and not candidate.startswith("/")


@given(_NAME)
def test_a_file_name_and_its_link_share_a_key(name: str) -> None:
    assert name_key(name + ".md") == name_key(name) == name_key(f"folder/{name}.MD")


_PATHS = st.lists(st.builds(lambda folders, name: "/".join([*folders, name]),
                            st.lists(st.sampled_from(["a", "b", "A", "sub"]), max_size=3),
                            st.sampled_from(["plan.md", "Plan.md", "plan.txt", "notes.md", "plan"])),
                  min_size=1, max_size=12, unique=True)


@given(_PATHS, st.sampled_from(["plan", "PLAN", "a/plan", "notes", "plan.md", "sub/plan"]),
       st.sampled_from(["x.md", "a/x.md", "a/b/x.md", "sub/x.md"]))
def test_a_wikilink_resolves_to_a_candidate_by_the_rules(paths: list[str], name: str, source: str) -> None:
    found = wikilink_target(name, source, ProjectIndex({p: i for i, p in enumerate(paths)}).by_key)
    candidates = [p for p in paths if name_key(p) == name_key(name)
                  and ("/" not in name or f"/{p.lower()}".removesuffix(".md").endswith(f"/{name.lower()}"
                                                                                        .removesuffix(".md")))]
    if found is None:
        here = [c for c in candidates if posixpath.dirname(c) == posixpath.dirname(source)]
        shallowest = [c for c in candidates if c.count("/") == min((x.count("/") for x in candidates), default=0)]
        assert not here and (not candidates or len(shallowest) > 1)  # nothing, or an ambiguous tie
        return
    assert found in candidates
    here = [c for c in candidates if posixpath.dirname(c) == posixpath.dirname(source)]
    if here:
        assert found in here  # the linking note's folder first
    else:
        assert found.count("/") == min(c.count("/") for c in candidates)  # else the shortest path
