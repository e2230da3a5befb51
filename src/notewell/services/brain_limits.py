"""The brain's limits and vocabularies, named once: the services check them, the doors quote them.

``check_text`` and ``check_tags`` are the checks every brain write runs on its free text and tags.
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.errors import not_unicode
from notewell.services.brain_errors import BrainValidation
from notewell.services.hybrid import SIMILARITY_FLOOR
from notewell.services.memory_checks import MAX_TAG_CHARS

RELEVANT_LIMIT = 5
# brain_start_session's relevantKnowledge injection: at most this many bytes of JSON (besides its 1,200 tokens, which
# in 4-byte letters or escaped characters pass 14 KB), so that with its five ids the field stays far below an
# answer's 32 KB and is never cut: an answer too long is cut in its openActionItems
RELEVANT_INJECTION_BYTES = 6000
# brain_start_session's relevantKnowledge: an item whose similarity to the prompt is known is injected only from this
# similarity, where the calibrated meaning part of its relevance starts to count (hybrid.SIMILARITY_FLOOR,
# docs/memory.md: "Fusion"). Below it a rule is found by a word it shares with the prompt and little else ("clock"
# in a poem about a clock tower, 0.08; "Thursday" in a dinner booking, 0.27), and the words part alone, relative to
# the query's best words match, ranked it high among nothing better
RELEVANT_SIMILARITY_MIN = SIMILARITY_FLOOR
RETRIEVE_LIMIT_DEFAULT = 10
RETRIEVE_LIMIT_MAX = 50
INJECTION_TOKENS_DEFAULT = 1200
INJECTION_TOKENS_MIN = 100
INJECTION_TOKENS_MAX = 8000
ACTION_ITEMS_MAX = 10
LEARNINGS_MAX = 5
RESOLVED_IDS_MAX = 50
USED_IDS_MAX = 100
EVENTS_PER_SESSION_MAX = 1000
EVENTS_PAGE_MAX = 100  # events per page (REST, the web page, the CLI's export pages through them all)
PAYLOAD_MAX_BYTES = 16_384
MAX_PROMPT_CHARS = 8000
MAX_RULE_CHARS = 2000
MAX_TRIGGER_CHARS = 500
MAX_SUMMARY_CHARS = 4000
MAX_SOURCE_CHARS = 40
MAX_REASON_CHARS = 500
MAX_TAGS = 20
IDENTIFIER_MAX_CHARS = 64  # an event type, a client type
# An event logged without a type (the seed's install-ping logs its payload alone): a neutral word, naming none of
# the kinds KEA reads an event as (an error, a fix, a correction) nor the close's learning_captured.
EVENT_TYPE_DEFAULT = "event"
SEARCH_LIMIT_DEFAULT = 10
SEARCH_LIMIT_MAX = 50
SEARCH_DAYS_MAX = 3650
SESSION_HALF_LIFE_DAYS = 7.0
SKILL_LIMIT_DEFAULT = 5
SKILL_LIMIT_MAX = 20
PROJECTS_LIMIT_MAX = 1000  # brain_list_projects' page, when it is asked for one
RECENT_SESSIONS = 10  # the recent-sessions resource
STYLE_SESSIONS = 50  # the recent sessions the peer card reads
STYLE_HARD_RULES = 10
STYLE_REFLEXES = 20
FEEDBACK = ("up", "down")
LEARNING_KINDS = ("reflex", "recipe", "heuristic", "principle", "anti_principle")
LEARNING_SOURCES = ("user_correction", "decision", "discovery")
CLOSE_CAPTURE_TAG = "close_capture"
MINED_TAG = "mined"  # knowledge KEA mined from a session closed without learnings
CROSS_TAG = "cross"  # knowledge the daily cross-session run learned from several of a person's sessions
SESSION_TAG_PREFIX = "session:"  # with the session's id: the session a rule was learned from
RESERVED_TAGS = frozenset({MINED_TAG, CROSS_TAG})  # what the brain learned by itself (private): never given


def check_text(field_name: str, value: object, maximum: int, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise BrainValidation(field_name, "must be a string")
    cleaned = value.strip()
    if required and not cleaned:
        raise BrainValidation(field_name, "must not be empty")
    if len(cleaned) > maximum:
        raise BrainValidation(field_name, f"is {len(cleaned)} characters; keep it to {maximum}")
    if "\x00" in cleaned:
        raise BrainValidation(field_name, "contains a NUL character (\\x00); remove it")
    if (why := not_unicode(cleaned)) is not None:
        raise BrainValidation(field_name, why)
    return cleaned


def check_tags(tags: Sequence[str] | None) -> list[str]:
    cleaned = list(dict.fromkeys(t.strip() for t in (tags or []) if t.strip()))
    if len(cleaned) > MAX_TAGS:
        raise BrainValidation("tags", f"has {len(cleaned)} tags; use at most {MAX_TAGS}")
    for tag in cleaned:
        if (why := not_unicode(tag)) is not None:
            raise BrainValidation("tags", why)
        if len(tag) > MAX_TAG_CHARS or "\x00" in tag:
            raise BrainValidation("tags", f"{tag[:20]!r}… must be at most {MAX_TAG_CHARS} characters without NUL")
        if tag.casefold() in RESERVED_TAGS or tag.casefold().startswith(SESSION_TAG_PREFIX):
            raise BrainValidation("tags", f"{tag!r} is a tag the brain writes itself (what it learned by itself, "
                                          "and from which session); choose another")
    return cleaned
