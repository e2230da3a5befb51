"""What an operator watches, in the Prometheus text format (docs/operations.md, "Metrics and health").

The families are fed by the structured log lines every door already writes (``op=mcp.tool``,
``op=rest.request``, ``op=mcp.session.open`` …, notewell.mcp.log): each line is also an observation here,
so a metric and its log line never disagree and no door counts twice. The store's sizes are read when
the endpoint is scraped (``render``'s ``sizes``). One registry per process, never prometheus_client's
global one; labels take only bounded values (tool names, route templates, outcomes), never a path,
query or token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from notewell.timestamps import parse_iso

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LABEL_MAX_CHARS = 100

# no *_created series: counters are per process, and a restart shows as their reset
disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY = CollectorRegistry(auto_describe=True)
TOOL_CALLS = Counter("notewell_tool_calls", "MCP tool calls answered, by door, tool and outcome (ok, error) and "
                     "the error's reason (unknown_tool, scope, invalid_args, refused, unavailable, internal).",
                     ["door", "tool", "outcome", "reason"], registry=REGISTRY)
TOOL_SECONDS = Histogram("notewell_tool_call_seconds", "How long MCP tool calls took, by door and tool.",
                         ["door", "tool"], buckets=SECONDS, registry=REGISTRY)
REQUESTS = Counter("notewell_requests", "HTTP requests answered, by door, route template and status code.",
                   ["door", "route", "status"], registry=REGISTRY)
REQUEST_SECONDS = Histogram("notewell_request_seconds", "How long HTTP requests took, by door and route template.",
                            ["door", "route"], buckets=SECONDS, registry=REGISTRY)
MCP_SESSIONS = Gauge("notewell_mcp_sessions", "Live MCP sessions (Streamable HTTP, handshake era) on this server.",
                     registry=REGISTRY)
UNAUTHENTICATED = Counter("notewell_unauthenticated_requests", "Requests refused for a missing or unknown token, "
                          "by door.", ["door"], registry=REGISTRY)
STORE_ERRORS = Counter("notewell_store_errors", "Store reads that failed (a readiness probe or a scrape's sizes).",
                       registry=REGISTRY)
WATCH_LEADING = Gauge("notewell_watch_leading", "1 while this server holds the store's writer lease and watches the "
                      "vault, else 0 (it follows, or does not watch).", registry=REGISTRY)
WATCH_SYNCS = Counter("notewell_watch_syncs", "Syncs of the vault's changes by this server's watcher, by whether they "
                      "changed the store.", ["changed"], registry=REGISTRY)
WATCH_SYNC_SECONDS = Histogram("notewell_watch_sync_seconds", "How long the watcher's syncs took.", buckets=SECONDS,
                               registry=REGISTRY)
WATCH_LAST_SYNC = Gauge("notewell_watch_last_sync_timestamp_seconds", "When the store was last in line with the "
                        "vault (Unix time): the end of the watcher's last sync, or its last tick (each second) with "
                        "nothing waiting to sync; time() minus it is how far behind the vault the store may be.",
                        registry=REGISTRY)
WATCH_FAILURES = Counter("notewell_watch_sync_failures", "Watcher syncs that failed and will be tried again.",
                         registry=REGISTRY)
_SESSION_OPS = ("mcp.session.open", "mcp.session.close", "mcp.session.orphan", "mcp.session.evicted")


@dataclass(frozen=True)
class Sizes:
    """What the store holds, read at a scrape (services.health)."""

    rows: Mapping[str, int]  # per carried table
    documents: int
    text_bytes: int  # the documents' text, compressed
    index_bytes: int  # their search index
    leader: Mapping[str, str] | None = None  # the writer lease's holder: server_id, host, pid, url, since
    queues: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # queue -> state -> items
    oldest_due: Mapping[str, str] = field(default_factory=dict)  # queue -> its oldest waiting item's due time


def _label(value: object) -> str:
    return str(value if value is not None else "-")[:LABEL_MAX_CHARS]


def observe(op: str, fields: Mapping[str, object]) -> None:
    """Count one structured log line (``op`` and its fields) into the families it feeds."""
    seconds = _seconds(fields.get("durMs"))
    if op == "mcp.tool":
        tool = _label(fields.get("tool"))
        TOOL_CALLS.labels("mcp", tool, _label(fields.get("outcome")), _label(fields.get("reason"))).inc()
        if seconds is not None:
            TOOL_SECONDS.labels("mcp", tool).observe(seconds)
    elif op == "rest.request":
        route = _label(fields.get("route"))
        REQUESTS.labels("rest", route, _label(fields.get("status"))).inc()
        if seconds is not None:
            REQUEST_SECONDS.labels("rest", route).observe(seconds)
    elif op in _SESSION_OPS and isinstance(fields.get("total"), int):
        MCP_SESSIONS.set(float(fields["total"]))  # type: ignore[arg-type]
    elif op == "mcp.unauth":
        UNAUTHENTICATED.labels("mcp").inc()


def watch_in_line() -> None:
    """The leading watcher found nothing waiting to sync."""
    WATCH_LAST_SYNC.set_to_current_time()


def watch_synced(seconds: float, changed: bool) -> None:
    """One sync of the watcher done."""
    WATCH_SYNCS.labels("yes" if changed else "no").inc()
    WATCH_SYNC_SECONDS.observe(seconds)
    WATCH_LAST_SYNC.set_to_current_time()


def _seconds(ms: object) -> float | None:
    """A line's ``durMs`` (a number, or its text as the MCP lines write it) in seconds."""
    try:
        return float(ms) / 1000 if isinstance(ms, int | float | str) else None
    except ValueError:
        return None


