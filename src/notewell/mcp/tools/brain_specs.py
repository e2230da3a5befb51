"""The brain toolset's twelve tools as ToolSpecs, one function each: its text, schemas and refusals, given the
call that serves it (mcp/tools/brain.py). Every limit in the text is quoted from the service's constants."""

from __future__ import annotations

from collections.abc import Callable

from notewell.json_bounds import JSON_DEPTH_MAX
from notewell.mcp import schema as s
from notewell.mcp.tools.brain_shapes import (
    ACTION,
    ACTIVE_PROJECT,
    DATA,
    DEEP,
    IDEMPOTENT_WRITE,
    INJECTION,
    ITEM,
    LEARNING,
    MATCHED,
    NOT_YOURS,
    OUTSIDE,
    PICKED,
    PROJECT,
    READ,
    SCOPE_REFUSAL,
    SESSION,
    SHAPE,
    SIMILARITY,
    STAMP,
    WRITE,
)
from notewell.mcp.toolset import Arguments, CallContext, JsonObject, ToolSpec
from notewell.records.brain import KNOWLEDGE_KINDS
from notewell.records.models import record_model
from notewell.services import brain_limits as b
from notewell.services import brain_oracle as oracle
from notewell.services.brain_learnings import LearningsReport
from notewell.services.brain_projects import MAX_LABEL_CHARS, MAX_NAME_CHARS
from notewell.services.brain_scoring import (
    KNOWLEDGE_MIN_RATE,
    KNOWLEDGE_MIN_SUCCESSES,
    WISDOM_MIN_CONFIDENCE,
    WISDOM_MIN_RATE,
    WISDOM_MIN_SUCCESSES,
)

Call = Callable[[CallContext, Arguments], JsonObject]


# How to read whole what a cut oracle answer cites: its sources are these tools' first answers, in its order.
ORACLE_SOURCES = (f"Sentence [n] and citation n tell of one source, sessions first, then knowledge, then documents: "
                  f"brain_session_search with the question as query and limit {oracle.SESSIONS} lists its sessions "
                  f"whole, brain_retrieve_knowledge with the question as prompt and limit {oracle.KNOWLEDGE} its "
                  "knowledge (bundle.items), and readDoc reads a document it cites by the path in the citation's id "
                  "(before #L).")
# A buildContext budget that holds an action item's memory whole: its trigger, rule and rationale (a token is at
# least a character), with its heading.
ACTION_ITEM_TOKENS = b.MAX_TRIGGER_CHARS + 2 * b.MAX_RULE_CHARS + 1000


def _action_items_whole(answer: JsonObject) -> str:
    """The way on of a session's open action items: each is a memory, which buildContext shows whole by ref."""
    picked = answer["openActionItems"]
    ids = picked.get("knowledgeIds") if isinstance(picked, dict) else None  # a text: the tool page's placeholder
    ids = ", ".join(ids) if isinstance(ids, list) else ids
    return (f"Each open action item is a memory: buildContext with its id{f' ({ids})' if ids else ''} as ref, "
            f"depth 0 and max_tokens {ACTION_ITEM_TOKENS} shows it whole (with memory:read).")


