"""The tool reference, generated from the tool definitions: docs/tools/<tool>.md, docs/tools.md, docs/llms.txt.

Each page comes from the ToolSpec itself (description, schemas, scope, annotations, refusals) and its
example is a real call, as the local owner, on a fresh index of the bundled example vault, so the
pages show what the code does. ``notewell docs`` writes them; a test fails when the committed files
differ from what this module generates.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from notewell.access.principal import LOCAL_OWNER
from notewell.answer_bound import ANSWER_BYTES_MAX
from notewell.mcp.getdocs import limits_text
from notewell.mcp.server import FORBIDDEN, NotewellMCP, scope_refusal
from notewell.mcp.toolset import JsonObject, Toolset, ToolSpec

_ANNOTATION_NAMES = (("title", "title"), ("read_only_hint", "readOnlyHint"), ("destructive_hint", "destructiveHint"),
                     ("idempotent_hint", "idempotentHint"), ("open_world_hint", "openWorldHint"))


def _type(schema: JsonObject) -> str:
    if "anyOf" in schema and "type" not in schema:
        return " | ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " | ".join(kind)
    if kind == "array":
        return f"{_type(schema.get('items', {}))}[]"
    return str(kind)


def _constraints(schema: JsonObject) -> str:
    parts = []
    for key, label in (("minLength", "length at least {}"), ("minimum", "at least {}"), ("maximum", "at most {}")):
        if key in schema:
            parts.append(label.format(schema[key]))
    if "enum" in schema:
        parts.append("one of " + ", ".join(f"`{v}`" for v in schema["enum"]))
    if "anyOf" in schema:
        values = ", ".join(f"`{v['const']}` ({v.get('description', '')})" for v in schema["anyOf"])
        parts.append(f"one of the projects this person can read, so the list differs per token; for the local "
                     f"owner on the example vault: {values}")
    if "default" in schema:
        parts.append(f"default `{json.dumps(schema['default'])}`")
    return "; ".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _arguments(spec: ToolSpec) -> list[str]:
    schema = spec.schema_for(LOCAL_OWNER)
    props: dict[str, JsonObject] = schema.get("properties", {})
    if not props:
        return ["None."]
    required = set(schema.get("required", []))
    rows = ["| name | type | required | description |", "| --- | --- | --- | --- |"]
    for name, schema in props.items():
        extra = _constraints(schema)
        desc = schema.get("description", "") + (f" ({extra})" if extra else "")
        rows.append(f"| `{name}` | {_cell(_type(schema))} | {'yes' if name in required else ''} | {_cell(desc)} |")
    return rows


def _fields(schema: JsonObject, prefix: str = "") -> Iterator[tuple[str, JsonObject, bool]]:
    required = set(schema.get("required", []))
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        yield path, sub, name in required
        target = sub.get("items", {}) if sub.get("type") == "array" else sub
        if "properties" in target:
            yield from _fields(target, f"{path}[]." if sub.get("type") == "array" else f"{path}.")


def _result(spec: ToolSpec) -> list[str]:
    if spec.output_schema is None:
        return ["A text block."]
    rows = ["As structuredContent and, the same JSON, as a text block.", "",
            "| field | type | always | description |", "| --- | --- | --- | --- |"]
    for path, sub, req in _fields(spec.output_schema):
        desc = _cell(sub.get("description", ""))
        rows.append(f"| `{path}` | {_cell(_type(sub))} | {'yes' if req else ''} | {desc} |")
    return rows


def _annotations(spec: ToolSpec) -> list[str]:
    values = spec.annotations.model_dump()
    lines = [f"- {wire}: {json.dumps(values[attr])}" for attr, wire in _ANNOTATION_NAMES
             if values.get(attr) is not None]
    if spec.meta:
        lines += [f"- _meta {key}: {json.dumps(value)}" for key, value in spec.meta.items()]
    return lines or ["None."]


VARIES = object()  # an example whose answer differs from run to run (ids, times): not reproduced


def run_example(mcp: NotewellMCP, spec: ToolSpec) -> Any:
    """What the example call answers (structuredContent, or the refusal text), as the local owner."""
    result = mcp.run_tool(spec, LOCAL_OWNER, dict(spec.example or {}))
    return result.structured_content if not result.is_error else result.content[0].text  # type: ignore[union-attr]


def _example(spec: ToolSpec, answer: Any) -> list[str]:
    if spec.example is None:
        return []
    call = ["## Example", "", "Called as the local owner on the bundled example vault (examples/northwind):", "",
            "```json", json.dumps({"name": spec.name, "arguments": spec.example}, ensure_ascii=False, indent=2),
            "```", ""]
    if answer is VARIES:
        return [*call, "Its answer holds ids and times that differ from run to run, so it is not reproduced "
                "here; its fields are listed under Result.", ""]
    return [*call, "```json", json.dumps(answer, ensure_ascii=False, indent=2), "```", ""]


def _cut(spec: ToolSpec) -> list[str]:
    """What a cut answer of this tool advises (answer_bound.py), when the tool words it for itself: its general
    advice, and each field's own way on, shown with the answer's fields as <placeholders>."""
    lines = [] if spec.cut_advice is None else [
        f"An answer over {ANSWER_BYTES_MAX // 1024} KB of JSON comes cut, saying so in its note, which adds: "
        f"\"{spec.cut_advice}\"", ""]
    placeholders = _placeholders(spec.output_schema or {})
    fields: dict[str, list[str]] = {}  # each way on, worded for the placeholders, and the fields it is the way of
    for name, way in spec.cut_ways.items():
        fields.setdefault(way(placeholders) or "", []).append(name)
    return lines + [line for said, names in fields.items()
                    for line in (f"When {', '.join(names[:-1])}{' or ' if names[1:] else ''}{names[-1]} is cut, "
                                 f"the note adds: \"{said}\"", "")]


def _placeholders(schema: JsonObject, name: str = "") -> Any:
    """An answer of ``schema`` whose every text is its own name in brackets (``<parent.id>``), for a way on."""
    properties = {key: child for kind in [schema, *schema.get("anyOf", [])]
                  for key, child in kind.get("properties", {}).items()}
    if not properties:
        return f"<{name}>"
    return {key: _placeholders(child, f"{name}.{key}" if name else key) for key, child in properties.items()}


def _scope(toolset: Toolset, spec: ToolSpec) -> str:
    """What a call without the tool's scope answers: as the server does it (NotewellMCP.missing_scope)."""
    if toolset.scope_refused:
        return (f"`{spec.scope}`. Without it the tool is absent from tools/list, and calling it returns MCP error "
                f"{FORBIDDEN} \"{scope_refusal(spec.name, spec.scope)}\" with data.scope naming it; over HTTP "
                "a 403 with `WWW-Authenticate: Bearer error=\"insufficient_scope\"` naming the scope.")
    return (f"`{spec.scope}`. Without it the tool is absent from tools/list, and calling it returns MCP error -32602 "
            f"\"Tool {spec.name} not found\".")