class _Sizes(Collector):
    """The store's sizes, read at each scrape; a failed read counts as a store error and leaves them out."""

    def __init__(self, sizes: Callable[[], Sizes]) -> None:
        self.sizes = sizes

    def collect(self) -> Iterator[Metric]:
        try:
            found = self.sizes()
        except Exception:  # reported as a metric: a scrape must answer while the store is down
            STORE_ERRORS.inc()
            return
        rows = GaugeMetricFamily("notewell_store_rows", "Rows per carried table of the store (docs/operations.md, "
                                 "'Export and import'), read at the scrape.", labels=["table"])
        for table, count in sorted(found.rows.items()):
            rows.add_metric([table], float(count))
        yield rows
        yield GaugeMetricFamily("notewell_index_documents", "Documents indexed from the vault.",
                                value=float(found.documents))
        index = GaugeMetricFamily("notewell_index_bytes", "Bytes the document index holds: the documents' "
                                  "compressed text and their search index.", labels=["part"])
        index.add_metric(["text"], float(found.text_bytes))
        index.add_metric(["index"], float(found.index_bytes))
        yield index
        queued = GaugeMetricFamily("notewell_queue_items", "Items waiting in the store's queues, by queue (embedding: "
                                   "vectors to make; jobs: the learning loop's) and state.", labels=["queue", "state"])
        for queue, states in sorted(found.queues.items()):
            for state, count in sorted(states.items()):
                queued.add_metric([queue, state], float(count))
        yield queued
        due = GaugeMetricFamily("notewell_queue_oldest_due_timestamp_seconds", "When the oldest item waiting in the "
                                "queue was due (Unix time): time() minus this is how far the queue lags.",
                                labels=["queue"])
        for queue, at in sorted(found.oldest_due.items()):
            due.add_metric([queue], parse_iso(at).timestamp())
        yield due
        if found.leader is not None:
            leader = GaugeMetricFamily("notewell_writer_lease_since_timestamp_seconds", "When the server these labels "
                                       "name took the store's writer lease (Unix time), as the store records it.",
                                       labels=["server_id", "host", "pid", "url"])
            labels = [found.leader[k][:LABEL_MAX_CHARS] for k in ("server_id", "host", "pid", "url")]
            leader.add_metric(labels, parse_iso(found.leader["since"]).timestamp())
            yield leader


def render(sizes: Callable[[], Sizes]) -> bytes:
    """Every family in the text format, the store's sizes read now through ``sizes``."""
    scrape = CollectorRegistry(auto_describe=False)
    scrape.register(_Sizes(sizes))
    return generate_latest(REGISTRY) + generate_latest(scrape)