def start_session(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_start_session", title="Start a coding session", action=ACTION, annotations=WRITE,
        call=call,
        description="Call ONCE at the start of a coding task. Files the session under a project: the token's "
                    "project, else projectId, else projectName (created on demand), else the first of your "
                    "projects you may write, else your personal \"Default\" (made on first use). With a "
                    f"prompt, the answer carries relevantKnowledge (the top {b.RELEVANT_LIMIT} items for the task "
                    "and a ready injection: apply it); with or without one, "
                    "openActionItems (your open to-dos in the project). Save sessionId for brain_log_event and "
                    "brain_report_session_outcome. "
                    + DATA,
        input_schema=s.tool_input({
            "clientType": s.string("The client, e.g. claude_code, cursor, windsurf, copilot."),
            "prompt": s.string(f"The task, in the person's words (up to {b.MAX_PROMPT_CHARS} characters)."),
            "framework": s.string("The framework in use, e.g. react."),
            "language": s.string("The language, e.g. typescript; kept only if projectName creates a project."),
            "projectId": s.string("A project from brain_list_projects."),
            "projectName": s.string("A personal project by name, case-insensitive; created when missing.",
                                    minLength=1, maxLength=MAX_NAME_CHARS),
        }, []),
        output_schema=s.tool_output({
            "sessionId": s.string("Keep it: brain_log_event and brain_report_session_outcome need it."),
            "startedAt": s.string(STAMP),
            "projectId": s.string("The project the session was filed under."),
            "relevantKnowledge": {**PICKED, "properties": {**PICKED["properties"], "found": s.array(s.obj({
                "id": s.string("Knowledge id."), "matched": MATCHED, "similarity": SIMILARITY}),
                "Each injected item and how it was found, in knowledgeIds' order.")},
                "description": "With a prompt, when anything matched well enough (an item whose similarity to "
                               f"the prompt is known needs {b.RELEVANT_SIMILARITY_MIN:.2f}; for a one-word or "
                               "identifier prompt, or an item not yet embedded, its words decide): the items recorded "
                               "as injected into this session (their injection at most "
                               f"{b.RELEVANT_INJECTION_BYTES:,} bytes of JSON: never cut)."},
            "openActionItems": {**PICKED, "description": "Your open action items in the project (tag "
                                f"for:<your email>), blockers first then oldest, at most {b.ACTION_ITEMS_MAX}."},
        }, ["sessionId", "startedAt", "projectId"]),
        cut_ways={"openActionItems": _action_items_whole},
        refusals=(OUTSIDE.format(tool="brain_start_session"),
                  "Error in brain_start_session: VALIDATION: projectName: empty or longer than "
                  f"{MAX_NAME_CHARS} characters; prompt longer than {b.MAX_PROMPT_CHARS} characters; a clientType "
                  "that is not a short identifier.",
                  SHAPE, SCOPE_REFUSAL.format(tool="brain_start_session")),
    )


def create_project(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_create_project", title="Create a project", action=ACTION, annotations=IDEMPOTENT_WRITE,
        call=call,
        description="Create a personal project (in your home, visible to you alone) before work on a new "
                    "codebase or client. Idempotent on the name, case-insensitive: the same name returns the "
                    "existing project with created false. framework and language are kept only on creation. "
                    "Call brain_list_projects first to avoid duplicates.",
        input_schema=s.tool_input({
            "name": s.string("The project's name.", minLength=1, maxLength=MAX_NAME_CHARS),
            "framework": s.string("Framework.", maxLength=MAX_LABEL_CHARS, examples=["react", "nextjs", "vue"]),
            "language": s.string("Language.", maxLength=MAX_LABEL_CHARS, examples=["typescript", "python"]),
        }, ["name"]),
        output_schema=s.tool_output({
            "projectId": s.string("The project's id, ~<handle>/<slug>."),
            "slug": s.string("Its slug, unique in your home."),
            "created": s.boolean("False when a project of that name existed already."),
        }, ["projectId", "slug", "created"]),
        refusals=("Error in brain_create_project: FORBIDDEN_PROJECT: the token is project-scoped: the token IS "
                  "the project. Use a user-scoped token.",
                  "Error in brain_create_project: VALIDATION: name: missing, empty (after trimming) or longer "
                  f"than {MAX_NAME_CHARS} characters; framework or language longer than {MAX_LABEL_CHARS}.",
                  SHAPE, SCOPE_REFUSAL.format(tool="brain_create_project")),
    )


def list_projects(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_list_projects", title="List projects", action=ACTION, annotations=READ, call=call,
        description="Every project you can file sessions under: your personal projects first (isOwn true), then "
                    "the shared projects you can see. A project-scoped token sees its project only. Call it "
                    "before brain_create_project to avoid duplicates. offset and limit list them a page at a time.",
        input_schema=s.tool_input({
            "offset": s.integer("Projects to skip, in the list's order (owned first): a page's note names the "
                                "next.", minimum=0, default=0),
            "limit": s.integer("At most this many projects (fewer when more would pass the answer's bound).",
                               minimum=1, maximum=b.PROJECTS_LIMIT_MAX),
        }, []),
        output_schema=s.tool_output({
            "projects": s.array(PROJECT, "Owned first."),
            "truncated": s.boolean("Only when projects are left out: true. Without offset and limit, some of your "
                                   "personal projects were left out to keep the answer within its bound (or, when "
                                   "the shared projects alone pass it, this is the first page); with them, more "
                                   "projects follow this page."),
            "note": s.string("Only when projects are left out: how many, and the offset that lists them."),
        }, ["projects"]),
        cut_ways={"projects": lambda _answer: ("brain_list_projects with offset (from 0) and limit lists every "
                                               "project a page at a time, each page's note naming the next offset.")},
        refusals=(SCOPE_REFUSAL.format(tool="brain_list_projects"),),
        example={},
    )


