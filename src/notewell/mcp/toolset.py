"""What a toolset is: named tools, each with its schemas, scope, docs and a plain function to call.

A tool's ``call`` runs in a worker thread (the store is blocking) and gets a CallContext and the
arguments; it returns the JSON object that becomes both structuredContent and the text block (cut to
notewell.answer_bound.ANSWER_BYTES_MAX on the way out, saying so). Every
argument nested deeper than notewell.json_bounds.JSON_DEPTH_MAX is refused before the tool runs. It
raises InvalidArgument for bad arguments (an invalid-arguments error naming the argument) and any
other NotewellError for a refusal ("Error in <tool>: <message>").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from mcp_types import ToolAnnotations

from notewell.access.policy import ACTIONS, Action
from notewell.access.principal import Principal
from notewell.answer_bound import Way, with_cut_fields
from notewell.errors import InvalidArgument
from notewell.json_bounds import check_json_depth

if TYPE_CHECKING:
    from notewell.runtime import Runtime

JsonObject = dict[str, Any]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


@dataclass(frozen=True)
class CallContext:
    principal: Principal
    tools: Sequence[ToolSpec]  # the tools this connection has, in list order (getDocs names them)
    served: Sequence[ToolSpec] = ()  # every tool the server serves, whoever calls (getDocs' permissions)
    scope_refused: frozenset[str] = frozenset()  # the served tools a call without their scope is refused naming it
    resources: Sequence[ResourceSpec] = ()  # every resource the server serves, whoever reads (getDocs' permissions)
    templates: Sequence[ResourceTemplateSpec] = ()  # every resource template it serves, likewise


class Arguments:
    """Typed access to a tools/call's arguments; every failure names the argument."""

    def __init__(self, raw: Mapping[str, Any], known: Sequence[str]) -> None:
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise InvalidArgument(unknown[0], f"is not an argument of this tool; use {', '.join(known) or 'none'}")
        for name, value in raw.items():
            check_json_depth(name, value)
        self.raw = raw

    def string(self, name: str, *, required: bool = False, default: str | None = None) -> str | None:
        value = self.raw.get(name)
        if value is None:
            if required:
                raise InvalidArgument(name, "is required")
            return default
        if not isinstance(value, str):
            raise InvalidArgument(name, "must be a string")
        if "\x00" in value:  # no name, path or text of the vault or the store holds NUL (PostgreSQL cannot)
            raise InvalidArgument(name, "must not contain the NUL character (\\x00); remove it")
        return value

    def required_string(self, name: str) -> str:
        value = self.string(name, required=True)
        assert value is not None
        return value

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InvalidArgument(name, "must be true or false")
        return value

    def integer(self, name: str, default: int, minimum: int, maximum: int | None) -> int:
        """A whole number from ``minimum`` to ``maximum`` (None: no upper bound)."""
        value = self.raw.get(name)
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidArgument(name, "must be a whole number")
        if maximum is None and value < minimum:
            raise InvalidArgument(name, f"must be {minimum} or more")
        if maximum is not None and not minimum <= value <= maximum:
            raise InvalidArgument(name, f"must be between {minimum} and {maximum}")
        return value


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str  # what the model reads
    action: Action  # the policy's action a caller needs to see and call the tool (as Datasette names them)
    input_schema: JsonObject
    call: Callable[[CallContext, Arguments], JsonObject]
    output_schema: JsonObject | None = None
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY)
    meta: JsonObject | None = None
    input_schema_for: Callable[[Principal], JsonObject] | None = None  # when the schema differs per token
    # The whole refusal when what the call names is hidden or missing (NotFound): one sentence for both, saying
    # what is wrong and which tool to call next, as the seeds word it. None: the service's own "Not found: <id>".
    not_found: str | None = None
    refusals: tuple[str, ...] = ()  # for the generated docs: each refusal and what to do
    example: JsonObject | None = None  # arguments of the documented example, run on the example vault

    # The output schema is a product's to the letter: it is not given answer_bound's truncated and note.
    seed_output: bool = False
    # How to get what an answer cut to answer_bound's size left out, with this tool's own arguments or another
    # tool (None: answer_bound's general advice, for tools that take a limit, max_tokens, a path or a query)
    cut_advice: str | None = None
    # A top-level field's own way on, given the answer, where the advice does not reach its rest: a text shortened
    # (getBrain's contents: readDoc with the brain.md's path). tests/test_answer_bound.py checks every tool's.
    cut_ways: Mapping[str, Way] = field(default_factory=dict)
    # What the model reads instead of ``description`` on a server that finds nothing by meaning (semantic = false,
    # --no-semantic, or a model that did not load): a tool described as finding by meaning must not claim it there.
    # None: the description holds either way.
    words_only_description: str | None = None

    def __post_init__(self) -> None:
        # Any answer may come cut to notewell.answer_bound's size, saying so: the schema a client checks allows it.
        if not self.seed_output:
            object.__setattr__(self, "output_schema", with_cut_fields(self.output_schema))

    @property
    def argument_names(self) -> list[str]:
        return list(self.input_schema.get("properties", {}))

    def schema_for(self, principal: Principal) -> JsonObject:
        return self.input_schema_for(principal) if self.input_schema_for else self.input_schema

    @property
    def scope(self) -> str:
        """The token scope the action needs (what the docs and getDocs name)."""
        return ACTIONS[self.action].scope or ""


@dataclass(frozen=True)
class ResourceSpec:
    """A read-only resource (resources/list, resources/read): JSON computed for the caller."""

    uri: str
    name: str
    title: str
    description: str
    action: Action  # listed and readable only by a caller the policy allows this action
    read: Callable[[CallContext], JsonObject]
    mime_type: str = "application/json"

    @property
    def scope(self) -> str:
        return ACTIONS[self.action].scope or ""


@dataclass(frozen=True)
class ResourceTemplateSpec:
    """A read-only resource per thing named in its URI (resources/templates/list, resources/read): ``uri_template``
    holds one ``{name}`` between a fixed start and end, and ``read`` gets what stands there (percent-decoded)."""

    uri_template: str
    name: str
    title: str
    description: str
    action: Action
    read: Callable[[CallContext, str], JsonObject]
    mime_type: str = "application/json"

    @property
    def scope(self) -> str:
        return ACTIONS[self.action].scope or ""

    def match(self, uri: str) -> str | None:
        """What the URI names in the template's place, or None when it is not one of this template's."""
        start, _, rest = self.uri_template.partition("{")
        end = rest.partition("}")[2]
        if len(uri) <= len(start) + len(end) or not uri.startswith(start) or not uri.endswith(end):
            return None
        return unquote(uri[len(start) : len(uri) - len(end)])


@dataclass(frozen=True)
class Toolset:
    """A named group of tools, chosen with ``notewell serve --toolsets``."""

    name: str
    summary: str
    build: Callable[[Runtime], Sequence[ToolSpec]] = field(repr=False)  # the tools, over the runtime's services
    instructions: str = ""  # what the initialize instructions say about this toolset (a paragraph), when served
    alone_instructions: bool = False  # served alone, the instructions are this toolset's paragraph and nothing else
    # A call to one of its tools by a token without the tool's scope: False answers -32602 "Tool X not found", as
    # for a tool not served (Sasha's words); True a refusal naming the scope, over HTTP a 403 (XMemo's 401/403)
    scope_refused: bool = False
    resources: Callable[[Runtime], Sequence[ResourceSpec]] | None = field(default=None, repr=False)
    resource_templates: Callable[[Runtime], Sequence[ResourceTemplateSpec]] | None = field(default=None, repr=False)
