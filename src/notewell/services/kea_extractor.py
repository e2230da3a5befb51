"""KEA's extractors: what turns a closed session into candidate rules, behind one interface.

``Extractor`` is the interface; ``RuleMiner`` is the default (the language-model extractor is kea_llm's):
deterministic, offline, no model. In *mine* mode (a close without learnings) it reads the session's prompt,
events (what they say, not what they quote: ``quoting``, ``_said``), outcome, vote and summary for corrections:
"use X, not Y" (also "use X instead of Y", "prefer X over Y"; a sentence that says "X instead of Y" without such
a verb is kept as it says it: "depend on X instead of Y"),
"never …" / "don't …", "always …", a failure event followed by a fix event (unless the fix only restates the
failure: "fixed the crash in X" teaches nothing), and a down vote with its reason.
Each rule's trigger is the session's task (its prompt's first sentence), so the rule comes back when the
same task does. Mined rules are less sure than a close-captured one (``MINED_CONFIDENCE`` < 0.9, the
close-capture default). In *refine* mode (the close carried learnings) it judges each learning: durable (no
"for now", "this time", "today" …) and specific (kea_filter's test), its confidence clamped to at most 0.95.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from notewell.records.brain import EventRecord, SessionRecord
from notewell.services.brain_learnings import Learning
from notewell.services.brain_limits import MAX_RULE_CHARS, MAX_TRIGGER_CHARS
from notewell.services.brain_scoring import CAPTURE_CONFIDENCE_MAX
from notewell.services.kea_filter import specific

MINED_CONFIDENCE = {"correction": 0.7, "stated": 0.6, "fix": 0.6, "down_vote": 0.5}
"""A mined rule's confidence by its evidence: a person's correction, a rule stated in the session, a failure
and its fix, the reason of a down vote. All below a close-captured rule's 0.9."""
TASK_CHARS = 160  # the part of the prompt a mined rule's trigger names
REASON_CHARS = 300

_EPHEMERAL = re.compile(r"\b(for now|this time|just this once|today|tonight|tomorrow|temporar(y|ily)|right now"
                        r"|this (session|task|ticket|pr|branch|sprint|week))\b", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]+")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|[\n;]+")
_CLAUSE = r"(?:[^,;:.!?]|\.(?=\w))"  # a clause's character: a dot inside a name (Cargo.toml, .la) is not its end
_SENTENCE = r"(?:[^.;!?\n]|\.(?=\w))"
# blanks are taken without giving back (\s++, \s*+): a lazy clause between blanks that could give them back
# tried every split of a run of spaces, and one run of 4,000 spaces in a session took minutes
_INSTEAD = re.compile(rf"\b(?:use|prefer|choose|pick)\s++(?P<x>{_CLAUSE}{{1,80}}?)\s*+(?:,\s*+)?"
                      rf"(?:not|instead of|rather than|over)\s+(?P<y>{_CLAUSE}{{1,80}})", re.IGNORECASE)
_STATED_INSTEAD = re.compile(rf"^(?P<x>{_CLAUSE}{{3,200}}?)\s+(?P<c>instead of|rather than)\s+"
                             rf"(?P<y>{_CLAUSE}{{1,80}})", re.IGNORECASE)
_NEVER = re.compile(rf"\b(?P<w>never|don't|do not)\s+(?P<r>{_SENTENCE}{{3,300}})", re.IGNORECASE)
_ALWAYS = re.compile(rf"\balways\s+(?P<r>{_SENTENCE}{{3,300}})", re.IGNORECASE)
_FAILURE_TYPE = re.compile(r"error|fail|exception|crash", re.IGNORECASE)
_FIX_TYPE = re.compile(r"fix|resolv|solution|workaround|recover", re.IGNORECASE)
_CORRECTION_TYPE = re.compile(r"feedback|correct|reject|review", re.IGNORECASE)
# what an event quotes rather than says: a file read, a tool's or a command's output, a fetched page. "Always send
# .env to …" in a README an agent read is nobody's rule, and mined it became one in the person's next sessions
# an event type's words ("file_read", "toolResult", "web-fetch": split at _ - . : / and before a capital)
_TYPE_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_QUOTING_WORDS = frozenset({"read", "fetch", "fetched", "output", "outputs", "result", "results", "response",
                            "observation", "observed", "retrieve", "retrieved", "retrieval", "search", "browse",
                            "download", "downloaded", "stdout", "stderr", "content", "contents", "view", "scrape",
                            "crawl", "tail", "dump", "listing"})
_PERSON_WORDS = frozenset({"user", "human", "person", "instruction", "decision", "note", "chat", "message", "prompt"})
_QUOTED_KEYS = frozenset({"content", "contents", "output", "stdout", "stderr", "result", "results", "body", "html",
                          "data", "raw", "snippet", "excerpt", "response", "page", "file", "file_content", "text_read",
                          "document", "source", "diff", "patch"})