def get_active_project(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_get_active_project", title="Get the active project", action=ACTION, annotations=READ,
        call=call,
        description="The project brain_start_session would use now without projectId or projectName: the "
                    "token's project (source token_scope) or the first of your projects you may write (source "
                    "first_project_fallback; a project you may only read is never chosen); null when you have "
                    "none yet: brain_start_session then makes your personal \"Default\" project.",
        input_schema=s.tool_input({}, []),
        output_schema=s.tool_output({"project": s.nullable(ACTIVE_PROJECT)}, ["project"]),
        refusals=(SCOPE_REFUSAL.format(tool="brain_get_active_project"),),
        example={},
    )


def retrieve_knowledge(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_retrieve_knowledge", title="Retrieve knowledge", action=ACTION, annotations=READ,
        call=call,
        description="Call BEFORE generating code: the knowledge that fits the prompt (rules, reflexes, recipes, "
                    "heuristics; never action items), ranked by text relevance, confidence and recency, and a "
                    "ready injection to add to the context. Pass context.sessionId to record the injected items "
                    "against the session, then report the ones you used as knowledgeUsed at the close. " + DATA,
        input_schema=s.tool_input({
            "prompt": s.string("What you are about to do.", minLength=1),
            "context": s.obj({"sessionId": s.string("Your open session.")}, [], closed=False,
                             description="Optional context; sessionId records the injection (a closed session "
                                         "records nothing, and the note says so)."),
            "limit": s.integer("Items in the bundle.", default=b.RETRIEVE_LIMIT_DEFAULT, minimum=1,
                               maximum=b.RETRIEVE_LIMIT_MAX),
            "maxTokens": s.integer("Budget of the injection in tokens (estimated offline).",
                                   default=b.INJECTION_TOKENS_DEFAULT, minimum=b.INJECTION_TOKENS_MIN,
                                   maximum=b.INJECTION_TOKENS_MAX),
        }, ["prompt"]),
        output_schema=s.tool_output({
            "bundle": s.obj({"items": s.array(ITEM, "Best first."),
                             "injectedIds": s.array(s.string("Knowledge id."), "The items in the injection: "
                                                    "pass the ones you used as knowledgeUsed."),
                             "injectionTokens": s.integer("Tokens of the injection.")}),
            "injection": INJECTION,
        }, ["bundle", "injection"]),
        cut_ways={"injection": lambda _answer: (
            "brain_retrieve_knowledge again with a smaller maxTokens makes an injection that fits whole (and a "
            "smaller limit a smaller bundle); each of its lines is an item of bundle.items, named by its [id].")},
        refusals=(NOT_YOURS.format(tool="brain_retrieve_knowledge"),
                  "An empty or blank prompt, or one with no letters or digits, a limit outside 1 to "
                  f"{b.RETRIEVE_LIMIT_MAX} or a maxTokens outside {b.INJECTION_TOKENS_MIN} to "
                  f"{b.INJECTION_TOKENS_MAX} is MCP error -32602 naming the argument.",
                  SCOPE_REFUSAL.format(tool="brain_retrieve_knowledge")),
    )


