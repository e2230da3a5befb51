"""notewell brain projects | sessions | knowledge | teach | retire | retired | restore | export, acting as a user
(--as EMAIL).

The brain belongs to a person (personal projects live in their home), so every command names the user.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from notewell.access.principal import Principal
from notewell.cli.app import DbOpt, JsonOpt, VaultOpt, app, console, fail, print_json, runtime
from notewell.cli.rows import Col, show_rows
from notewell.errors import InvalidArgument
from notewell.records.brain import KNOWLEDGE_KINDS, EventRecord, KnowledgeRecord, SessionRecord
from notewell.services.brain import BrainService
from notewell.services.brain_limits import EVENTS_PAGE_MAX, SEARCH_LIMIT_MAX
from notewell.services.brain_scoring import knowledge_stage
from notewell.timestamps import now_iso

brain_app = typer.Typer(help="The External Brain: a person's coding sessions and taught knowledge.",
                        no_args_is_help=True)
app.add_typer(brain_app, name="brain")

AsOpt = Annotated[str, typer.Option("--as", help="The user whose brain this is (their email).")]
LimitOpt = Annotated[int, typer.Option("--limit", help="At most this many (1-500).", min=1, max=500)]


def _knowledge_json(k: KnowledgeRecord) -> dict[str, Any]:
    return {"id": k.ref, "projectId": k.brain_project, "ownerUserId": k.owner_user_id,
            "private": k.private_to is not None, "type": k.kind, "trigger": k.trigger, "rule": k.rule,
            "rationale": k.rationale, "source": k.source, "confidence": k.confidence,
            "stage": knowledge_stage(k), "tags": list(k.tags),
            "injected": k.injected_count, "used": k.used_count, "successes": k.success_count,
            "failures": k.failure_count, "created": k.created, "lastUsedAt": k.last_used_at,
            "retiredAt": k.retired_at}


def _all_events(svc: BrainService, p: Principal, session_id: str) -> list[EventRecord]:
    """Every event of a session, a page at a time."""
    events: list[EventRecord] = []
    more = True
    while more:
        page, more = svc.events(p, session_id, limit=EVENTS_PAGE_MAX, offset=len(events))
        events += page
    return events


def _session_json(s: SessionRecord) -> dict[str, Any]:
    return {"sessionId": s.id, "projectId": s.brain_project, "clientType": s.client_type, "prompt": s.prompt,
            "framework": s.framework, "startedAt": s.started_at, "endedAt": s.ended_at, "success": s.success,
            "userFeedback": s.user_feedback, "sqs": s.sqs, "summary": s.summary, "eventCount": s.event_count}


@brain_app.command("projects")
def brain_projects(as_user: AsOpt, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """The projects sessions can be filed under: personal ones first, then the shared ones the user sees."""
    with runtime(vault, db) as rt:
        found = rt.brain.projects(rt.authentication.acting_as(as_user))
    if json_out:
        print_json({"projects": [{"id": bp.id, "slug": bp.slug, "name": bp.name, "isOwn": bp.is_own,
                                  "framework": bp.framework, "language": bp.language, "createdAt": bp.created_at}
                                 for bp in found]})
        return
    show_rows([Col("id", whole=True), Col("name"), Col("own"), Col("framework"), Col("language")],
              [(bp.id, bp.name, "yes" if bp.is_own else "", bp.framework or "", bp.language or "") for bp in found],
              empty=f"No projects for {as_user}")


@brain_app.command("sessions")
def brain_sessions(
    as_user: AsOpt,
    query: Annotated[str | None, typer.Option("--query", "-q", help="Only sessions sharing a word with this, or "
                                                                       "close to it in meaning.")]
    = None,
    limit: LimitOpt = 20, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """The user's sessions, newest first (with --query: best matches first)."""
    with runtime(vault, db) as rt:
        svc, p = rt.brain, rt.authentication.acting_as(as_user)
        found = svc.search_sessions(p, query, limit=min(limit, SEARCH_LIMIT_MAX)) if query else None
        rows = [f.session for f in found] if found is not None else svc.recent_sessions(p, limit)
        words_only = svc.words_only(query) if query else None
    if json_out:
        how = ([{"score": f.score, "foundBy": list(f.found_by), "similarity": f.similarity} for f in found]
               if found is not None else [{} for _ in rows])
        print_json({**({"wordsOnly": words_only} if words_only else {}),
                    "sessions": [_session_json(s) | h for s, h in zip(rows, how, strict=True)]})
        return
    show_rows([Col("session", whole=True), Col("project", whole=True), Col("started"), Col("outcome"), Col("sqs"),
               Col("prompt")],
              [(s.id, s.brain_project, s.started_at[:16], _outcome(s), "" if s.sqs is None else f"{s.sqs:.2f}",
                s.prompt[:60]) for s in rows],
              empty=f"No sessions of {as_user}" + (f" match {query!r}" if query else ""),
              note=f"found by words only: {words_only}" if words_only else "")


def _outcome(s: SessionRecord) -> str:
    return "open" if s.ended_at is None else ("success" if s.success else "failure")


