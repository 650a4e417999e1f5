"""``GET /metrics``: this process's counters in the Prometheus text format (docs/deployment.md, "Metrics").

The request path pays one dict increment and one bucket increment per request (``ProcessMetrics.record``,
called once a response is over): no locks, no ``prometheus_client`` objects. The families are built only
when Prometheus scrapes, by a custom collector over those plain numbers and the registry's own state
(sessions, journal bytes), on a collector registry private to the app (no global state).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from llmts.runtime import SessionRegistry
from llmts.runtime.journal import JournalRecord

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["LATENCY_BUCKETS", "METRICS_CONTENT_TYPE", "MetricsEndpoint", "ProcessMetrics"]

# Upper bounds (seconds) of the request duration histogram: arrival to the last byte written.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class ProcessMetrics:
    """Plain per-process counters: requests by (provider, operation, status), requests no session took by
    (provider, status), stream faults applied by (provider, mode), and the request duration histogram as
    a small int array."""

    __slots__ = ("buckets", "duration_sum", "faults", "rejected", "requests")

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = {}
        self.rejected: dict[tuple[str, int], int] = {}
        self.faults: dict[tuple[str, str], int] = {}
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)  # the last one is +Inf
        self.duration_sum = 0.0

    def record(self, entry: JournalRecord) -> None:
        """Count one finished provider request (called once per journaled request, after it settled)."""
        key = (entry.provider, entry.operation or "unknown", entry.status or 0)
        requests = self.requests
        requests[key] = requests.get(key, 0) + 1
        if entry.stream_delivery_applied and (plan := entry.stream_delivery) is not None:
            fault = (entry.provider, str(plan.mode))
            self.faults[fault] = self.faults.get(fault, 0) + 1
        completed = entry.completed_monotonic_seconds
        if completed is not None:
            seconds = completed - entry.started_monotonic_seconds
            self.buckets[bisect_left(LATENCY_BUCKETS, seconds)] += 1
            self.duration_sum += seconds

    def reject(self, provider: str, status: int) -> None:
        """Count a provider request answered with an error before any session's journal took it."""
        key = (provider, status)
        self.rejected[key] = self.rejected.get(key, 0) + 1


class _Collector:
    """Builds the families from ``ProcessMetrics`` and the session registry at scrape time."""

    def __init__(self, metrics: ProcessMetrics, registry: SessionRegistry) -> None:
        self._metrics = metrics
        self._registry = registry

    def describe(self) -> list[Any]:
        return []  # families are known only at scrape time; nothing to check at registration

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        metrics = self._metrics
        requests = CounterMetricFamily(
            "llmts_requests",
            "Provider requests answered, by provider namespace, operation and HTTP status",
            labels=["provider", "operation", "status"],
        )
        for (provider, operation, status), count in list(metrics.requests.items()):
            requests.add_metric([provider, operation, str(status)], count)
        yield requests
        rejected = CounterMetricFamily(
            "llmts_rejected_requests",
            "Provider requests answered with an error before a session took them (unknown route or "
            "session), by provider namespace and HTTP status",
            labels=["provider", "status"],
        )
        for (provider, status), count in list(metrics.rejected.items()):
            rejected.add_metric([provider, str(status)], count)
        yield rejected
        faults = CounterMetricFamily(
            "llmts_stream_faults_applied",
            "Responses whose scripted stream_delivery fault was applied, by provider and mode",
            labels=["provider", "mode"],
        )
        for (provider, mode), count in list(metrics.faults.items()):
            faults.add_metric([provider, mode], count)
        yield faults
        buckets, running = [], 0
        counts = list(metrics.buckets)
        for bound, count in zip((*LATENCY_BUCKETS, float("inf")), counts, strict=True):
            running += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), running))
        yield HistogramMetricFamily(
            "llmts_request_duration_seconds",
            "Provider request duration, from arrival to the last byte written",
            buckets=buckets,
            sum_value=metrics.duration_sum,
        )
        registry = self._registry
        memory = registry.memory
        yield GaugeMetricFamily(
            "llmts_sessions",
            "Sessions this process holds (the default session included)",
            len(registry.list()),
        )
        yield GaugeMetricFamily(
            "llmts_journal_bytes", "Bytes the request journals of all sessions retain", memory.journal_bytes
        )
        yield GaugeMetricFamily(
            "llmts_journal_entries",
            "Entries the request journals of all sessions hold",
            memory.journal_entries,
        )
        yield GaugeMetricFamily(
            "llmts_memory_used_bytes", "Accounted memory against the --max-memory budget", memory.used_bytes
        )
        yield GaugeMetricFamily("llmts_memory_max_bytes", "The --max-memory budget", memory.max_bytes)


def _collector_registry(metrics: ProcessMetrics, registry: SessionRegistry) -> CollectorRegistry:
    from prometheus_client import CollectorRegistry, ProcessCollector

    collectors = CollectorRegistry(auto_describe=False)
    collectors.register(_Collector(metrics, registry))  # type: ignore[arg-type]
    ProcessCollector(registry=collectors)  # process_cpu_seconds_total, resident memory, open fds
    return collectors


class MetricsEndpoint:
    """The app's scrape target: the counters, and a private collector registry built on first scrape."""

    __slots__ = ("_collectors", "_registry", "metrics")

    def __init__(self, registry: SessionRegistry) -> None:
        self.metrics = ProcessMetrics()
        self._registry = registry
        self._collectors: CollectorRegistry | None = None

    def page(self) -> bytes:
        """The exposition text."""
        from prometheus_client import generate_latest

        if self._collectors is None:
            self._collectors = _collector_registry(self.metrics, self._registry)
        return generate_latest(self._collectors)
