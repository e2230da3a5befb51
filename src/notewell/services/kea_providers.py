"""KEA's language model calls, through each provider's official SDK (the ``llm`` extra: ``openai``, ``anthropic``).

An SDK is imported here only, when the language-model extractor first calls its provider; without it the call
is a clear error saying which package to install. Both SDKs are asked for structured output: OpenAI chat
completions with the answer's JSON schema (strict) on OpenAI itself, a JSON object on DashScope and local
servers (whose OpenAI-compatible APIs take ``json_object``); Anthropic messages with one tool whose input is the
schema, the tool forced. The SDKs' own retries are off: a failed call fails the job, which the job queue
retries with its backoff. A call waits KEA_TIMEOUT_SECONDS at most; one the provider did not answer at all
(``unanswered``) opens KEA's breaker (kea_breaker).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote, urlsplit

from notewell.config import KEA_TIMEOUT_SECONDS_DEFAULT, KeaSettings
from notewell.errors import ConfigError
from notewell.services.kea_routing import OPENAI, Route

OUTPUT_TOKENS = 2000  # the answer's bound, as each API takes it
TIMEOUT_SECONDS = KEA_TIMEOUT_SECONDS_DEFAULT  # a call's default bound; KEA_TIMEOUT_SECONDS sets the one used
NAME = "learnings"  # the answer's name: the JSON schema's on OpenAI, the tool's (record_<name>) on Anthropic


ERROR_CHARS = 500  # what is kept of a provider's error text
SECRET_MIN_CHARS = 8  # a shorter value is never a key, and redacting it would cut words and numbers ("404")
# a credential after the scheme's word: 8 characters or more of base64, base64url or a token's alphabet, so a
# word ("on the Basic tier") is left as it is
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}")
# a credential a proxy may echo under a key header's name ("x-api-key: sk-…", "x-goog-api-key": "AIza…"): the value
_KEY_HEADER = re.compile(r"(?i)\b((?:x-)?(?:goog-)?api[-_]?key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._~+/=-]{8,}")
REDACTED = "[redacted]"


class ProviderError(RuntimeError):
    """A provider call failed; its text redacted (``redact``)."""


def held_secrets(kea: KeaSettings) -> list[str]:
    """What of KEA's settings is secret: each key, and each base URL's password and query values (a gateway's
    URL may carry its credential, and an error that echoes the request's URL carries it too)."""
    found = list(kea.keys.values())
    for url in kea.urls.values():
        parts = urlsplit(url)
        found += [parts.password or "", *(value for _, value in parse_qsl(parts.query, keep_blank_values=True))]
    return found


def _written_forms(secret: str) -> set[str]:
    """``secret`` as an error text may carry it: as it is, URL-encoded (a request's URL echoed) and JSON-escaped
    (a JSON body echoed; some encoders escape "/" too)."""
    escaped = json.dumps(secret)[1:-1]
    return {secret, quote(secret, safe=""), escaped, escaped.replace("/", "\\/")}


def redact(text: str, secrets: Iterable[str]) -> str:
    """A provider's error text fit to log, store and show: each secret Notewell holds (``held_secrets``) in each
    form it may be written in, any bearer, basic or token credential (a proxy may echo the Authorization header)
    and any value of an API key header (x-api-key, x-goog-api-key, api-key), written ``[redacted]``; at most
    ERROR_CHARS. A secret shorter than SECRET_MIN_CHARS is not looked for."""
    forms = {form for secret in secrets if len(secret) >= SECRET_MIN_CHARS for form in _written_forms(secret)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, REDACTED)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _KEY_HEADER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS - 1] + "…"


def unanswered(exc: BaseException) -> bool:
    """Whether a call failed for want of any answer (no connection, or none within its timeout: each SDK's
    APIConnectionError, its APITimeoutError included), not on an answer refusing it (a status, a bad key)."""
    for name in ("openai", "anthropic"):
        sdk = sys.modules.get(name)  # an SDK never imported raised nothing
        if sdk is not None and isinstance(exc, getattr(sdk, "APIConnectionError", ())):
            return True
    return isinstance(exc, TimeoutError | ConnectionError)


class SdkMissing(ConfigError):
    """The provider's SDK is not installed."""


@dataclass(frozen=True)
class Reply:
    text: str  # the answer, a JSON document when the model kept to the schema
    tokens: int  # prompt and answer tokens, as the provider counted them (estimated when it did not)