@brain_app.command("knowledge")
def brain_knowledge(
    as_user: AsOpt,
    kind: Annotated[list[str] | None, typer.Option("--type", help=f"Only this type (repeatable): "
                                                                 f"{', '.join(KNOWLEDGE_KINDS)}.")] = None,
    limit: LimitOpt = 50, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Live taught knowledge the user sees, newest first (action items only with --type action_item)."""
    with runtime(vault, db) as rt:
        unknown = [k for k in kind or [] if k not in KNOWLEDGE_KINDS]
        if unknown:
            raise InvalidArgument("--type", f"unknown type {unknown[0]!r}; use one of {', '.join(KNOWLEDGE_KINDS)}")
        found = rt.brain.knowledge(rt.authentication.acting_as(as_user), kinds=kind or (), limit=limit)
    if json_out:
        print_json({"knowledge": [_knowledge_json(k) for k in found]})
        return
    show_rows([Col("id", whole=True), Col("project", whole=True), Col("type"), Col("confidence"), Col("stage"),
               Col("rule")],
              [(k.ref, k.brain_project, k.kind, f"{k.confidence:.2f}",
                knowledge_stage(k), k.rule[:70]) for k in found],
              empty=f"No taught knowledge {as_user} sees" + (f" of type {', '.join(kind)}" if kind else ""))


@brain_app.command("teach")
def brain_teach(
    rule: Annotated[str, typer.Argument(help="What to do.")],
    as_user: AsOpt,
    trigger: Annotated[str, typer.Option("--trigger", help="When it applies.")] = "",
    rationale: Annotated[str, typer.Option("--rationale", help="Why.")] = "",
    kind: Annotated[str, typer.Option("--type", help=f"One of {', '.join(KNOWLEDGE_KINDS)}.")] = "heuristic",
    project: Annotated[str | None, typer.Option("--project", "-p", help="A project id (default: the first).")]
    = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="A tag (repeatable).")] = None,
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Teach a rule (confidence 1.0); it is also a memory, so recall finds it."""
    with runtime(vault, db) as rt:
        taught = rt.brain.teach(rt.authentication.acting_as(as_user), rule=rule, trigger=trigger,
                                rationale=rationale, kind=kind, source="cli", tags=tag, project_id=project)
    item = taught.item
    if json_out:
        print_json({**_knowledge_json(item), "created": taught.created, "sameMeaning": taught.same_meaning})
        return
    said = "taught" if taught.created else "already taught"
    if taught.same_meaning is not None:
        said = f"already taught in other words (similarity {taught.same_meaning:.2f}; its confidence raised)"
    console.print(f"{item.ref} {said} in {item.brain_project}", highlight=False)


@brain_app.command("retire")
def brain_retire(
    knowledge_id: Annotated[str, typer.Argument(help="The knowledge id.")],
    as_user: AsOpt,
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the audit log).")],
    vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Retire an item: it leaves retrieval, skills and every memory search."""
    with runtime(vault, db) as rt:
        item = rt.brain.retire(rt.authentication.acting_as(as_user), knowledge_id, reason)
    if json_out:
        print_json(_knowledge_json(item))
        return
    console.print(f"{item.ref} retired", highlight=False)


@brain_app.command("retired")
def brain_retired(as_user: AsOpt, limit: LimitOpt = 50, vault: VaultOpt = None, db: DbOpt = None,
                  json_out: JsonOpt = False) -> None:
    """What nightly evolution retired (unused, below the confidence floor) that the user sees, latest first."""
    with runtime(vault, db) as rt:
        found = rt.brain.evolution_retired(rt.authentication.acting_as(as_user), limit)
    if json_out:
        print_json({"knowledge": [_knowledge_json(k) for k in found]})
        return
    show_rows([Col("id", whole=True), Col("project", whole=True), Col("retired"), Col("confidence"), Col("rule")],
              [(k.ref, k.brain_project, (k.retired_at or "")[:10], f"{k.confidence:.2f}", k.rule[:70])
               for k in found],
              empty=f"Evolution retired nothing {as_user} sees")


@brain_app.command("restore")
def brain_restore(
    knowledge_id: Annotated[str, typer.Argument(help="The knowledge id (`notewell brain retired` lists them).")],
    as_user: AsOpt, vault: VaultOpt = None, db: DbOpt = None, json_out: JsonOpt = False,
) -> None:
    """Undo evolution's retirement of an item: live again, at confidence 0.5 or more (audited)."""
    with runtime(vault, db) as rt:
        item = rt.brain.restore(rt.authentication.acting_as(as_user), knowledge_id)
    if json_out:
        print_json(_knowledge_json(item))
        return
    console.print(f"{item.ref} restored (confidence {item.confidence:.2f})", highlight=False)


@brain_app.command("export")
def brain_export(
    target: Annotated[Path, typer.Argument(help="The JSON file to write (mode 0600); '-' for standard output.")],
    as_user: AsOpt, vault: VaultOpt = None, db: DbOpt = None,
) -> None:
    """Export the user's knowledge (action items included) and sessions with their events, as JSON."""
    with runtime(vault, db) as rt:
        svc, p = rt.brain, rt.authentication.acting_as(as_user)
        sessions = svc.recent_sessions(p, 100_000)
        data = {"exportedAt": now_iso(), "user": p.email, "userId": p.user_id,  # an item's ownerUserId says whose
                "knowledge": [_knowledge_json(k) for k in svc.knowledge(p, limit=1_000_000, include_action_items=True)],
                "sessions": [{**_session_json(s), "events": [
                    {"id": e.id, "eventType": e.event_type, "payload": e.payload, "at": e.at}
                    for e in _all_events(svc, p, s.id)]} for s in sessions]}
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if str(target) == "-":
        typer.echo(text, nl=False)
        return
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(target, 0o600)
    except OSError as exc:
        raise fail(f"TARGET: cannot write {target} ({exc}); choose a writable path") from None
    console.print(f"{len(data['knowledge'])} item(s) and {len(sessions)} session(s) written to {target}",
                  highlight=False)
