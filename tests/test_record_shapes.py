"""A record shown by both doors has one shape: the MCP door's output schema of it (tools/list) and the REST
door's model of it (the OpenAPI document) agree field for field in names and types, and the converter
(notewell.mcp.schema.record) turns a model into the MCP dialect exactly.

Where a product's page fixes another name, leaves a field out or adds one, the table below says so; any
other difference fails."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from pydantic.alias_generators import to_camel

from notewell.access.principal import LOCAL_OWNER
from notewell.api.docs import openapi_text
from notewell.cli.docs_cmd import example_server
from notewell.mcp import schema as s
from notewell.records.models import record_model

Json = dict[str, Any]


@dataclass(frozen=True)
class Twin:
    """A record as tools/list shows it (``tool``, ``at``: the keys down to its object schema) and its REST
    model (``component`` of the OpenAPI document). ``renamed``: MCP name -> REST name; ``omitted``: REST
    fields the MCP door leaves out; ``added``: MCP fields the REST model lacks; ``optional``: fields the
    MCP answer leaves out rather than giving null; ``seed_types``: a type a seed's page fixes otherwise
    (Major Vault's line numbers are JSON numbers). Most are derived from the model (notewell.mcp.schema);
    the rows for remember, brain_log_event and search_notes check shapes the MCP door still writes by hand."""

    tool: str
    at: tuple[str | int, ...]
    component: str
    renamed: dict[str, str] = field(default_factory=dict)
    omitted: frozenset[str] = frozenset()
    added: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    seed_types: dict[str, str] = field(default_factory=dict)


ITEM_OMITTED = frozenset({"project", "ownerUserId", "source", "ruleKey", "injectedCount", "usedCount", "successCount",
                          "failureCount", "created", "lastUsedAt", "retiredAt", "privateTo"})
ITEM = {"renamed": {"id": "ref", "type": "kind", "projectId": "brainProject"}, "omitted": ITEM_OMITTED,
        "added": frozenset({"score", "stage", "matched", "similarity"})}  # the last two: ScoredKnowledge's
BRAIN_PROJECT_INTERNALS = frozenset({"storeProject", "knowledgePath", "ownerUserId"})
BRAIN_REF = {"omitted": frozenset({"project", "summary", "parent"})}
MEMORY_OMITTED = frozenset({"tags", "updated", "author", "expiresAt", "authorToken", "supersededBy", "deletedAt",
                            "deleteReason", "private"})
P = "properties"

TWINS = [
    Twin("listProjects", (P, "projects", "items"), "ProjectInfo"),
    Twin("listDocs", (P, "documents", "items"), "DocInfo"),
    Twin("readDoc", (), "DocPart", omitted=frozenset({"shortened", "decoded"}),  # both said in the note
         added=frozenset({"hasMore", "note", "memories"}),
         optional=frozenset({"nextOffset", "nextColumn"})),
    Twin("listBrains", (P, "brains", "items"), "BrainInfo"),
    Twin("getBrain", (), "BrainPage", omitted=frozenset({"brain", "moreDocuments"}),
         added=frozenset({"id", "project", "title", "summary"})),
    Twin("getBrain", (P, "parent", "anyOf", 0), "BrainInfo", **BRAIN_REF),
    Twin("getBrain", (P, "subBrains", "items"), "BrainInfo", **BRAIN_REF),
    Twin("getBrain", (P, "documents", "items"), "BrainDocument"),
    Twin("searchBrain", (), "BrainHitList", renamed={"results": "hits"}, omitted=frozenset({"complete", "scanned"}),
         added=frozenset({"note"})),
    Twin("searchBrain", (P, "results", "items"), "BrainHit"),
    Twin("brain_list_projects", (P, "projects", "items"), "BrainProject", omitted=BRAIN_PROJECT_INTERNALS),
    Twin("brain_get_active_project", (P, "project", "anyOf", 0), "BrainProject", added=frozenset({"source"}),
         omitted=BRAIN_PROJECT_INTERNALS | {"orgId", "orgSlug", "framework", "language", "isOwn", "createdAt"}),
    Twin("brain_retrieve_knowledge", (P, "bundle", P, "items", "items"), "KnowledgeRecord", **ITEM),
    Twin("brain_find_skill", (P, "skills", "items"), "KnowledgeRecord", **ITEM),
    Twin("brain_get_user_style", (P, "reflexes", "items"), "KnowledgeRecord", **ITEM),
    Twin("brain_session_search", (P, "sessions", "items"), "SessionRecord",
         renamed={"sessionId": "id", "projectId": "brainProject"},
         omitted=frozenset({"userId", "tokenId", "framework"}),
         added=frozenset({"score", "matched", "similarity"})),  # SessionFound's
    Twin("brain_report_session_outcome", (P, "learnings"), "LearningsReport"),
    Twin("search_memory", (P, "results", "items"), "Memory", omitted=MEMORY_OMITTED,
         added=frozenset({"why", "score", "documents", "documentsGone"})),  # MemoryResult's
    Twin("recall", (P, "results", "items"), "Memory", omitted=MEMORY_OMITTED,  # MemoryResult's; matched: foundBy
         added=frozenset({"why", "score", "matched", "similarity", "documents", "documentsGone"})),
    Twin("recall_context", (), "ContextPack", renamed={"context": "text"}, added=frozenset({"tokenCount"}),
         omitted=frozenset({"wordsOnly"})),  # the MCP door says it in its note
    Twin("recall_context", (P, "items", "items"), "PackedItem", renamed={"matched": "foundBy"}),
    Twin("recall_context", (P, "left_out", "items"), "LeftOut"),
    Twin("remember", (), "Memory", added=frozenset({"deduplicated", "superseded"}),
         omitted=MEMORY_OMITTED - {"private"} | {"content"}),
    Twin("brain_log_event", (), "EventAnswer", renamed={"id": "eventId"}, optional=frozenset({"reason"})),
    Twin("search_notes", (P, "matches", "items"), "NoteMatch", seed_types={"line": "number"},
         omitted=frozenset({"version"})),  # Major Vault's matches, exactly as its seed shows them
]


@pytest.fixture(scope="module")
def output_schemas() -> dict[str, Json]:
    with example_server() as server:
        return {t.name: t.model_dump(by_alias=True)["outputSchema"] for t in server.list_for(LOCAL_OWNER)}


@pytest.fixture(scope="module")
def components() -> dict[str, Json]:
    found: dict[str, Json] = json.loads(openapi_text())["components"]["schemas"]
    return found


def _kind(schema: Json, components: dict[str, Json]) -> str:
    """A schema's type in one word per level, the same for both dialects: string, integer[], BrainInfo?…"""
    if "$ref" in schema:
        schema = components[schema["$ref"].rpartition("/")[2]]
    branches = schema.get("anyOf")
    if branches is not None:
        values = [b for b in branches if b != {"type": "null"}]
        assert len(values) == 1 and len(branches) == 2, schema
        return _kind(values[0], components) + "?"
    if schema.get("type") == "array":
        return _kind(schema["items"], components) + "[]"
    if schema.get("type") == "object":
        return "{" + ",".join(sorted(schema.get("properties", {}))) + "}"  # the fields; each is a twin of its own
    return str(schema["type"])


def _fields(schema: Json, components: dict[str, Json]) -> dict[str, str]:
    return {name: _kind(field, components) for name, field in schema["properties"].items()}


def _rest_name(twin: Twin, name: str) -> str:
    return twin.renamed.get(name, to_camel(name) if "_" in name else name)


@pytest.mark.parametrize("twin", TWINS, ids=lambda t: f"{t.tool}:{t.component}")
def test_the_mcp_schema_of_a_record_agrees_with_its_rest_model(twin: Twin, output_schemas: dict[str, Json],
                                                               components: dict[str, Json]) -> None:
    shown: Any = output_schemas[twin.tool]
    for key in twin.at:
        shown = shown[key]
    mcp = {_rest_name(twin, name): kind for name, kind in _fields(shown, components).items()}
    rest = _fields(components[twin.component], components)
    added = {_rest_name(twin, name) for name in twin.added}
    if not twin.at:  # every tool's answer may come cut, saying so (notewell.answer_bound): the door's own fields
        added |= {"truncated", "note"} - set(rest)
    assert set(mcp) - added == set(rest) - twin.omitted, "the field sets differ"
    assert not added & set(rest), "a field called added is the record's"
    for name in set(rest) - twin.omitted:
        want = rest[name].removesuffix("?") if name in twin.optional else twin.seed_types.get(name, rest[name])
        got = mcp[name]  # a nested record's fields are compared by a twin of its own: here only its place
        assert _RECORD.sub("{}", got) == _RECORD.sub("{}", want), f"{name}: MCP {got}, REST {want}"


_RECORD = re.compile(r"\{[^}]*\}")


def _nested(schema: Json, at: tuple[str | int, ...]) -> list[tuple[str | int, ...]]:
    """Where the records inside ``schema`` (at ``at``) are: an object's, an array's items', a nullable's value."""
    if "anyOf" in schema:
        return _nested(schema["anyOf"][0], (*at, "anyOf", 0))
    if schema.get("type") == "array":
        return _nested(schema["items"], (*at, "items"))
    if schema.get("type") == "object":
        return [at]
    return []


def test_a_twin_covers_every_record_inside_a_twin(output_schemas: dict[str, Json]) -> None:
    """A record nested in a record of the table is compared too: the table has a row for its place."""
    places = {(t.tool, t.at) for t in TWINS}
    for twin in TWINS:
        shown: Any = output_schemas[twin.tool]
        for key in twin.at:
            shown = shown[key]
        for name, inner in shown["properties"].items():
            if _rest_name(twin, name) in {_rest_name(twin, a) for a in twin.added}:
                continue  # the door's own field
            for place in _nested(inner, (*twin.at, P, name)):
                assert (twin.tool, place) in places, f"{twin.tool}: no twin for the record at {place}"


# The converter, on a record of every kind of field.

@dataclass(frozen=True)
class Part:
    """A part."""

    name: str
    weight: float


@dataclass(frozen=True)
class Widget:
    id: str
    count: int
    ready: bool
    colour: Literal["red", "blue"]
    note: str | None
    tags: tuple[str, ...]
    main: Part
    spare: Part | None
    parts: list[Part]
    secret_key: str


PART = s.View({"name": "Its name.", "weight": "In grams."})
WIDGET = s.View({
    "id": s.Shown("The widget.", name="widgetId"),
    "count": "How many.",
    "ready": "Ready yet.",
    "colour": "Its colour.",
    "note": "A note, or null.",
    "tags": s.Shown("Its tags.", items="A tag."),
    "main": s.Shown("The main part.", of=PART),
    "spare": s.Shown("A spare, or null.", of=s.View({"name": "Its name."}, omit=("weight",))),
    "parts": s.Shown(of=PART),
    "extra": s.integer("Added by the door."),
}, omit=("secretKey",))


def test_the_converter_writes_the_mcp_dialect() -> None:
    part = {"type": "object", "properties": {"name": {"type": "string", "description": "Its name."},
                                             "weight": {"type": "number", "description": "In grams."}},
            "required": ["name", "weight"], "additionalProperties": False}
    assert s.record(record_model(Widget), WIDGET, "A widget.") == {
        "type": "object",
        "properties": {
            "widgetId": {"type": "string", "description": "The widget."},
            "count": {"type": "integer", "description": "How many."},
            "ready": {"type": "boolean", "description": "Ready yet."},
            "colour": {"type": "string", "description": "Its colour.", "enum": ["red", "blue"]},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "A note, or null."},
            "tags": {"type": "array", "items": {"type": "string", "description": "A tag."}, "description": "Its tags."},
            "main": {**part, "description": "The main part."},
            "spare": {"anyOf": [{"type": "object", "properties": {"name": {"type": "string",
                                                                           "description": "Its name."}},
                                 "required": ["name"], "additionalProperties": False}, {"type": "null"}],
                      "description": "A spare, or null."},
            "parts": {"type": "array", "items": part},
            "extra": {"type": "integer", "description": "Added by the door."},
        },
        "required": ["widgetId", "count", "ready", "colour", "note", "tags", "main", "spare", "parts", "extra"],
        "additionalProperties": False,
        "description": "A widget.",
    }
    # no $ref or $defs survive, and the key order is the builders' (tools/list is compared byte for byte)
    assert "$ref" not in json.dumps(s.record(record_model(Widget), WIDGET))
    assert json.dumps(s.record(record_model(Part), PART)) == json.dumps(s.obj({"name": s.string("Its name."),
                                                                              "weight": {"type": "number",
                                                                                         "description": "In grams."}}))