def tool_page(toolset: Toolset, spec: ToolSpec, answer: Any = None) -> str:
    lines = [
        f"# {spec.name}", "",
        f"**{spec.title}**. Toolset `{toolset.name}`; scope `{spec.scope}`.", "",
        "<!-- Generated by `notewell docs` from the tool definition; edit the code, not this file. -->", "",
        "## Description", "", "What the model reads, word for word:", "", f"> {spec.description}", "",
        *(["On a server that finds nothing by meaning (`semantic = false`, `notewell serve --no-semantic`, or a "
           "model that did not load) it reads instead:", "", f"> {spec.words_only_description}", ""]
          if spec.words_only_description else []),
        "## Arguments", "", *_arguments(spec), "",
        "## Result", "", *_result(spec), "", *_cut(spec),
        "## Scopes", "", _scope(toolset, spec), "",
        "## Annotations", "", *_annotations(spec), "",
        "## Refusals and what to do", "", *[f"- {r}" for r in spec.refusals], "",
        *_example(spec, answer),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def tools_index(mcp: NotewellMCP) -> str:
    lines = ["# Tools", "", "<!-- Generated by `notewell docs` from the tool definitions; edit the code. -->", "",
             "Notewell offers its tools in toolsets; `notewell serve --toolsets knowledge,notes` picks them "
             "(default: all). A tool is listed only for a token that holds its scope; called without it, it is "
             "`-32602 Tool X not found`, as a tool not served, except the memory toolset's (XMemo's 401/403), "
             "refused naming the scope: over HTTP a 403 with `insufficient_scope` (docs/security.md).", "",
             "What the server tells an agent when it connects (initialize instructions, with every toolset):", "",
             *_quoted(mcp.instructions),
             *(f"Served alone (`notewell serve --toolsets {t.name}`), the {t.name} toolset's paragraph is the whole "
               "of the instructions, word for word.\n" for t in mcp.toolsets if t.alone_instructions)]
    for toolset in mcp.toolsets:
        lines += [f"## Toolset `{toolset.name}`", "", toolset.summary, "", "| tool | scope | what it does |",
                  "| --- | --- | --- |"]
        for spec in mcp.tools_of[toolset.name]:
            lines.append(f"| [{spec.name}](tools/{spec.name}.md) | `{spec.scope}` | {_cell(spec.title)} |")
        lines.append("")
        lines += _resources(toolset, mcp)
    lines += ["## Limits", "", limits_text(), ""]
    return "\n".join(lines)


def _quoted(text: str) -> list[str]:
    """``text`` as a Markdown block quote, paragraph by paragraph."""
    return [f"> {line}" if line else ">" for line in text.split("\n")] + [""]


def _resources(toolset: Toolset, mcp: NotewellMCP) -> list[str]:
    """The toolset's resources (resources/list and resources/read), listed only for a token with their scope."""
    if toolset.resources is None and toolset.resource_templates is None:
        return []
    lines = [f"Resources of `{toolset.name}` (resources/list or resources/templates/list, resources/read; JSON, "
             "computed for the token that reads them, listed only when it holds the scope):", "",
             "| uri | scope | what it holds |", "| --- | --- | --- |"]
    lines += [f"| `{r.uri}` | `{r.scope}` | {_cell(r.description)} |" for r in mcp.resources_of[toolset.name]]
    lines += [f"| `{t.uri_template}` | `{t.scope}` | {_cell(t.description)} |" for t in mcp.templates_of[toolset.name]]
    return [*lines, ""]


def llms_txt(mcp: NotewellMCP) -> str:
    lines = ["# Notewell", "",
             "> A self-hosted knowledge and memory server for AI agents: MCP tools to list, read and search a "
             "team's documents within each person's permissions.", "", mcp.instructions, ""]
    for toolset in mcp.toolsets:
        lines += [f"## Toolset {toolset.name}", ""]
        lines += [f"- [{spec.name}](tools/{spec.name}.md): {spec.title}" for spec in mcp.tools_of[toolset.name]]
        lines.append("")
    return "\n".join(lines)


def _answers(mcp: NotewellMCP) -> dict[str, Any]:
    return {spec.name: run_example(mcp, spec) for spec in mcp.tools if spec.example is not None}


ExampleServer = Callable[[], AbstractContextManager[NotewellMCP]]


def generate(example_server: ExampleServer) -> dict[str, str]:
    """Every generated file, by path relative to the docs folder.

    The examples run twice, on two fresh servers ``example_server`` opens (the command line builds them on
    a copy of the example vault): an answer that differs between the runs (a new memory's id, a timestamp)
    is described rather than shown, so the pages stay reproducible.
    """
    with example_server() as other:
        second = _answers(other)
    with example_server() as mcp:
        first = _answers(mcp)
        files = {"tools.md": tools_index(mcp), "llms.txt": llms_txt(mcp)}
        for toolset in mcp.toolsets:
            for spec in mcp.tools_of[toolset.name]:
                answer = first.get(spec.name)
                files[f"tools/{spec.name}.md"] = tool_page(
                    toolset, spec, answer if answer == second.get(spec.name) else VARIES)
        return files


def write(out: Path, example_server: ExampleServer) -> list[Path]:
    written = []
    for rel, text in generate(example_server).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