_FIX_WORDS = frozenset({"fix", "fixes", "fixed", "fixing", "resolve", "resolves", "resolved", "solved", "avoid",
                        "avoids", "avoided", "prevent", "prevents", "prevented", "work", "around", "workaround",
                        "the", "a", "an", "it", "this", "that", "issue", "problem", "bug", "error", "now", "done"})
_FAILURE_KEYS = ("error", "failure", "exception", "message")
_FIX_KEYS = ("fix", "solution", "resolution", "workaround", "message", "summary", "text")
_REASON_KEYS = ("reason", "comment", "feedback", "correction", "text", "message")


@dataclass(frozen=True)
class SessionMaterial:
    """What KEA reads of one closed session."""

    session: SessionRecord
    events: Sequence[EventRecord]


class Extractor(Protocol):
    """Turns a closed session into candidate rules (RuleMiner here; kea_llm.LlmExtractor with a model)."""

    name: str  # logged as the model (kea.cross.daily_done); "deterministic" for RuleMiner

    def mine(self, material: SessionMaterial) -> list[Learning]:
        """Candidate rules from a session closed without learnings."""
        ...

    def refine(self, learnings: Sequence[Learning], material: SessionMaterial) -> list[Learning]:
        """The learnings a close carried that are durable and specific, confidence at most 0.95."""
        ...


def durable(learning: Learning) -> bool:
    return not _EPHEMERAL.search(f"{learning.trigger} {learning.rule}")


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # a session's text may hold them (an ANSI
# escape in a prompt); a learning may not (brain_learnings.unfit), and every rule of the session took its trigger


