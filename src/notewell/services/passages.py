"""The best document passages for a few words, for recall_context with include_documents.

Each query word of 3 or more characters, and each pair of Chinese, Japanese or Korean characters the
tolerant words make of a run of them (word_breaks.pairs), is looked up through the search engine
(case-insensitive substring over the readable projects); a Latin word of 2 letters is inside too many
others to tell anything ("ci" in "decision"). A passage is the paragraph (the run of non-blank lines, at
most MAX_PASSAGE_LINES) around a matching line. Its relevance is 0.9 times the share of the query
words it contains, so a passage holding every word ranks just below the best memory (relevance 1.0).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine, SearchRequest
from notewell.services.context_pack import PackItem
from notewell.services.memory_rank import folded
from notewell.store.base import DocumentRepository
from notewell.word_breaks import has_close_script

MAX_PASSAGE_LINES = 12
MAX_DOCUMENTS = 10
PASSAGES_PER_DOCUMENT = 3
HITS_PER_WORD = 500
DOCUMENT_WEIGHT = 0.9


def looked_up(word: str) -> bool:
    """Whether a document substring search for a query's tolerant ``word`` tells anything."""
    return len(word) >= 3 or (len(word) == 2 and has_close_script(word))


def _paragraph(lines: list[str], line_no: int) -> tuple[int, int]:
    """1-based inclusive bounds of the paragraph holding ``line_no``, at most MAX_PASSAGE_LINES long."""
    i = line_no - 1
    start = end = i
    while start > 0 and lines[start - 1].strip() and i - start + 1 < MAX_PASSAGE_LINES // 2:
        start -= 1
    while end + 1 < len(lines) and lines[end + 1].strip() and end - start + 1 < MAX_PASSAGE_LINES:
        end += 1
    return start + 1, end + 1


def document_passages(engine: SearchEngine, documents: DocumentRepository, projects: Sequence[str],
                      terms: Sequence[str]) -> list[PackItem]:
    words = [t for t in terms if looked_up(t)]
    if not words or not projects:
        return []
    hit_lines: dict[tuple[str, str], set[int]] = defaultdict(set)
    doc_words: dict[tuple[str, str], set[str]] = defaultdict(set)
    for word in words:
        found = engine.search(SearchRequest(query=word, scope=Scope(projects=list(projects)), all_lines=True,
                                            limit=HITS_PER_WORD))
        for match in found.matches:
            hit_lines[(match.project, match.path)].add(match.line)
            doc_words[(match.project, match.path)].add(word)
    best_docs = sorted(doc_words, key=lambda key: (-len(doc_words[key]), -len(hit_lines[key]), key))[:MAX_DOCUMENTS]
    items: list[PackItem] = []
    for project, path in best_docs:
        doc = documents.get(project, path)
        if doc is None:
            continue
        lines = doc.text.splitlines()
        scored: dict[tuple[int, int], float] = {}
        for line_no in sorted(hit_lines[(project, path)]):
            if line_no > len(lines):
                continue
            bounds = _paragraph(lines, line_no)
            if bounds in scored:
                continue
            text = folded("\n".join(lines[bounds[0] - 1 : bounds[1]]))  # as the query's words were
            scored[bounds] = sum(1 for w in words if w in text) / len(words)
        for (first, last), share in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:PASSAGES_PER_DOCUMENT]:
            location = f"{project}/{path}"
            items.append(PackItem(kind="document", ref=f"{location}#L{first}-{last}", title=doc.meta.title,
                                  label=f"{location}, lines {first}-{last}",
                                  text="\n".join(lines[first - 1 : last]), relevance=DOCUMENT_WEIGHT * share,
                                  found_by=("words",)))
    return items
