"""Toolset "brain": external-brain's twelve tools and four resources, mapped onto the brain service.

Names, arguments, result fields and error codes follow shared/seeds/external-brain-MCP_TOOLS.txt;
docs/brain.md explains sessions, knowledge kinds, the score, the stages and the ranking. Refusals are
tool results whose text is ``Error in <tool>: <CODE>: <sentence naming the fix>`` (NOT_FOUND,
FORBIDDEN_PROJECT, VALIDATION); an argument of the wrong type, or a required one missing, is JSON-RPC
-32602 as for every other tool, but for brain_create_project's name, whose absence the page lists as VALIDATION.
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.answer_bound import ANSWER_BYTES_MAX, PAGE_BYTES_MAX, json_bytes, leading_items_within
from notewell.errors import InvalidArgument
from notewell.mcp import log
from notewell.mcp.tools import brain_specs as spec
from notewell.mcp.tools import xmemo
from notewell.mcp.tools.brain_shapes import (
    ACTION,
    ORACLE_NEXT_STEPS,
    ask_back,
    found_by,
    found_json,
    item_json,
    json_object,
    project_json,
    required_bool,
    session_json,
    strings,
)
from notewell.mcp.toolset import Arguments, CallContext, JsonObject, ResourceSpec, Toolset, ToolSpec
from notewell.records.models import dump, record_model
from notewell.runtime import Runtime
from notewell.services import brain_injection
from notewell.services import brain_limits as b
from notewell.services.brain import BrainService
from notewell.services.brain_errors import BrainValidation
from notewell.services.brain_learnings import LearningsReport
from notewell.services.brain_oracle import OracleService
from notewell.timestamps import millis

INSTRUCTIONS = (
    "External Brain is connected. Run brain_get_user_style first to verify end-to-end connectivity and bootstrap "
    "your peer card. End each coding session with brain_report_session_outcome so the Knowledge Extraction Agent "
    "can learn from the outcome — without that close call, sessions stay open and the brain doesn't learn."
)


class _Calls:
    """The tools' calls: each reads its arguments, asks the brain service and encodes the answer."""

    def __init__(self, svc: BrainService, oracle: OracleService) -> None:
        self.svc = svc
        self.oracle = oracle

    def start_session(self, ctx: CallContext, args: Arguments) -> JsonObject:
        started = self.svc.start_session(ctx.principal, client_type=args.string("clientType"),
                                         prompt=args.string("prompt"), framework=args.string("framework"),
                                         project_id=args.string("projectId"),
                                         project_name=args.string("projectName"), language=args.string("language"))
        out: JsonObject = {"sessionId": started.session.id, "startedAt": millis(started.session.started_at),
                           "projectId": started.project.id}
        if started.relevant is not None:
            out["relevantKnowledge"] = {"knowledgeIds": started.relevant.ids, "injection": started.relevant.text,
                                        "found": [{"id": f.item.ref, **found_by(f.found_by, f.similarity)}
                                                  for f in started.relevant_found]}
        xmemo.with_notes(out, xmemo.words_only(started.words_only))
        if started.action_items:
            out["openActionItems"] = {"knowledgeIds": [k.ref for k in started.action_items],
                                      "injection": brain_injection.action_items(started.action_items)}
        for failure in started.failures:
            log.event("start.inject_failed", session=started.session.id[:12], user=ctx.principal.handle,
                      reason=failure[:200])
        return out

    def create_project(self, ctx: CallContext, args: Arguments) -> JsonObject:
        name = args.string("name")
        if name is None:  # the page lists a missing name among VALIDATION's cases, not as a malformed call
            raise BrainValidation("name", "is required: the project's name, 1 to 120 characters")
        bp, created = self.svc.create_project(ctx.principal, name, args.string("framework"), args.string("language"))
        return {"projectId": bp.id, "slug": bp.slug, "created": created}

    def list_projects(self, ctx: CallContext, args: Arguments) -> JsonObject:
        """Every project, owned first, or with offset or limit a page of them. Past the answer's bound without
        them, the personal projects that do not fit are left out rather than the shared ones after them (a person
        with hundreds of personal projects saw none of the team's), and the note names the offset that lists the
        ones left out; when the shared ones alone pass the bound, the first page comes instead."""
        paged = args.raw.get("offset") is not None or args.raw.get("limit") is not None
        offset = args.integer("offset", 0, 0, None)
        limit = args.integer("limit", b.PROJECTS_LIMIT_MAX, 1, b.PROJECTS_LIMIT_MAX)
        projects = [(bp.personal, project_json(bp)) for bp in self.svc.projects(ctx.principal)]
        everything = [shown for _, shown in projects]
        if not paged and json_bytes({"projects": everything}) <= PAGE_BYTES_MAX:
            return {"projects": everything}
        shared = [shown for personal, shown in projects if not personal]
        own = [shown for personal, shown in projects if personal]

        def note(left: int, kept: int) -> str:
            return (f"{left} of your {len(own)} personal projects are left out to keep this answer within "
                    f"{ANSWER_BYTES_MAX // 1024} KB; every shared project is here. brain_list_projects with offset "
                    f"{kept} lists them, a page at a time, and brain_start_session's projectName files a session "
                    "under one by its name.")

        room = PAGE_BYTES_MAX - json_bytes({"projects": shared, "note": note(len(own), len(own))})
        if not paged and room >= 0:
            kept: list[JsonObject] = []
            for shown in own:
                room -= json_bytes(shown) + len(", ")
                if room < 0:
                    break
                kept.append(shown)
            return {"projects": kept + shared, "truncated": True, "note": note(len(own) - len(kept), len(kept))}
        window = everything[offset:offset + limit]
        page = window[:max(leading_items_within({"projects": window}, window, PAGE_BYTES_MAX), 1)]
        after = offset + len(page)
        if offset and offset >= len(everything):
            return {"projects": page, "note": f"No project from offset {offset}: there are {len(everything)} in all."}
        if after >= len(everything):
            return {"projects": page}
        return {"projects": page, "truncated": True,
                "note": f"Projects {offset + 1} to {after} of {len(everything)}, owned first; more follow: call "
                        f"brain_list_projects again with offset {after}{' (and the same limit)' if paged else ''}."}

    def active_project(self, ctx: CallContext, args: Arguments) -> JsonObject:
        found = self.svc.active_project(ctx.principal)
        if found is None:
            return {"project": None}
        bp, source = found
        return {"project": {"id": bp.id, "slug": bp.slug, "name": bp.name, "orgName": bp.org_name, "source": source}}

    def retrieve(self, ctx: CallContext, args: Arguments) -> JsonObject:
        context = json_object(args, "context") or {}
        session_id = context.get("sessionId")
        if session_id is not None and not isinstance(session_id, str):
            raise InvalidArgument("context", "sessionId must be a string")
        found = self.svc.retrieve(ctx.principal, args.required_string("prompt"),
                                  limit=args.integer("limit", b.RETRIEVE_LIMIT_DEFAULT, 1, b.RETRIEVE_LIMIT_MAX),
                                  max_tokens=args.integer("maxTokens", b.INJECTION_TOKENS_DEFAULT,
                                                          b.INJECTION_TOKENS_MIN, b.INJECTION_TOKENS_MAX),
                                  session_id=session_id)
        return xmemo.with_notes({"bundle": {"items": [found_json(i) for i in found.items],
                                            "injectedIds": found.injection.ids,
                                            "injectionTokens": found.injection.tokens},
                                 "injection": found.injection.text},
                                found.not_recorded, xmemo.words_only(found.words_only))

    def report(self, ctx: CallContext, args: Arguments) -> JsonObject:
        learnings = args.raw.get("learnings")
        if learnings is not None and not isinstance(learnings, list):
            raise InvalidArgument("learnings", "must be a list of {trigger, rule, rationale, type, source, confidence}")
        done = self.svc.report_outcome(ctx.principal, args.required_string("sessionId"),
                                       success=required_bool(args, "success"),
                                       user_feedback=args.string("userFeedback"),
                                       knowledge_used=strings(args, "knowledgeUsed") or [], learnings=learnings,
                                       resolved_action_item_ids=strings(args, "resolvedActionItemIds"),
                                       summary=args.string("summary"))
        lr = done.learnings
        out: JsonObject = {"sqs": done.sqs, "queued": done.queued, "confidenceUpdates": done.confidence_updates,
                           "learnings": dump(record_model(LearningsReport), lr)}
        if done.resolved_action_items is not None:
            out["resolvedActionItems"] = done.resolved_action_items
        if done.hint is not None:
            out["hint"] = ask_back(done.hint, lr.unwritable, done.session.brain_project)
        if lr.submitted:
            log.event("report.learnings_captured", session=done.session.id[:12], submitted=lr.submitted,
                      kept=lr.kept, dropped=lr.dropped, captured=len(lr.captured))
        return out

    def teach(self, ctx: CallContext, args: Arguments) -> JsonObject:
        taught = self.svc.teach(ctx.principal, rule=args.required_string("rule"),
                                trigger=args.string("trigger") or "",
                                rationale=args.string("rationale") or "",
                                kind=args.string("type") or "heuristic",
                                source=args.string("source") or "user_teach", tags=strings(args, "tags"),
                                project_id=args.string("projectId"),
                                supersedes=args.string("supersedesKnowledgeId"))
        item = taught.item
        out: JsonObject = {"id": item.ref, "confidence": item.confidence, "projectId": item.brain_project,
                           "created": taught.created}
        if taught.same_meaning is not None:
            out["sameMeaning"] = round(taught.same_meaning, 3)
        return out

    def user_style(self, ctx: CallContext, args: Arguments) -> JsonObject:
        """The peer card and the reflexes from offset that keep the answer within its bound (one at least), the
        note naming the offset of the next when more follow: 20 reflexes of long rules passed it, and the door
        cut them with no way to the rest."""
        offset = args.integer("offset", 0, 0, None)
        style = self.svc.user_style(ctx.principal)
        reflexes = [item_json(k) for k in style.reflexes]
        out: JsonObject = {"peerCard": style.peer_card, "reflexes": reflexes[offset:]}
        page = out["reflexes"]
        del page[max(leading_items_within(out, page, PAGE_BYTES_MAX), 1):]
        after = offset + len(page)
        if offset and offset >= len(reflexes):
            out["note"] = f"No reflex from offset {offset}: there are {len(reflexes)} in all."
        elif after < len(reflexes):
            out.update(truncated=True, note=f"Reflexes {offset + 1} to {after} of {len(reflexes)}, most confident "
                                            f"first; more follow: call brain_get_user_style again with offset {after}.")
        return out

    def oracle_call(self, ctx: CallContext, args: Arguments) -> JsonObject:
        answer = self.oracle.ask(ctx.principal, args.required_string("question"))
        text = f"{answer.answer} {ORACLE_NEXT_STEPS[answer.next_step]}" if answer.next_step else answer.answer
        citations = [{"n": c.n, "id": c.id, "kind": c.kind, "date": c.date, "title": c.title, "snippet": c.snippet,
                      **found_by(c.found_by, c.similarity)} for c in answer.citations]
        return xmemo.with_notes({"answer": text, "searched": answer.searched, "citations": citations},
                                xmemo.words_only(answer.words_only))

    def log_event(self, ctx: CallContext, args: Arguments) -> JsonObject:
        event_id, accepted, reason = self.svc.log_event(ctx.principal, args.required_string("sessionId"),
                                                        args.string("eventType"), json_object(args, "payload"))
        out: JsonObject = {"id": event_id, "accepted": accepted}
        if reason:
            out["reason"] = reason
        return out

    def find_skill(self, ctx: CallContext, args: Arguments) -> JsonObject:
        query = args.string("query")
        limit = args.integer("limit", b.SKILL_LIMIT_DEFAULT, 1, b.SKILL_LIMIT_MAX)
        found = self.svc.skills(ctx.principal, query, limit)
        if query is None:
            return {"skills": [item_json(f.item, f.score) for f in found]}
        return xmemo.with_notes({"skills": [found_json(f) for f in found]},
                                xmemo.words_only(self.svc.words_only(query)))

    def session_search(self, ctx: CallContext, args: Arguments) -> JsonObject:
        query = args.required_string("query")
        found = self.svc.search_sessions(ctx.principal, query,
                                         limit=args.integer("limit", b.SEARCH_LIMIT_DEFAULT, 1, b.SEARCH_LIMIT_MAX),
                                         days=(args.integer("days", 0, 1, b.SEARCH_DAYS_MAX)
                                               if args.raw.get("days") is not None else None))
        return xmemo.with_notes(
            {"sessions": [{**session_json(f.session), "score": f.score, **found_by(f.found_by, f.similarity)}
                          for f in found]},
            xmemo.words_only(self.svc.words_only(query)))