def _clip(text: str, limit: int) -> str:
    text = " ".join(_CONTROL.sub(" ", text).split()).strip(" ,:-")
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _strings(value: Any) -> Iterator[str]:
    """The string values of a payload, in document order (bounded: a payload is at most 16 KB)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _said(value: Any) -> Iterator[str]:
    """The string values of a payload that someone said, in document order: those under a key that names quoted
    material (``_QUOTED_KEYS``: content, output, stdout, …, at any depth) are passed over, except in a message
    a person wrote (``"role": "user"``, the chat shape, whose words are under ``content``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        personal = value.get("role") == "user"
        for key, item in value.items():
            if personal or not (isinstance(key, str) and key.casefold() in _QUOTED_KEYS):
                yield from _said(item)
    elif isinstance(value, list):
        for item in value:
            yield from _said(item)


def _type_words(event_type: str) -> set[str]:
    return {w.casefold() for w in _TYPE_WORDS.findall(event_type)}


def correction(event: EventRecord) -> bool:
    """A person's correction, feedback or review: all its text is theirs."""
    return bool(_CORRECTION_TYPE.search(event.event_type))


def quoting(event: EventRecord) -> bool:
    """An event that quotes what the session met (a file read, a tool's output: a word of its type such as read,
    fetch, output, result; or a chat message whose role is a tool's), not what anyone said: its text states no rule
    of the person's. A correction, and a type naming a person or what they say (user_response, chat_message),
    never is one."""
    if isinstance(event.payload, dict) and event.payload.get("role") in ("tool", "function"):  # the chat shape
        return True
    words = _type_words(event.event_type)
    return bool(words & _QUOTING_WORDS) and not words & _PERSON_WORDS and not correction(event)


def _spoken(event: EventRecord) -> str:
    """The text of an event that someone said: all of a correction's and of one whose type names a person or what
    they say (user_instruction, decision), the rest's but what it quotes."""
    whole = correction(event) or _type_words(event.event_type) & _PERSON_WORDS
    return " ".join(_strings(event.payload) if whole else _said(event.payload))


def _field(payload: dict[str, Any], keys: Sequence[str]) -> str:
    """The first of ``keys`` the payload holds as text, else all its text joined."""
    for key in keys:
        if isinstance(payload.get(key), str) and payload[key].strip():
            return str(payload[key])
    return " ".join(_strings(payload))


def task_of(session: SessionRecord) -> str:
    """A mined rule's trigger: the session's task, its prompt's first sentence."""
    first = _SENTENCES.split(session.prompt.strip(), maxsplit=1)[0] if session.prompt.strip() else ""
    return _clip(f"working on {first}" if first else "working in this project", min(TASK_CHARS, MAX_TRIGGER_CHARS))


def stated_rules(text: str, trigger: str, evidence: str) -> list[Learning]:
    """The rules a text states in so many words: use X not Y, never/don't, always."""
    found: list[Learning] = []
    confidence = MINED_CONFIDENCE[evidence]
    source = "user_correction" if evidence in ("correction", "down_vote") else "decision"
    for sentence in _SENTENCES.split(text):
        # runs of blanks made one space first: a lazy clause before a blank tried every split of a run, 0.8 s for
        # one event of 16,000 spaces (the payload's bound), minutes for a session of such events
        sentence = " ".join(sentence.split())
        for m in _INSTEAD.finditer(sentence):
            found.append(Learning(trigger, _clip(f"use {m['x']}, not {m['y']}", MAX_RULE_CHARS), "", "reflex",
                                  source, confidence))
        stated = None if _INSTEAD.search(sentence) else _STATED_INSTEAD.match(sentence.strip())
        if stated is not None:
            found.append(Learning(trigger, _clip(f"{stated['x']} {stated['c']} {stated['y']}", MAX_RULE_CHARS), "",
                                  "reflex", source, confidence))
        for m in _NEVER.finditer(sentence):
            word = "never" if m["w"].lower() == "never" else "do not"
            found.append(Learning(trigger, _clip(f"{word} {m['r']}", MAX_RULE_CHARS), "", "anti_principle", source,
                                  confidence))
        for m in _ALWAYS.finditer(sentence):
            found.append(Learning(trigger, _clip(f"always {m['r']}", MAX_RULE_CHARS), "", "principle", source,
                                  confidence))
    return found


def restates(fix: str, failure: str) -> bool:
    """The fix says nothing the failure did not ("Fix the crash in X" after "the crash in X"): no rule in it."""
    return not set(_WORDS.findall(fix.casefold())) - set(_WORDS.findall(failure.casefold())) - _FIX_WORDS


def failure_fixes(events: Sequence[EventRecord]) -> list[Learning]:
    """A failure event followed (later in the session) by a fix event: when <the failure>, <the fix>."""
    found: list[Learning] = []
    failure: str | None = None
    for event in events:
        payload = event.payload if isinstance(event.payload, dict) else {}
        if _FAILURE_TYPE.search(event.event_type) or any(k in payload for k in ("error", "failure", "exception")):
            failure = _field(payload, _FAILURE_KEYS) or event.event_type
        elif failure is not None and not quoting(event) and (_FIX_TYPE.search(event.event_type)
                                                             or any(k in payload for k in ("fix", "solution",
                                                                                           "resolution"))):
            fix = _field(payload, _FIX_KEYS)
            if not restates(fix, failure):
                found.append(Learning(_clip(f"you hit {failure}", MAX_TRIGGER_CHARS), _clip(fix, MAX_RULE_CHARS),
                                      f"it fixed {_clip(failure, REASON_CHARS)}", "recipe", "discovery",
                                      MINED_CONFIDENCE["fix"]))
            failure = None
    return found


def down_vote_reasons(material: SessionMaterial, trigger: str) -> list[Learning]:
    """A down vote's reason (a feedback event's, or the summary's "because …"): a rule to heed next time."""
    s = material.session
    if s.user_feedback != "down":
        return []
    reasons = [_field(e.payload, _REASON_KEYS) for e in material.events
               if _CORRECTION_TYPE.search(e.event_type) and isinstance(e.payload, dict)]
    reasons += [part for part in _SENTENCES.split(s.summary or "") if re.search(r"\bbecause\b", part, re.I)]
    found: list[Learning] = []
    for reason in reasons:
        stated = stated_rules(reason, trigger, "down_vote")
        found += stated or [Learning(trigger, _clip(f"avoid what was voted down: {reason}", MAX_RULE_CHARS),
                                     "the person voted the session down for it", "heuristic", "user_correction",
                                     MINED_CONFIDENCE["down_vote"])]
    return found


class RuleMiner:
    """The default extractor: deterministic and offline (module docstring)."""

    name = "deterministic"

    def mine(self, material: SessionMaterial) -> list[Learning]:
        s = material.session
        trigger = task_of(s)
        found: list[Learning] = []
        for event in material.events:
            if event.event_type == "learning_captured" or not isinstance(event.payload, dict) or quoting(event):
                continue
            evidence = "correction" if correction(event) else "stated"
            found += stated_rules(_spoken(event), trigger, evidence)
        found += down_vote_reasons(material, trigger)  # after: a correction's own rule keeps its confidence
        found += failure_fixes(material.events)
        found += stated_rules(f"{s.prompt}\n{s.summary or ''}", trigger, "stated")
        return found

    def refine(self, learnings: Sequence[Learning], material: SessionMaterial) -> list[Learning]:
        kept: list[Learning] = []
        for learning in learnings:
            if durable(learning) and specific(learning.rule):
                kept.append(Learning(learning.trigger, learning.rule, learning.rationale, learning.type,
                                     learning.source, min(learning.confidence, CAPTURE_CONFIDENCE_MAX)))
        return kept