def report_session_outcome(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_report_session_outcome", title="Report the session's outcome", action=ACTION,
        annotations=WRITE, call=call,
        description="Call AFTER the person accepts or rejects the work: closes the session with its outcome. "
                    "knowledgeUsed (ids from relevantKnowledge or the bundle) moves the confidence of your own "
                    f"items; learnings (0 to {b.LEARNINGS_MAX} durable rules you distilled) become knowledge; "
                    "resolvedActionItemIds retires done to-dos. Without learnings, or with learnings that could "
                    "not be kept, the answer carries a hint: act on it with brain_teach_knowledge.",
        input_schema=s.tool_input({
            "sessionId": s.string("From brain_start_session.", minLength=1),
            "success": s.boolean("True when the person accepted the work."),
            "userFeedback": s.string("The person's vote.", enum=list(b.FEEDBACK)),
            "knowledgeUsed": s.array(s.string("Knowledge id."), f"Items you applied (at most {b.USED_IDS_MAX})."),
            "learnings": s.array(LEARNING, f"0 to {b.LEARNINGS_MAX} durable rules from this session; beyond "
                                           f"{b.LEARNINGS_MAX} only the first {b.LEARNINGS_MAX} "
                                            "are kept; an invalid one is dropped and counted, never blocking the "
                                            "close."),
            "resolvedActionItemIds": s.array(s.string("Knowledge id."), "Action items done or obsolete (at most "
                                             f"{b.RESOLVED_IDS_MAX}); only action items of the session's project "
                                             "are retired."),
            "summary": s.string("What was done, in a few sentences (searchable later)."),
        }, ["sessionId", "success"]),
        output_schema=s.tool_output({
            "sqs": {"type": "number", "description": "Session quality score 0..1: 0.50 outcome + 0.20 feedback "
                    "+ 0.15 reuse + 0.15 capture (docs/brain.md)."},
            "queued": s.boolean("True when the close queued a kea.extract job: KEA refines the learnings given "
                                "(at once, in this call) or mines the session for rules (in the background)."),
            "confidenceUpdates": s.integer("Your own knowledgeUsed items whose confidence and counts moved."),
            "learnings": s.record(record_model(LearningsReport), s.View({
                "submitted": "Items given.", "kept": f"Valid ones among the first {b.LEARNINGS_MAX}.",
                "dropped": f"Invalid ones among the first {b.LEARNINGS_MAX}.",
                "truncated": f"Items beyond the first {b.LEARNINGS_MAX}.",
                "captured": s.Shown("New knowledge (tag close_capture).", items="Knowledge id."),
                "deduplicated": "Valid ones you already had (the same rule, or one of the same meaning).",
                "reinforced": s.Shown("Ids of your rules of the same meaning, reinforced instead of copied.",
                                      items="A knowledge id."),
                "rejected": "Valid ones KEA judged not durable (\"for now\", \"this time\") or not specific: "
                            "not kept as knowledge.",
                "unwritable": "Kept by KEA, but you may no longer write the session's project (a read grant, or "
                              "the project gone from yours): not kept as knowledge; ask for a write grant, or "
                              "teach it in a project of yours."})),
            "resolvedActionItems": s.integer("Action items retired (present when resolvedActionItemIds was "
                                             "given)."),
            "hint": s.string("The ask-back nudge, present when no learnings were given: strong after a failure "
                             "or a down vote, gentle otherwise; and present when learnings could not be kept "
                             "(learnings.unwritable): how many, why, and how to teach them where you may write."),
        }, ["sqs", "queued", "confidenceUpdates", "learnings"]),
        refusals=(NOT_YOURS.format(tool="brain_report_session_outcome"),
                  "Error in brain_report_session_outcome: FORBIDDEN_PROJECT: your session belongs to another "
                  "project than this project-scoped token's.",
                  "Error in brain_report_session_outcome: VALIDATION: sessionId: the session was closed already "
                  f"(start a new one); more than {b.RESOLVED_IDS_MAX} resolvedActionItemIds or {b.USED_IDS_MAX} "
                  "knowledgeUsed ids.",
                  DEEP.format(argument="learnings"), SHAPE,
                  SCOPE_REFUSAL.format(tool="brain_report_session_outcome")),
    )


def teach_knowledge(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_teach_knowledge", title="Teach knowledge", action=ACTION, annotations=WRITE, call=call,
        description="When the person says \"remember …\": keep a rule (trigger, rule, rationale) in the active "
                    "project, or projectId. It is also a memory, so recall finds it. type action_item records a "
                    "meeting to-do (tags action-item or open-question, for:<assignee email>, blocker); "
                    "supersedesKnowledgeId retires your earlier item in the same project (otherwise ignored).",
        input_schema=s.tool_input({
            "trigger": s.string("When it applies, e.g. \"when writing SQL migrations\"."),
            "rule": s.string("What to do.", minLength=1),
            "rationale": s.string("Why."),
            "type": s.string("Kind of knowledge; default heuristic.", enum=list(KNOWLEDGE_KINDS)),
            "source": s.string("Where it came from; default user_teach."),
            "tags": s.array(s.string("A tag."), f"At most {b.MAX_TAGS} tags."),
            "projectId": s.string("A project you may write; default: the active project (your personal "
                                  "\"Default\", made on first use, when it is null)."),
            "supersedesKnowledgeId": s.string("Your earlier item, in the same project, that this replaces."),
        }, ["rule"]),
        output_schema=s.tool_output({
            "id": s.string("Knowledge id."),
            "confidence": {"type": "number", "description": "1.0 for a newly taught item."},
            "projectId": s.string("The project it was taught in."),
            "created": s.boolean("False when this item was there already: the same text, or (sameMeaning) one of "
                                 "your rules of the same meaning, reinforced instead (its id is returned)."),
            "sameMeaning": {"type": "number", "description": "Present when a rule of the same meaning was "
                                                             "reinforced: the similarity (0.80 or more)."},
        }, ["id", "confidence", "projectId", "created"]),
        refusals=(OUTSIDE.format(tool="brain_teach_knowledge"),
                  "Error in brain_teach_knowledge: FORBIDDEN_PROJECT: you may read the project but not write to "
                  "it: ask for a write grant or teach into your own project.",
                  "Error in brain_teach_knowledge: VALIDATION: rule empty, a field too long, an unknown type or "
                  f"more than {b.MAX_TAGS} tags.", SHAPE, SCOPE_REFUSAL.format(tool="brain_teach_knowledge")),
    )