def build(rt: Runtime) -> Sequence[ToolSpec]:
    c = _Calls(rt.brain, rt.oracle)
    return [spec.start_session(c.start_session), spec.create_project(c.create_project),
            spec.list_projects(c.list_projects), spec.get_active_project(c.active_project),
            spec.retrieve_knowledge(c.retrieve), spec.report_session_outcome(c.report),
            spec.teach_knowledge(c.teach), spec.get_user_style(c.user_style), spec.ask_oracle(c.oracle_call),
            spec.log_event(c.log_event), spec.find_skill(c.find_skill), spec.session_search(c.session_search)]


def resources(rt: Runtime) -> Sequence[ResourceSpec]:
    svc = rt.brain

    def style(ctx: CallContext) -> JsonObject:
        found = svc.user_style(ctx.principal)
        return {"peerCard": found.peer_card, "reflexes": [item_json(k) for k in found.reflexes]}

    def skills(ctx: CallContext) -> JsonObject:
        return {"skills": [item_json(f.item, f.score) for f in svc.skills(ctx.principal, None, b.SKILL_LIMIT_MAX)]}

    def recent(ctx: CallContext) -> JsonObject:
        return {"sessions": [session_json(r) for r in svc.recent_sessions(ctx.principal, b.RECENT_SESSIONS)]}

    def peer_card(ctx: CallContext) -> JsonObject:
        return svc.user_style(ctx.principal).peer_card

    return [
        ResourceSpec("brain://user/style-profile", "style-profile", "Style profile",
                     "Your reflexes and peer card, as brain_get_user_style returns them.", ACTION, style),
        ResourceSpec("brain://user/active-skills", "active-skills", "Active skills",
                     "Skills in knowledge or wisdom stage (recipes matured by successful use), most confident first.",
                     ACTION, skills),
        ResourceSpec("brain://user/recent-sessions", "recent-sessions", "Recent sessions",
                     f"Your last {b.RECENT_SESSIONS} sessions, newest first.", ACTION, recent),
        ResourceSpec("brain://user/peer-card", "peer-card", "Peer card",
                     "Hard-override facts: your principles and anti-principles, frameworks and languages.", ACTION,
                     peer_card),
    ]


TOOLSET = Toolset(name="brain", summary="External Brain: coding sessions, taught knowledge, the confidence loop, "
                                        "skills, the oracle, and four resources (external-brain).",
                  build=build, instructions=INSTRUCTIONS, alone_instructions=True,
                  resources=resources)
