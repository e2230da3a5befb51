"""brain_ask_oracle: "how did I solve X?" answered from the caller's sessions, knowledge and documents.

No language model is called. The answer is extractive: one sentence per source, built from a template
and the source's own words, each ending with its citation mark [n]; a citation gives the source's id,
kind (session, knowledge or document), date and a snippet. A model would plug in at ``compose``: given
the same citations, it could write a freer answer, provided every sentence keeps its [n] (docs/brain.md).
The best document's neighbours (the documents it links to, then those that link to it: buildContext's own walk,
services/link_walk.py, one hop, within what the caller may read) are cited after it, LINKED of them at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from notewell.access.authorization import Authorization
from notewell.access.principal import Principal
from notewell.records.brain import VAULT_AUTHOR, KnowledgeRecord
from notewell.search.engine import SearchEngine
from notewell.services import brain_injection
from notewell.services.brain import BrainService
from notewell.services.brain_limits import CLOSE_CAPTURE_TAG, CROSS_TAG, MINED_TAG
from notewell.services.brain_retrieval import ScoredKnowledge
from notewell.services.brain_sessions import SessionFound
from notewell.services.link_walk import Reached, walk
from notewell.services.links import LinkService
from notewell.services.memory_rank import tolerant_query_terms
from notewell.services.passages import document_passages
from notewell.services.text_cut import shortened
from notewell.store.base import DocumentRepository

SESSIONS = 3
KNOWLEDGE = 3
DOCUMENTS = 2
LINKED = 2
SNIPPET_CHARS = 200  # a citation's snippet, and a quoted prompt or rule: cut at a word boundary (text_cut.py)
TITLE_CHARS = 80  # a citation's title taken from a session's prompt or a rule
_SENTENCE_MARKS = (".", "!", "?", "…", "。", "！", "？")
# What to try when nothing matched, as a key each door words with its own tools (no door's words in here).
NextStep = Literal["search-sessions"]


@dataclass(frozen=True)
class Citation:
    n: int
    id: str
    kind: str  # session | knowledge | document
    date: str  # YYYY-MM-DD
    snippet: str
    title: str
    found_by: tuple[str, ...] = ("words",)  # how its source was found: "words", "meaning" or both
    similarity: float | None = None  # its cosine similarity to the question, when among the nearest in meaning


@dataclass(frozen=True)
class OracleAnswer:
    question: str
    answer: str
    citations: list[Citation]
    searched: list[str]  # the kinds of source searched (documents only with knowledge:read)
    next_step: NextStep | None = None  # when nothing matched: what to try next, for the door to word
    words_only: str | None = None  # why meaning could not be used (services/meaning.py), None when it was


def _ended(text: str) -> str:
    """``text`` as a sentence: a full stop after it unless it ends one already ("Fixed it." or "修好了。")."""
    return text if text.endswith(_SENTENCE_MARKS) else f"{text}."


def _snip(text: str, limit: int = SNIPPET_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters: cut at a word boundary, never inside a character, with
    "…" (services/text_cut.py)."""
    return shortened(" ".join(text.split()), limit)


def _session_sentence(found: SessionFound, n: int) -> tuple[str, Citation]:
    s = found.session
    state = "is still open" if s.ended_at is None else ("succeeded" if s.success else "failed")
    vote = f", voted {s.user_feedback}" if s.user_feedback else ""
    told = f" Outcome: {_ended(_snip(s.summary))}" if s.summary else ""
    sentence = (f"On {s.started_at[:10]} you worked on \u201c{_snip(s.prompt) or 'an untitled task'}\u201d in "
                f"{s.brain_project}; it {state}{vote}.{told} [{n}]")
    # a session found by its events or learnings alone may have neither summary nor prompt: it says what it was
    snippet = _snip(s.summary or s.prompt) or (f"An untitled task that {state} ({s.event_count} event"
                                                 f"{'' if s.event_count == 1 else 's'}).")
    return sentence, Citation(n, s.id, "session", s.started_at[:10], snippet, _snip(s.prompt, TITLE_CHARS),
                              found.found_by, found.similarity)


def _whose(k: KnowledgeRecord, caller: str, handle: str | None) -> str:
    """Who holds ``k`` and how it came, from the caller's side: "You taught", "alice captured at a session's
    close", "The brain learned from one of your sessions", "A meeting note set" (items of other people in a
    shared project are theirs, and a mined item was taught by nobody)."""
    kind = k.kind.replace("_", "-")
    if k.owner_user_id == VAULT_AUTHOR:
        return f"A meeting note set this {kind}"
    mine = k.owner_user_id == caller
    who = "You" if mine else (handle or "Someone no longer here")
    if MINED_TAG in k.tags:
        return f"The brain learned this {kind} from one of {'your' if mine else f'{who}’s'} sessions"
    if CROSS_TAG in k.tags:
        return f"The brain learned this {kind} across {'your' if mine else f'{who}’s'} sessions"
    if CLOSE_CAPTURE_TAG in k.tags:
        return f"{who} captured this {kind} at a session's close"
    return f"{who} taught this {kind}"