def get_user_style(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_get_user_style", title="Get the user's style", action=ACTION, annotations=READ, call=call,
        description="When scaffolding new files (and first, to check the connection): the person's peer card "
                    "(hard rules, frameworks, languages) and their reflexes, most confident first. Reflexes past "
                    "the answer's bound come a page at a time: offset lists the next. " + DATA,
        input_schema=s.tool_input({
            "offset": s.integer("Reflexes to skip, most confident first: a page's note names the next.", minimum=0,
                                default=0),
        }, []),
        output_schema=s.tool_output({
            "peerCard": s.obj({
                "email": s.string("Who."), "handle": s.string("Their handle."),
                "hardRules": s.array(s.obj({"id": s.string("Knowledge id."), "kind": s.string("principle or "
                                     "anti_principle."), "rule": s.string("The rule."),
                                     "confidence": {"type": "number", "description": "Confidence."}}),
                                     "Principles and anti-principles: hard overrides."),
                "frameworks": s.array(s.string("Framework."), "From recent sessions and projects."),
                "languages": s.array(s.string("Language."), "From projects."),
                "projects": s.integer("Projects in scope."),
                "recentSessions": s.integer(f"Of the last {b.STYLE_SESSIONS}."),
            }),
            "reflexes": s.array(ITEM, f"Up to {b.STYLE_REFLEXES}, most confident first (from offset)."),
            "truncated": s.boolean("Only when more reflexes follow this page: true."),
            "note": s.string("Only when more reflexes follow: the offset that lists them."),
        }, ["peerCard", "reflexes"]),
        cut_ways={"reflexes": lambda _answer: ("brain_get_user_style with offset (from 0) lists the reflexes a page "
                                               "at a time, each page's note naming the next offset.")},
        refusals=(SCOPE_REFUSAL.format(tool="brain_get_user_style"),),
    )


def ask_oracle(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_ask_oracle", title="Ask the oracle", action=ACTION, annotations=READ, call=call,
        description="\"How did I solve X?\": an answer assembled from your best matching sessions, knowledge "
                    "and (with knowledge:read) documents; every sentence ends with [n], its citation (id, kind, "
                    "date, snippet). No language model is involved. " + DATA,
        input_schema=s.tool_input({"question": s.string("The question, in words.", minLength=1)}, ["question"]),
        output_schema=s.tool_output({
            "answer": s.string("Cited sentences, one per source. " + DATA),
            "citations": s.array(s.obj({"n": s.integer("The mark [n] in the answer."),
                                        "id": s.string("Session id, knowledge id or document location#Lm-n."),
                                        "kind": s.string("session, knowledge or document."),
                                        "date": s.string("YYYY-MM-DD."), "title": s.string("Title."),
                                        "snippet": s.string("The source's words."),
                                        "matched": MATCHED, "similarity": SIMILARITY})),
            "searched": s.array(s.string("A kind of source."), "documents only with knowledge:read."),
        }, ["answer", "citations", "searched"]),
        cut_ways={"answer": lambda _answer: ORACLE_SOURCES, "citations": lambda _answer: ORACLE_SOURCES},
        refusals=("A question with no letters or digits is MCP error -32602 naming question.",
                  SCOPE_REFUSAL.format(tool="brain_ask_oracle")),
        example={"question": "how did we handle the CRM migration?"},
    )


