"""The composition root: settings, store and every service, built once per command or server process.

Doors (MCP, the HTTP app, the CLI) receive a Runtime and call its services; they build nothing. A new
service is built here, once, from the store and the services it needs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from notewell.access.administration import Administration
from notewell.access.audit import AuditTrail
from notewell.access.authentication import Authentication
from notewell.access.authorization import Authorization
from notewell.access.own_tokens import OwnTokenService
from notewell.access.sign_in import SignInService
from notewell.config import Settings, load_settings
from notewell.errors import NotewellError
from notewell.search.engine import SearchEngine
from notewell.services.autoskill import AUTOSKILL
from notewell.services.backups import BackupService
from notewell.services.brain import BrainService
from notewell.services.brain_evolution import EVOLUTION
from notewell.services.brain_oracle import OracleService
from notewell.services.daily import DailySchedule
from notewell.services.health import HealthService
from notewell.services.idempotency import IdempotencyService
from notewell.services.indexing import IndexingService
from notewell.services.jobs import LEASE_SECONDS, Clock, JobRunner, JobService, utc_now
from notewell.services.kea import EXTRACT
from notewell.services.kea_cross import CROSS
from notewell.services.kea_llm import choose_extractor
from notewell.services.knowledge import KnowledgeService
from notewell.services.link_context import LinkContextService
from notewell.services.links import LinkService
from notewell.services.meaning import MeaningService
from notewell.services.memory import MemoryService
from notewell.services.note_journal import NoteJournalService
from notewell.services.note_vault import NoteVault
from notewell.services.note_writing import NoteWritingService
from notewell.services.portability import PortabilityService
from notewell.services.servers import ServerRegistry
from notewell.store import Store, open_store
from notewell.store.leadership import open_leadership
from notewell.store.new_store import NewStore, before_opening
from notewell.store.note_lease import open_note_lease


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    store: Store
    engine: SearchEngine
    authentication: Authentication  # bearer token -> Principal
    authorization: Authorization  # every "may p do this" (notewell.access.policy)
    administration: Administration  # users, projects, grants, tokens, the audit log
    audit: AuditTrail
    own_tokens: OwnTokenService  # each person's own tokens
    sign_in: SignInService  # passwords, sign-in links, browser sessions
    knowledge: KnowledgeService
    links: LinkService  # a document's links and backlinks
    link_context: LinkContextService  # buildContext: what the links reach from a start, packed into a budget
    memory: MemoryService
    meaning: MeaningService  # the embedding model, query vectors and the embedding queue's runner
    brain: BrainService  # coding sessions and taught knowledge
    oracle: OracleService  # "how did I solve X?" from sessions, knowledge and documents
    idempotency: IdempotencyService  # answers kept for Idempotency-Key retries (REST)
    indexing: IndexingService
    notes: NoteWritingService  # agents and people writing notes into the vault
    journal: NoteJournalService  # the journal of those writes, and undo
    servers: ServerRegistry  # the notewell serve processes running on this store, and where
    portability: PortabilityService  # export, import and migrate the whole store
    backups: BackupService  # consistent copies of the running store, and their restore
    health: HealthService  # is the store reachable, and how much it holds (/readyz, /metrics)
    jobs: JobService  # the learning loop's job queue, for operators (notewell jobs)

    @property
    def store_url(self) -> str:
        """Where the store is, as ``--db`` takes it (a stdio client's set-up names it)."""
        return self.store.url

    def job_runner(self, clock: Clock = utc_now, lease_seconds: float = LEASE_SECONDS) -> JobRunner:
        """A runner of the job queue (not started), elected with the store's job lease."""
        kinds = {EXTRACT: self.brain.kea_kind(), CROSS: self.brain.cross_kind(), EVOLUTION: self.brain.evolution_kind(),
                 AUTOSKILL: self.brain.autoskill_kind()}
        return JobRunner(self.store, kinds, open_leadership(self.settings.db, "jobs"), self.jobs.wake, clock,
                         lease_seconds, on_idle=DailySchedule(self.store, clock, (CROSS, EVOLUTION)))

    def close(self) -> None:
        self.authentication.tool_calls.flush()
        self.meaning.close()
        self.store.close()


def build_runtime(settings: Settings, store: Store) -> Runtime:
    """Every service over ``store``, each built once."""
    engine = SearchEngine(store.documents)
    authorization = Authorization(store.identity)
    audit = AuditTrail(store.audit)
    administration = Administration(store.identity, authorization, audit, settings.vault)
    meaning = MeaningService(store, enabled=settings.semantic)
    job_work = threading.Event()  # a job queued in this process: its runner looks at once
    brain = BrainService(store, authorization, audit, meaning, job_work)
    brain.extractor = choose_extractor(settings.kea, store.kea_budget)  # KEA_MODEL: deterministic unless set
    indexing = IndexingService(settings, store, administration)
    note_vault = NoteVault(settings, store.journal, indexing, audit, open_note_lease(settings.db), store.identity)
    knowledge = KnowledgeService(store, authorization, engine)
    links = LinkService(store, authorization)
    notes = NoteWritingService(note_vault, authorization, links)
    memory = MemoryService(store, authorization, audit, links, engine, meaning)
    servers = ServerRegistry(store.servers)
    return Runtime(
        settings=settings, store=store, engine=engine,
        authentication=Authentication(store.identity),
        authorization=authorization,
        administration=administration,
        audit=audit,
        own_tokens=OwnTokenService(store.identity, authorization, audit),
        sign_in=SignInService(store, authorization, administration, audit),
        knowledge=knowledge,
        links=links,
        link_context=LinkContextService(store, authorization, links, knowledge, memory),
        memory=memory,
        meaning=meaning,
        brain=brain,
        oracle=OracleService(brain, store.documents, engine, authorization, links),
        idempotency=IdempotencyService(store),
        indexing=indexing,
        notes=notes,
        journal=NoteJournalService(note_vault, authorization, notes),
        servers=servers,
        portability=PortabilityService(store, authorization),
        backups=BackupService(store, authorization, servers, lambda role: open_leadership(settings.db, role)),
        health=HealthService(store),
        jobs=JobService(store, authorization, job_work),
    )


def open_runtime(vault: str | None = None, db: str | None = None, *, create: bool = True) -> Runtime:
    """``create=False``: a missing SQLite index is an error (commands that only read, such as search)."""
    settings = load_settings(vault, db)
    return build_runtime(settings, open_store(settings.db, create=create))


def store_place(vault: str | None = None, db: str | None = None) -> NewStore | None:
    """The place of the store ``vault`` and ``db`` name, as it is before a command opens it, so that a command
    that fills a new store and fails can take away what it made (store/new_store.py); None when the settings do
    not load (opening reports why)."""
    try:
        return before_opening(load_settings(vault, db).db)
    except NotewellError:
        return None
