"""The standing hostile-input suite for the REST door: every operation of /api/v1, from its OpenAPI document.

Hypothesis draws an operation and fills its path and query parameters and its JSON body from their schemas,
mixed with hostile values (tests/hostile.py; strings the URL cannot carry as text are sent as their UTF-8 or
surrogate bytes, percent-encoded). Every answer must be below 500 and, when an error, a problem document
with a status the operation documents; never a hang: each arrives within the search time budget plus a
margin. Both backends (the rest fixture).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import arguments, for_schema
from notewell.limits import SCAN_BUDGET_S
from rest_world import RestWorld

ANSWER_WITHIN_S = SCAN_BUDGET_S + 10
METHODS = ("get", "post", "put", "patch", "delete")


def _resolve(node: Any, doc: dict[str, Any]) -> Any:
    """``node`` with every local $ref replaced by what it points to (the API's schemas are not recursive)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target: Any = doc
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            return _resolve(target, doc)
        return {k: _resolve(v, doc) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, doc) for v in node]
    return node


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, _resolve(op, doc)) for path, item in doc["paths"].items()
            for method, op in item.items() if method in METHODS]


URL_VALUE_CHARS = 4000  # a URL carries no more (the client refuses 64 KB URLs; the body carries the huge strings)


def _text(value: Any) -> str:
    """A parameter's value as URL text: percent-encoded bytes, lone surrogates included."""
    text = value if isinstance(value, str) else json.dumps(value)
    return quote(text[:URL_VALUE_CHARS].encode("utf-8", "surrogatepass"), safe="")


@pytest.fixture(scope="module")
def api(rest: RestWorld) -> tuple[RestWorld, list[tuple[str, str, dict[str, Any]]]]:
    doc = httpx.get(rest.base + "/openapi.json", timeout=30).json()
    return rest, _operations(doc)


@st.composite
def requests(draw: st.DrawFn, operations: list[tuple[str, str, dict[str, Any]]]
             ) -> tuple[str, str, bytes | None, set[str]]:
    method, path, op = draw(st.sampled_from(operations))
    query: list[str] = []
    for param in op.get("parameters", []):
        if param["in"] not in ("path", "query"):
            continue
        if param["in"] == "query" and not param.get("required") and draw(st.booleans()):
            continue
        value = _text(draw(for_schema(param.get("schema", {}))))
        if param["in"] == "path":  # a client resolves "." and ".." segments itself: send them encoded
            value = value.replace(".", "%2E") if set(value) <= {"."} else value
            path = path.replace("{" + param["name"] + "}", value or "x")
        else:
            query.append(f"{quote(param['name'])}={value}")
    body = None
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content is not None:
        payload = draw(st.one_of(arguments(content.get("schema", {})), for_schema({})))
        body = json.dumps(payload).encode("ascii")
    return method, path + ("?" + "&".join(query) if query else ""), body, set(op.get("responses", {}))


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_operation_answers_a_server_error_or_hangs(api: tuple[RestWorld, list[Any]], data: st.DataObject) -> None:
    world, operations = api
    method, target, body, documented = data.draw(requests(operations))
    headers = {"Authorization": f"Bearer {world.tokens['admin_all']}", "Content-Type": "application/json"}
    response = httpx.request(method, world.base + target, content=body, headers=headers, timeout=ANSWER_WITHIN_S)
    shown = f"{method} {target[:200]} -> {response.status_code} {response.text[:300]}"
    assert response.status_code < 500, shown
    if response.status_code >= 400:
        assert response.headers["content-type"].startswith("application/problem+json"), shown
        assert str(response.status_code) in documented, f"undocumented status: {shown}"


def test_every_operation_is_in_the_draw(api: tuple[RestWorld, list[Any]]) -> None:
    _world, operations = api
    assert len(operations) >= 10
    assert any(path.endswith("/search") for _m, path, _op in operations)