def log_event(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_log_event", title="Log a session event", action=ACTION, annotations=WRITE, call=call,
        description="During the session, once per event (a file edit, a test run, a decision): keeps it with "
                    "the session, searchable later. A closed session accepts no more events (accepted false).",
        input_schema=s.tool_input({
            "sessionId": s.string("From brain_start_session.", minLength=1),
            "eventType": s.string("A short identifier, e.g. file_edit, test_run, decision. Left out (as the "
                                  "install-ping logs its payload alone), the event's type is "
                                  f"\"{b.EVENT_TYPE_DEFAULT}\".", minLength=1, maxLength=b.IDENTIFIER_MAX_CHARS),
            "payload": s.obj({}, [], closed=False, description=f"Any JSON object, at most "
                             f"{b.PAYLOAD_MAX_BYTES} bytes, nested at most {JSON_DEPTH_MAX} levels deep."),
        }, ["sessionId"]),
        output_schema=s.tool_output({
            "id": s.nullable(s.string("The event's id; null when not accepted.")),
            "accepted": s.boolean(f"False for a closed session or one holding {b.EVENTS_PER_SESSION_MAX} events."),
            "reason": s.string("Why it was not accepted."),
        }, ["id", "accepted"]),
        refusals=(NOT_YOURS.format(tool="brain_log_event"),
                  "Error in brain_log_event: VALIDATION: eventType not a short identifier, or a payload over "
                  f"{b.PAYLOAD_MAX_BYTES} bytes.", DEEP.format(argument="payload"), SHAPE,
                  SCOPE_REFUSAL.format(tool="brain_log_event")),
    )


def find_skill(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_find_skill", title="Find a skill", action=ACTION, annotations=READ, call=call,
        description="When the person asks for a complete recipe: skills are recipes matured by successful use "
                    f"(stage knowledge: {KNOWLEDGE_MIN_SUCCESSES}+ successful uses at a "
                    f"{KNOWLEDGE_MIN_RATE:.0%} success rate; wisdom: {WISDOM_MIN_SUCCESSES}+ at "
                    f"{WISDOM_MIN_RATE:.0%} and confidence {WISDOM_MIN_CONFIDENCE}). With a query, ranked like "
                    "brain_retrieve_knowledge; without, by "
                    "confidence. " + DATA,
        input_schema=s.tool_input({
            "query": s.string("What the recipe is for."),
            "limit": s.integer("Skills to return.", default=b.SKILL_LIMIT_DEFAULT, minimum=1,
                               maximum=b.SKILL_LIMIT_MAX),
        }, []),
        output_schema=s.tool_output({"skills": s.array(ITEM, "Best first.")}, ["skills"]),
        refusals=("A query given empty or blank (leave it out to list the skills by confidence), or with no "
                  f"letters or digits, or a limit outside 1 to {b.SKILL_LIMIT_MAX} is MCP error -32602 naming the "
                  "argument.", SCOPE_REFUSAL.format(tool="brain_find_skill")),
        example={"query": "release checklist"},
    )


def session_search(call: Call) -> ToolSpec:
    return ToolSpec(
        name="brain_session_search", title="Search sessions", action=ACTION, annotations=READ, call=call,
        cut_advice="The sessions shown come first. To reach the others, search with a narrower query or fewer days.",
        description="\"What did I do last week?\": your sessions whose prompt, events, outcome or learnings "
                    "share a word (English stem, or prefix of 3+ letters) with the query, by relevance and "
                    "recency (full-text search: FTS5 on SQLite, tsvector on PostgreSQL). A period the query names "
                    "(today, yesterday, this week, last week, the last N days, last month) is the window; a query "
                    "that asks only when lists that window's sessions, newest first. " + DATA,
        input_schema=s.tool_input({
            "query": s.string("Words to look for, a period (\"last week\"), or both (\"billing bug last week\").",
                              minLength=1),
            "limit": s.integer("Sessions to return.", default=b.SEARCH_LIMIT_DEFAULT, minimum=1,
                               maximum=b.SEARCH_LIMIT_MAX),
            "days": s.integer("Only sessions started in the last N days (instead of the period the query names).",
                              minimum=1, maximum=b.SEARCH_DAYS_MAX),
        }, ["query"]),
        output_schema=s.tool_output({"sessions": s.array(
            {**SESSION, "properties": {**SESSION["properties"],
                                        "score": {"type": "number", "description": "0.6 relevance + 0.4 "
                                                  f"recency (half-life {b.SESSION_HALF_LIFE_DAYS:g} days)."},
                                        "matched": MATCHED, "similarity": SIMILARITY}},
            "Best first.")},
            ["sessions"]),
        refusals=("A query with no letters or digits, a limit outside 1 to "
                  f"{b.SEARCH_LIMIT_MAX} or days outside 1 to {b.SEARCH_DAYS_MAX} is MCP error -32602 naming the "
                  "argument.", SCOPE_REFUSAL.format(tool="brain_session_search")),
    )