class Ask(Protocol):
    """One call: the system instruction, the user message, the answer's schema and name, the call's timeout;
    the reply."""

    def __call__(self, system: str, user: str, schema: dict[str, Any], *, name: str = NAME,
                 timeout: float = TIMEOUT_SECONDS) -> Reply: ...


def _sdk(module: str, route: Route) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SdkMissing(f"KEA_MODEL={route.model} calls {route.provider.name} through the {module} package, "
                         "which is not installed: pip install 'notewell[llm]' (or unset KEA_MODEL for the "
                         "deterministic extractor)") from exc


def _estimate(*texts: str) -> int:
    return sum(len(t) for t in texts) // 4 + 1


def connect(route: Route) -> Ask:
    """A caller of the route's provider: its key checked (the seed's error) and its SDK imported, now."""
    key = route.key()
    if route.provider.wire == "anthropic":
        return _within_timeout(_anthropic(route, _sdk("anthropic", route).Anthropic(
            api_key=key, base_url=route.base_url, max_retries=0, timeout=TIMEOUT_SECONDS)))
    return _within_timeout(_openai(route, _sdk("openai", route).OpenAI(
        api_key=key, base_url=route.base_url, max_retries=0, timeout=TIMEOUT_SECONDS)))


class CallTimedOut(TimeoutError):
    """No whole answer within the call's timeout (``unanswered``: it opens the breaker)."""


def _within_timeout(ask: Ask) -> Ask:
    """``ask`` bounded as a whole by its ``timeout``. The SDKs pass the timeout to httpx, which bounds each read,
    not the call: a provider (or a proxy) that sends its answer a byte at a time held the job runner as long as it
    went on. The call runs on a thread of its own, and the caller stops waiting at the timeout; the thread ends
    when the SDK gives up (each read still bounded) and the breaker, open meanwhile, makes no other call."""

    def bounded(system: str, user: str, schema: dict[str, Any], *, name: str = NAME,
                timeout: float = TIMEOUT_SECONDS) -> Reply:
        outcome: list[Reply | BaseException] = []
        done = threading.Event()

        def call() -> None:
            try:
                outcome.append(ask(system, user, schema, name=name, timeout=timeout))
            except BaseException as exc:  # handed to the caller, raised there
                outcome.append(exc)
            finally:
                done.set()

        threading.Thread(target=call, name="kea-provider-call", daemon=True).start()
        if not done.wait(timeout):
            raise CallTimedOut(f"no whole answer within {timeout:g} s (KEA_TIMEOUT_SECONDS)")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    return bounded


def _openai(route: Route, client: Any) -> Ask:
    def ask(system: str, user: str, schema: dict[str, Any], *, name: str = NAME,
            timeout: float = TIMEOUT_SECONDS) -> Reply:
        response_format = ({"type": "json_schema", "json_schema": {"name": name, "schema": schema,
                                                                   "strict": True}}
                           if route.provider is OPENAI else {"type": "json_object"})
        answer = client.chat.completions.create(
            model=route.model, messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            response_format=response_format, max_tokens=OUTPUT_TOKENS, temperature=0, timeout=timeout)
        text = str(answer.choices[0].message.content or "") if answer.choices else ""
        usage = answer.usage
        return Reply(text, int(usage.total_tokens) if usage is not None else _estimate(system, user, text))

    return ask


def _anthropic(route: Route, client: Any) -> Ask:
    def ask(system: str, user: str, schema: dict[str, Any], *, name: str = NAME,
            timeout: float = TIMEOUT_SECONDS) -> Reply:
        tool = f"record_{name}"
        answer = client.messages.create(
            model=route.model, max_tokens=OUTPUT_TOKENS, system=system,
            messages=[{"role": "user", "content": user}],
            tools=[{"name": tool, "description": f"Record the {name} the instruction asks for.",
                    "input_schema": schema}],
            tool_choice={"type": "tool", "name": tool}, timeout=timeout)
        used = next((b for b in answer.content if b.type == "tool_use" and b.name == tool), None)
        text = (json.dumps(used.input) if used is not None
                else "".join(b.text for b in answer.content if b.type == "text"))
        usage = answer.usage
        tokens = int(usage.input_tokens) + int(usage.output_tokens) if usage is not None else _estimate(system, text)
        return Reply(text, tokens)

    return ask
