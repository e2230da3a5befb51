"""Which language model provider KEA's model goes to, as the seed's table: by KEA_MODEL's prefix.

| KEA_MODEL            | provider                                        | key                 |
| -------------------- | ----------------------------------------------- | ------------------- |
| ``qwen*``, ``glm*``  | DashScope (Alibaba), its OpenAI-compatible API | ``DASHSCOPE_API_KEY`` |
| ``claude*``          | Anthropic                                       | ``ANTHROPIC_API_KEY`` |
| anything else        | OpenAI                                          | ``OPENAI_API_KEY``    |

``KEA_BASE_URL`` set: an OpenAI-compatible server there (llama.cpp, Ollama, vLLM) whatever the model's name
(Ollama's ``qwen2.5-coder:7b`` stays local), with ``KEA_API_KEY`` if the server wants one. Each provider's
endpoint can be moved with its SDK's usual variable (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``) or
``DASHSCOPE_BASE_URL`` (DashScope's mainland China endpoint, say). As the seed's: a provider's key is checked
before any call, and a missing one is an error naming the right variable and the two other providers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from notewell.config import KeaSettings
from notewell.errors import ConfigError

Wire = Literal["openai", "anthropic"]
DASHSCOPE_URL = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
LOCAL_KEY = "no-key"  # what the OpenAI SDK sends a local server that asks for none (it needs some key)


@dataclass(frozen=True)
class Provider:
    name: str  # as doctor and the log lines say it
    wire: Wire  # the SDK and wire format: OpenAI chat completions, or Anthropic messages
    key_variable: str
    url_variable: str
    default_url: str | None  # None: the SDK's own


DASHSCOPE = Provider("DashScope", "openai", "DASHSCOPE_API_KEY", "DASHSCOPE_BASE_URL", DASHSCOPE_URL)
ANTHROPIC = Provider("Anthropic", "anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", None)
OPENAI = Provider("OpenAI", "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", None)
LOCAL = Provider("local OpenAI-compatible server", "openai", "KEA_API_KEY", "KEA_BASE_URL", None)
_ALTERNATIVES = {DASHSCOPE.name: "a claude* model with ANTHROPIC_API_KEY (Anthropic) or a gpt-* model with "
                                 "OPENAI_API_KEY (OpenAI)",
                 ANTHROPIC.name: "a qwen*/glm* model with DASHSCOPE_API_KEY (DashScope) or a gpt-* model with "
                                 "OPENAI_API_KEY (OpenAI)",
                 OPENAI.name: "a qwen*/glm* model with DASHSCOPE_API_KEY (DashScope) or a claude* model with "
                              "ANTHROPIC_API_KEY (Anthropic)"}


class KeaKeyMissing(ConfigError):
    """KEA_MODEL names a provider whose key is not set."""


@dataclass(frozen=True)
class Route:
    model: str
    provider: Provider
    base_url: str | None  # None: the SDK's default endpoint
    api_key: str | None = field(default=None, repr=False)

    @property
    def key_present(self) -> bool:
        return self.api_key is not None

    def key(self) -> str:
        """The key to send, checked as the seed's entry points check it (a local server may need none)."""
        if self.api_key is not None:
            return self.api_key
        if self.provider is LOCAL:
            return LOCAL_KEY
        raise KeaKeyMissing(missing_key_message(self.model, self.provider))


def provider_for(model: str, local: bool = False) -> Provider:
    """The seed's table: qwen*/glm* DashScope, claude* Anthropic, anything else OpenAI (KEA_BASE_URL: local)."""
    if local:
        return LOCAL
    lowered = model.lower()
    if lowered.startswith(("qwen", "glm")):
        return DASHSCOPE
    if lowered.startswith("claude"):
        return ANTHROPIC
    return OPENAI


def missing_key_message(model: str, provider: Provider) -> str:
    return (f"KEA_MODEL={model} routes to {provider.name}, which needs {provider.key_variable}: set "
            f"{provider.key_variable}, or switch KEA_MODEL to {_ALTERNATIVES[provider.name]}; unset KEA_MODEL for "
            "the deterministic extractor")


def route(kea: KeaSettings) -> Route | None:
    """Where KEA's model goes; None when KEA_MODEL is unset (the deterministic extractor)."""
    if kea.model is None:
        return None
    provider = provider_for(kea.model, local="KEA_BASE_URL" in kea.urls)
    return Route(kea.model, provider, kea.urls.get(provider.url_variable, provider.default_url),
                 kea.keys.get(provider.key_variable))
