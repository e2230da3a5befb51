"""KEA's language-model extractor: the ``Extractor`` of kea_extractor, its rules written and judged by a model.

Chosen when KEA_MODEL is set (``choose_extractor``; the provider by the model's prefix, kea_routing). Before each
call it reserves one call of the day's budget (KEA_DAILY_CALLS and KEA_DAILY_TOKENS, kept in the store: a
restart does not reset it; the day is the clock's, in UTC); with the budget spent it does the deterministic
extractor's work instead and says so (``op=kea.budget outcome=exhausted``).

In *mine* mode it asks the model for the session's durable rules (kea_prompt). A call that fails there (the
provider unreachable, an answer that is not the schema's JSON, a missing key or SDK) raises: the job's outcome
is an error, logged (``op=kea.llm outcome=error``), and the job queue retries it with its backoff; a call the
provider left unanswered (KEA_TIMEOUT_SECONDS at most) opens the breaker (kea_breaker), and while it is open no
call is made: the job is deferred to its end, its try not counted (``op=kea.llm outcome=held``). A provider's
error text is redacted before it is logged or stored as the job's last error (kea_providers.redact: every key
Notewell holds, any bearer, basic or token credential, any API key header's value; at most ERROR_CHARS): a
provider or a proxy may echo the key.

In *refine* mode (a close that carried learnings; the close itself runs it, and waits for it) it asks the model,
in one call, to judge each learning (kea_refine). The close never fails on the model: a failed call (at most
REFINE_TIMEOUT_SECONDS, or KEA_TIMEOUT_SECONDS if shorter), the breaker open (no call), a missing key or SDK, an
answer that is not the schema's JSON, or the budget spent, and the deterministic judge judges every learning
(logged, ``fallback=deterministic``); a partial answer, and it judges those no valid verdict covers (``op=kea.llm
outcome=partial``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import UTC, date
from typing import Any

from notewell.config import KeaSettings
from notewell.log_lines import line
from notewell.services.brain_learnings import Learning
from notewell.services.jobs import Clock, Deferred, utc_now
from notewell.services.kea_breaker import Breaker
from notewell.services.kea_extractor import Extractor, RuleMiner, SessionMaterial
from notewell.services.kea_prompt import SCHEMA, SYSTEM, read_answer, session_document
from notewell.services.kea_providers import (
    NAME,
    Ask,
    ProviderError,
    Reply,
    connect,
    held_secrets,
    redact,
    unanswered,
)
from notewell.services.kea_refine import REFINE_SCHEMA, REFINE_SYSTEM, judge, read_verdicts, refine_document
from notewell.services.kea_routing import Route, route
from notewell.store.base import KeaBudgetRepository
from notewell.timestamps import iso

_log = logging.getLogger("notewell.kea")
REFINE_TIMEOUT_SECONDS = 30.0  # how long a close waits for the model's verdicts before judging alone (at most)
DETERMINISTIC = "deterministic"

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
        self.breaker = Breaker(kea.breaker_seconds, clock)
        self._ask: Ask | None = None
        self._lock = threading.Lock()

    def day(self) -> date:
        return self.clock().astimezone(UTC).date()

    def _caller(self) -> Ask:
        with self._lock:
            if self._ask is None:
                self._ask = connect(self.route)
            return self._ask

    def _fields(self, session: str, mode: str) -> dict[str, object]:
        """The fields every ``op=kea.llm`` line of one call carries."""
        return {"provider": self.route.provider.name, "model": self.name, "session": session, "mode": mode}

    def _call(self, mode: str, session: str, system: str, user: str, schema: dict[str, Any], *,
              name: str = NAME, timeout: float | None = None, fallback: bool = False) -> Reply | None:
        """One call within the day's budget, waiting ``timeout`` at most (KEA_TIMEOUT_SECONDS, or less): the reply,
        or None when the budget is spent (logged). Deferred, and no call, while the breaker holds calls. What the
        call raises is logged (``op=kea.llm outcome=error``; with ``fallback=deterministic`` when the caller
        falls back) and raised; a call left unanswered opens the breaker (``op=kea.breaker state=open``)."""
        fields = self._fields(session, mode)
        more = {"fallback": DETERMINISTIC} if fallback else {}
        try:
            ask = self._caller()  # the key and the SDK, checked before any budget is spent
        except Exception as exc:
            _log.warning(line("kea.llm", outcome="error", **fields, error=type(exc).__name__,
                              reason=redact(str(exc), held_secrets(self.kea)), **more))
            raise
        held = self.breaker.held_until()
        if held is not None:
            _log.info(line("kea.llm", outcome="held", **fields, until=iso(held), **more))
            raise Deferred(held, f"KEA's provider ({self.route.provider.name}, model {self.name}) left a call "
                                 f"unanswered: its calls are held until {iso(held)} (KEA_BREAKER_SECONDS)")
        day = self.day()
        if not self.budget.reserve(day, self.kea.daily_calls, self.kea.daily_tokens):
            calls, tokens = self.budget.used(day)
            _log.info(line("kea.budget", outcome="exhausted", day=day.isoformat(), calls=calls,
                           callsBudget=self.kea.daily_calls, tokens=tokens, tokensBudget=self.kea.daily_tokens,
                           fallback=self.fallback.name, session=session, mode=mode))
            return None
        try:
            reply = ask(system, user, schema, name=name, timeout=self.kea.timeout_seconds if timeout is None
                        else min(timeout, self.kea.timeout_seconds))
        except Exception as exc:
            reason = redact(str(exc), held_secrets(self.kea))
            if unanswered(exc):
                _log.warning(line("kea.breaker", state="open", provider=self.route.provider.name, model=self.name,
                                  until=iso(self.breaker.unanswered()), error=type(exc).__name__))
            else:
                self._answered()
            _log.warning(line("kea.llm", outcome="error", **fields, error=type(exc).__name__, reason=reason,
                              **more))
            # the job's last_error (stored, backed up, shown by `notewell jobs`) is this text: redacted, and
            # the SDK's exception, whose text may hold a key, is not chained
            raise ProviderError(f"{type(exc).__name__}: {reason}") from None
        self._answered()
        self.budget.spend(day, reply.tokens)
        return reply

    def _answered(self) -> None:
        if self.breaker.answered():
            _log.info(line("kea.breaker", state="closed", provider=self.route.provider.name, model=self.name))

    def mine(self, material: SessionMaterial) -> list[Learning]:
        session = material.session.id[:12]
        reply = self._call("mine", session, SYSTEM, session_document(material), SCHEMA)
        if reply is None:
            return self.fallback.mine(material)
        fields = self._fields(session, "mine")
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
        """The learnings the model keeps (reworded, confidence at most 0.95); the deterministic judge's for
        what it does not judge (module docstring)."""
        session = material.session.id[:12]
        try:
            reply = self._call("refine", session, REFINE_SYSTEM, refine_document(learnings, material),
                               REFINE_SCHEMA, name="verdicts", timeout=REFINE_TIMEOUT_SECONDS, fallback=True)
        except Exception:  # logged by _call: the close never fails on the model
            return self.fallback.refine(learnings, material)
        if reply is None:
            return self.fallback.refine(learnings, material)
        fields = {**self._fields(session, "refine"), "tokens": reply.tokens}
        try:
            verdicts = read_verdicts(reply.text, learnings)
        except ValueError as exc:
            _log.warning(line("kea.llm", outcome="error", **fields, error="InvalidOutput", reason=str(exc)[:300],
                              fallback=DETERMINISTIC))
            return self.fallback.refine(learnings, material)
        done = judge(learnings, verdicts, material, self.fallback)
        counts = {"submitted": len(learnings), "judged": done.by_model, "kept": done.model_kept,
                  "reworded": done.reworded, "invalid": verdicts.invalid}
        if done.by_fallback:
            _log.warning(line("kea.llm", outcome="partial", **fields, **counts, unjudged=done.by_fallback,
                              fallback=DETERMINISTIC))
        else:
            _log.info(line("kea.llm", outcome="ok", **fields, **counts))
        return done.kept


def choose_extractor(kea: KeaSettings, budget: KeaBudgetRepository, clock: Clock = utc_now) -> Extractor:
    """KEA_MODEL unset: the deterministic extractor; set: the language model its prefix routes to."""
    to = route(kea)
    return RuleMiner() if to is None else LlmExtractor(to, kea, budget, clock)