def _knowledge_sentence(found: ScoredKnowledge, n: int, whose: str) -> tuple[str, Citation]:
    k = found.item
    when = f"{brain_injection.when(k.trigger).lower()[:1]}{brain_injection.when(k.trigger)[1:]}, " if k.trigger else ""
    why = f" (because {brain_injection.one_line(k.rationale)})" if k.rationale.strip() else ""
    sentence = f"{whose}: {_ended(f'{when}{brain_injection.one_line(k.rule)}{why}')} [{n}]"
    return sentence, Citation(n, k.ref, "knowledge", k.created[:10], _snip(f"{when}{k.rule}"),
                              _snip(k.rule, TITLE_CHARS),
                              found.found_by, found.similarity)


def compose(question: str, sentences: list[str]) -> str:
    """The answer text from cited sentences (the place a language model would plug in); with none, what
    was not found (the door adds what to try next: ``OracleAnswer.next_step``)."""
    if not sentences:
        return f"Nothing in your sessions or knowledge matches \u201c{_snip(question)}\u201d."
    return " ".join(sentences)


class OracleService:
    """brain_ask_oracle's answers, from the brain service (sessions and knowledge, within p's scope) and,
    when p holds knowledge:read, from the documents p may read."""

    def __init__(self, brain: BrainService, documents: DocumentRepository, engine: SearchEngine,
                 authorization: Authorization, links: LinkService) -> None:
        self.brain = brain
        self.documents = documents
        self.engine = engine
        self.authorization = authorization
        self.links = links

    def ask(self, p: Principal, question: str) -> OracleAnswer:
        terms = tolerant_query_terms(question, "question")
        sentences: list[str] = []
        citations: list[Citation] = []
        for found in self.brain.search_sessions(p, question, limit=SESSIONS):
            sentence, cite = _session_sentence(found, len(citations) + 1)
            sentences.append(sentence)
            citations.append(cite)
        for item in self.brain.retrieve(p, question, limit=KNOWLEDGE).items:
            owner = self.brain.store.identity.user(item.item.owner_user_id)
            whose = _whose(item.item, p.user_id, owner.handle if owner is not None else None)
            sentence, cite = _knowledge_sentence(item, len(citations) + 1, whose)
            sentences.append(sentence)
            citations.append(cite)
        searched = ["sessions", "knowledge"]
        if self.authorization.allowed(p, "knowledge:read"):
            searched.append("documents")
            for sentence, cite in self._documents(p, terms, len(citations)):
                sentences.append(sentence)
                citations.append(cite)
        return OracleAnswer(question, compose(question, sentences), citations, searched,
                            None if sentences else "search-sessions", self.brain.words_only(question))

    def _documents(self, p: Principal, terms: list[str], cited: int) -> list[tuple[str, Citation]]:
        readable = [project.id for project in self.authorization.projects(p, "knowledge:read")]
        passages = sorted(document_passages(self.engine, self.documents, readable, terms), key=lambda i: -i.relevance)
        out: list[tuple[str, Citation]] = []
        for passage in passages[:DOCUMENTS]:
            n = cited + len(out) + 1
            location = passage.ref.split("#", 1)[0]
            project, _, path = location.partition("/")
            meta = self.documents.meta(project, path)
            date = (datetime.fromtimestamp(meta.mtime_ns / 1e9, UTC).strftime("%Y-%m-%d") if meta else "")
            out.append((f"{passage.title} ({location}) says: \u201c{_snip(passage.text)}\u201d [{n}]",
                        Citation(n, passage.ref, "document", date, _snip(passage.text), passage.title)))
        if out:
            out += self._linked(readable, passages[0].ref.split("#", 1)[0], {c.id.split("#", 1)[0] for _, c in out},
                                cited + len(out))
        return out

    def _linked(self, readable: list[str], location: str, cited_paths: set[str],
                cited: int) -> list[tuple[str, Citation]]:
        """The best document's neighbours (buildContext's walk, one hop), as sentences saying how they are linked
        to it."""
        project, _, path = location.partition("/")
        reached = Reached()
        reached.add_document((project, path), "the best document", 0)
        walk(self.links, readable, reached, 1)
        out: list[tuple[str, Citation]] = []
        for (n_project, n_path), reach in reached.documents.items():
            neighbour = f"{n_project}/{n_path}"
            if reach.distance == 0 or neighbour in cited_paths or len(out) >= LINKED:
                continue
            cited_paths.add(neighbour)
            meta = self.documents.meta(n_project, n_path)
            if meta is None:
                continue
            n = cited + len(out) + 1
            date = datetime.fromtimestamp(meta.mtime_ns / 1e9, UTC).strftime("%Y-%m-%d")
            sentence = (f"{meta.title} ({neighbour}) links to {location} at line {reach.line}." if reach.backlink
                        else f"{location} links to {meta.title} ({neighbour}) at line {reach.line}.")
            out.append((f"{sentence} [{n}]",
                        Citation(n, neighbour, "document", date, _snip(meta.summary), meta.title)))
        return out
