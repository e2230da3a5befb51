"""KEA's language-model extractor: the ``Extractor`` of kea_extractor, its rules written by a model.

Chosen when KEA_MODEL is set (``choose_extractor``; the provider by the model's prefix, kea_routing). In *mine*
mode it asks the model for the session's durable rules (kea_prompt: the session as bounded data, the answer
as close-capture's learnings). Before each call it reserves one call of the day's budget (KEA_DAILY_CALLS and
KEA_DAILY_TOKENS, kept in the store: a restart does not reset it; the day is the clock's, in UTC); with the
budget spent it mines with the deterministic extractor instead and says so (``op=kea.budget
outcome=exhausted``). A call that fails (the provider unreachable, an answer that is not the schema's JSON, a
missing key or SDK) raises: the job's outcome is an error, logged (``op=kea.llm outcome=error``), and the job
queue retries it with its backoff. *Refine* mode (a close that carried learnings) keeps the deterministic
judge: it runs inside the close, which never waits on a model.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import UTC, date

from notewell.config import KeaSettings
from notewell.log_lines import line
from notewell.services.brain_learnings import Learning
from notewell.services.jobs import Clock, utc_now
from notewell.services.kea_extractor import Extractor, RuleMiner, SessionMaterial
from notewell.services.kea_prompt import SCHEMA, SYSTEM, read_answer, session_document
from notewell.services.kea_providers import Ask, connect
from notewell.services.kea_routing import Route, route
from notewell.store.base import KeaBudgetRepository

_log = logging.getLogger("notewell.kea")

class LlmExtractor:
    """Mines sessions with a language model, within the day's budget (module docstring)."""

    def __init__(self, to: Route, kea: KeaSettings, budget: KeaBudgetRepository, clock: Clock = utc_now,
                 fallback: Extractor | None = None) -> None:
        self.route = to
        self.name = to.model
        self.kea = kea
        self.budget = budget
        self.clock = clock
        self.fallback: Extractor = fallback or RuleMiner()
        self._ask: Ask | None = None
        self._lock = threading.Lock()

    def day(self) -> date:
        return self.clock().astimezone(UTC).date()

    def _caller(self) -> Ask:
        with self._lock:
            if self._ask is None:
                self._ask = connect(self.route)
            return self._ask

    def mine(self, material: SessionMaterial) -> list[Learning]:
        session = material.session.id[:12]
        fields = {"provider": self.route.provider.name, "model": self.name, "session": session}
        try:
            ask = self._caller()  # the key and the SDK, checked before any budget is spent
        except Exception as exc:
            _log.warning(line("kea.llm", outcome="error", **fields, error=type(exc).__name__, reason=str(exc)))
            raise
        day = self.day()
        if not self.budget.reserve(day, self.kea.daily_calls, self.kea.daily_tokens):
            calls, tokens = self.budget.used(day)
            _log.info(line("kea.budget", outcome="exhausted", day=day.isoformat(), calls=calls,
                           callsBudget=self.kea.daily_calls, tokens=tokens, tokensBudget=self.kea.daily_tokens,
                           fallback=self.fallback.name, session=session))
            return self.fallback.mine(material)
        try:
            reply = ask(SYSTEM, session_document(material), SCHEMA)
        except Exception as exc:
            _log.warning(line("kea.llm", outcome="error", **fields, error=type(exc).__name__, reason=str(exc)[:300]))
            raise
        self.budget.spend(day, reply.tokens)
        try:
            found = read_answer(reply.text)
        except ValueError as exc:
            _log.warning(line("kea.llm", outcome="error", **fields, tokens=reply.tokens, error="InvalidOutput",
                              reason=str(exc)[:300]))
            raise
        _log.info(line("kea.llm", outcome="ok", **fields, tokens=reply.tokens, findings=len(found.learnings),
                       invalid=found.invalid, beyond=found.beyond))
        return found.learnings

    def refine(self, learnings: Sequence[Learning], material: SessionMaterial) -> list[Learning]:
        return self.fallback.refine(learnings, material)


def choose_extractor(kea: KeaSettings, budget: KeaBudgetRepository, clock: Clock = utc_now) -> Extractor:
    """KEA_MODEL unset: the deterministic extractor; set: the language model its prefix routes to."""
    to = route(kea)
    return RuleMiner() if to is None else LlmExtractor(to, kea, budget, clock)
