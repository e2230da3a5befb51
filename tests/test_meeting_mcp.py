"""A meeting note's action items through the MCP door of `notewell serve` with its own watcher, on SQLite and
PostgreSQL: they reach the assignee's brain_start_session as openActionItems (blockers first), are never
injected, leave when their line is ticked, stay resolved when the assignee resolves them at a close, and a member
who may not read the project never sees them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from brain_world import call, refusal
from conftest import make_vault
from mcp_world import connect, served_vault
from notewell.access.principal import LOCAL_OWNER
from notewell.runtime import open_runtime

pytestmark = pytest.mark.anyio
NOTE = "acme/meetings/2026-03-04-kickoff.md"
KICKOFF = """# Kickoff

## Actions

- [ ] Tom Whitcombe: send the plan by 2026-03-10
- [ ] Tom: draft the budget #blocker
- [ ] Eve: review the contract
"""
SCOPES = ["sessions", "memory:read"]


def _world(tmp_path: Path, db: str) -> tuple[Path, dict[str, str]]:
    vault = make_vault(tmp_path, {"acme/README.md": "# Acme\n", NOTE: KICKOFF})
    rt = open_runtime(str(vault), db)
    try:
        admin = rt.administration
        admin.add_user(LOCAL_OWNER, "tom@x.test", "member", name="Tom Whitcombe", handle="tom")
        admin.add_user(LOCAL_OWNER, "eve@x.test", "member", name="Eve Adams", handle="eve")
        rt.indexing.sync()
        admin.grant(LOCAL_OWNER, "tom@x.test", "acme", "read")  # Eve has no grant on acme
        tokens = {h: admin.mint_token(LOCAL_OWNER, f"{h}@x.test", SCOPES).secret for h in ("tom", "eve")}
        # Eve's item is there, in the project she may not read
        assert [k.rule for k in rt.store.brain.open_action_items("acme", "for:eve@x.test", 10)] \
            == ["Eve: review the contract"]
    finally:
        rt.close()
    return vault, tokens


async def _open_items(url: str, token: str) -> dict[str, Any]:
    async with connect(url, token) as c:
        started = await call(c, "brain_start_session", {"projectId": "acme", "prompt": "draft the budget plan"})
        return started


async def _until(url: str, token: str, wanted: Any, within: float = 15.0) -> dict[str, Any]:
    """The session start once ``wanted(started)`` holds (the watcher's sync landed), else a failure."""
    began = time.monotonic()
    while True:
        started = await _open_items(url, token)
        if wanted(started):
            return started
        assert time.monotonic() - began < within, started
        await anyio.sleep(0.05)


async def test_meeting_items_reach_the_assignee_and_leave_when_ticked(tmp_path: Path, store_url: str) -> None:
    vault, tokens = _world(tmp_path, store_url)
    with served_vault(vault, store_url, watch=True) as url:
        started = await _open_items(url, tokens["tom"])
        opened = started["openActionItems"]
        lines = opened["injection"].split("\n")
        assert lines[0] == "## Open Action Items"
        assert lines[1] == f"- [blocker] Tom: draft the budget [{opened['knowledgeIds'][0]}]"
        assert lines[2:] == [f"- Tom Whitcombe: send the plan by 2026-03-10 [{opened['knowledgeIds'][1]}]"]
        assert "relevantKnowledge" not in started  # tasks are never retrieved nor injected
        blocker, plan = opened["knowledgeIds"]
        async with connect(url, tokens["tom"]) as c:
            found = await call(c, "search_memory", {"query": "budget"})
        assert blocker in json.dumps(found)

        (vault / NOTE).write_text(KICKOFF.replace("- [ ] Tom: draft", "- [x] Tom: draft"), encoding="utf-8")
        after = await _until(url, tokens["tom"], lambda s: s["openActionItems"]["knowledgeIds"] == [plan])

        async with connect(url, tokens["tom"]) as c:
            closed = await call(c, "brain_report_session_outcome", {
                "sessionId": after["sessionId"], "success": True, "resolvedActionItemIds": [plan]})
        assert closed["resolvedActionItems"] == 1
        (vault / NOTE).write_text(KICKOFF.replace("- [ ] Tom: draft", "- [x] Tom: draft")
                                  + "- [ ] Tom: book the venue\n", encoding="utf-8")
        last = await _until(url, tokens["tom"], lambda s: "openActionItems" in s)
        assert len(last["openActionItems"]["knowledgeIds"]) == 1  # the new line; the resolved one stays resolved
        assert "Tom: book the venue" in last["openActionItems"]["injection"]


async def test_a_member_who_may_not_read_the_project_never_sees_them(tmp_path: Path, store_url: str) -> None:
    vault, tokens = _world(tmp_path, store_url)
    with served_vault(vault, store_url, watch=False) as url:
        async with connect(url, tokens["eve"]) as c:
            text = await refusal(c, "brain_start_session", {"projectId": "acme"})
            assert "FORBIDDEN_PROJECT" in text
            own = await call(c, "brain_start_session", {"prompt": "review the contract"})
            assert "openActionItems" not in own and own["projectId"] != "acme"
            found = await call(c, "search_memory", {"query": "contract"})
            assert "review the contract" not in json.dumps(found)


async def test_an_assignee_who_lost_the_project_resolves_nothing_there(tmp_path: Path, store_url: str) -> None:
    """Being named on an item lets a reader of its project resolve it; once the grant is gone (mid-session),
    the item is in a project the person no longer sees, and the close leaves it open for everyone else."""
    vault, tokens = _world(tmp_path, store_url)
    with served_vault(vault, store_url, watch=False) as url:
        started = await _open_items(url, tokens["tom"])
        plan = started["openActionItems"]["knowledgeIds"][1]
        rt = open_runtime(str(vault), store_url)
        try:
            rt.administration.ungrant(LOCAL_OWNER, "tom@x.test", "acme")
        finally:
            rt.close()
        async with connect(url, tokens["tom"]) as c:
            closed = await call(c, "brain_report_session_outcome", {
                "sessionId": started["sessionId"], "success": True, "resolvedActionItemIds": [plan]})
        assert closed["resolvedActionItems"] == 0
        rt = open_runtime(str(vault), store_url)
        try:
            rt.administration.grant(LOCAL_OWNER, "tom@x.test", "acme", "read")
        finally:
            rt.close()
        again = await _open_items(url, tokens["tom"])
        assert plan in again["openActionItems"]["knowledgeIds"]  # still open