def test_a_view_may_leave_out_null_open_the_object_and_use_snake_case_names() -> None:
    view = s.View({"name": "Its name.", "weight": s.Shown("In grams.", absent_when_null=True)}, closed=False,
                  by_alias=False)
    assert s.record(record_model(Scale), view) == {
        "type": "object", "properties": {"name": {"type": "string", "description": "Its name."},
                                         "weight": {"type": "number", "description": "In grams."}},
        "required": ["name"]}
    snake = s.View({"secret_key": "The key."}, omit=("id", "count", "ready", "colour", "note", "tags", "main",
                                                       "spare", "parts"), by_alias=False)
    assert list(s.properties(record_model(Widget), snake)) == ["secret_key"]


@dataclass(frozen=True)
class Scale:
    name: str
    weight: float | None


@pytest.mark.parametrize(("view", "says"), [
    (s.View({"name": "Its name."}), r"neither shown nor omitted \['weight'\]"),  # a new field: each door decides
    (s.View({"name": "Its name.", "weight": "g", "size": "cm"}), r"unknown \['size'\]"),
    (s.View({"name": "Its name."}, omit=("weight", "mass")), r"unknown \['mass'\]"),
    (s.View({"name": "Its name.", "weight": s.integer("shadowed")}), r"added but the record's \['weight'\]"),
    (s.View({"name": "Its name.", "weight": "g"}, omit=("weight",)), r"both shown and omitted \['weight'\]"),
])
def test_a_view_that_does_not_match_its_record_fails_loudly(view: s.View, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        s.record(record_model(Part), view)


def test_a_record_field_needs_the_view_of_its_record() -> None:
    with pytest.raises(ValueError, match="needs the view of its record"):
        s.record(record_model(Widget), s.View({**WIDGET.words, "main": "The main part."}, omit=WIDGET.omit))
