"""The failing-test loop of the pytest plugin (docs/pytest-plugin.md, "When a test fails").

Each test's session is labelled with the test's node id. When the test ends, the plugin knows its outcome
(the reports of its set-up and call phases, stashed by ``pytest_runtest_makereport``) and:

* adds a section titled ``llmts`` to a failed test's report: a compact table of the session's journal,
  the test's failed expectations, and where to look next (the dashboard URL of a kept session, or the
  trace file when the server goes with the run);
* writes the test's trace file (``--llmts-trace``): one self-contained HTML file that shows the
  dashboard's own views of the session, offline;
* keeps the session on the server (``--llmts-keep``), its ``test_outcome`` recorded, or deletes it.

Everything here talks to the server through the public control API, like any client.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llmts.client import SessionClient
from llmts.client.journal_table import journal_table
from llmts.client.trace_export import collect_trace_export, usage_or_none
from llmts.schema.verify import VerificationRequest, VerificationResult

__all__ = [
    "KEEP_CHOICES",
    "LABEL_CHARS",
    "TRACE_CHOICES",
    "TRACE_SUFFIX",
    "FailureLoop",
    "add_failure_options",
    "session_label",
    "trace_file_name",
]

KEEP_CHOICES = ("failed", "all", "none")
TRACE_CHOICES = ("off", "on", "retain-on-failure")
# Trace files end so; a run removes the ones an earlier run left in its trace directory (and nothing else).
TRACE_SUFFIX = ".trace.html"
# The server's limit on a session label (docs/server.md, "Labels and test outcomes").
LABEL_CHARS = 200
# The failure report shows the most recent requests; the trace file and the dashboard show them all.
_REPORT_ROWS = 20
_REPORT_WIDTH = 120
# What a trace keeps of the failure's own text (pytest's long representation).
_LONGREPR_CHARS = 20_000

_TRACE_PROPERTY = "llmts_trace"
_KEPT_PROPERTY = "llmts_dashboard"

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
_VERDICT = pytest.StashKey[VerificationResult]()
_EXPECTATION = pytest.StashKey[VerificationRequest]()


def add_failure_options(parser: pytest.Parser, group: Any) -> None:
    group.addoption(
        "--llmts-keep",
        choices=KEEP_CHOICES,
        default=None,
        help="whose sessions outlive their test on the server: failed (default), all or none; with "
        "--llmts-url the dashboard then shows them (ini llmts_keep)",
    )
    group.addoption(
        "--llmts-trace",
        choices=TRACE_CHOICES,
        default=None,
        help="write a self-contained HTML trace of each test's session: off, on (every test) or "
        "retain-on-failure (default: failed tests only) (ini llmts_trace)",
    )
    group.addoption(
        "--llmts-trace-dir",
        default=None,
        help="where trace files go (default: llmts-traces under the rootdir; ini llmts_trace_dir)",
    )
    parser.addini("llmts_keep", "--llmts-keep's default", default="failed")
    parser.addini("llmts_trace", "--llmts-trace's default", default="retain-on-failure")
    parser.addini("llmts_trace_dir", "--llmts-trace-dir's default", default="llmts-traces")


def session_label(nodeid: str) -> str:
    """A test's session label: its node id, cut to the server's 200 characters (a "…" marks a cut)."""
    return nodeid if len(nodeid) <= LABEL_CHARS else nodeid[: LABEL_CHARS - 1] + "…"


def trace_file_name(nodeid: str) -> str:
    """A file name for ``nodeid``'s trace, unique per node id and safe on every file system: the node id's
    readable characters (at most 120) and 8 hex digits of its hash."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", nodeid).strip("-.")[:120] or "test"
    digest = hashlib.sha256(nodeid.encode()).hexdigest()[:8]
    return f"{readable}-{digest}{TRACE_SUFFIX}"


def _choice(config: pytest.Config, option: str, ini: str, choices: tuple[str, ...]) -> str:
    value = config.getoption(option) or config.getini(ini)
    if value not in choices:
        raise pytest.UsageError(f"{ini} must be one of {', '.join(choices)}, not {value!r}")
    return str(value)


@dataclass(frozen=True)
class _Outcome:
    """How a test ended, from its set-up and call reports: ``passed``, ``failed``, ``skipped``, ``error``."""

    name: str
    report: pytest.TestReport | None

    @classmethod
    def of_failed(cls, report: pytest.TestReport) -> _Outcome:
        """A failed phase's outcome: a set-up error, or a failed test."""
        return cls("error" if report.when == "setup" else "failed", report)

    @property
    def failed(self) -> bool:
        return self.name in ("failed", "error")


class FailureLoop:
    """The run's choices (``--llmts-keep``, ``--llmts-trace``, ``--llmts-trace-dir``) and what they do."""

    def __init__(self, config: pytest.Config, *, attached: bool) -> None:
        self.keep = _choice(config, "--llmts-keep", "llmts_keep", KEEP_CHOICES)
        self.trace = _choice(config, "--llmts-trace", "llmts_trace", TRACE_CHOICES)
        directory = Path(config.getoption("--llmts-trace-dir") or config.getini("llmts_trace_dir"))
        self.trace_dir = directory if directory.is_absolute() else config.rootpath / directory
        # Sessions on a server the run started go when the run ends: the trace file is what stays.
        self.attached = attached

    def remove_stale_traces(self) -> None:
        """Called once per run (the controlling process): an earlier run's traces would pass for this
        run's. Only files named like traces go."""
        if self.trace_dir.is_dir():
            for path in self.trace_dir.glob(f"*{TRACE_SUFFIX}"):
                path.unlink(missing_ok=True)

    # --- what each phase leaves behind ---------------------------------------------------------------

    @staticmethod
    def record_report(item: pytest.Item, report: pytest.TestReport) -> None:
        item.stash.setdefault(_REPORTS, {})[report.when] = report

    @staticmethod
    def record_verdict(
        item: pytest.Item, expectation: VerificationRequest, verdict: VerificationResult
    ) -> None:
        """The test's own verification (``llmts_expect``): shown in its report and its trace."""
        item.stash[_EXPECTATION] = expectation
        item.stash[_VERDICT] = verdict

    @staticmethod
    def outcome(item: pytest.Item) -> _Outcome:
        reports = item.stash.get(_REPORTS, {})
        setup, call = reports.get("setup"), reports.get("call")
        if setup is not None and setup.failed:
            return _Outcome("error", setup)
        if setup is not None and setup.skipped:
            return _Outcome("skipped", setup)
        if call is None:
            return _Outcome("error", None)  # interrupted between the phases
        if call.skipped:  # an xfail as well: it went as expected
            return _Outcome("skipped", call)
        return _Outcome("failed" if call.failed else "passed", call)

    def keeps(self, outcome: _Outcome) -> bool:
        return self.keep == "all" or (self.keep == "failed" and outcome.failed)

    def traces(self, outcome: _Outcome) -> bool:
        return self.trace == "on" or (self.trace == "retain-on-failure" and outcome.failed)

    def trace_path(self, item: pytest.Item) -> Path:
        return self.trace_dir / trace_file_name(item.nodeid)

    # --- the failure report -------------------------------------------------------------------------

    def mark_report(self, item: pytest.Item, session: SessionClient, report: pytest.TestReport) -> None:
        """Tell the controlling process (xdist serializes ``user_properties``) where a failed test's trace
        and kept session are, for the run's summary."""
        outcome = _Outcome.of_failed(report)
        if self.traces(outcome):
            report.user_properties.append((_TRACE_PROPERTY, str(self.trace_path(item))))
        if self.keeps(outcome) and self.attached:
            report.user_properties.append((_KEPT_PROPERTY, dashboard_url(session)))

    @staticmethod
    def summarize(terminalreporter: Any) -> None:
        """The run's summary: the trace files of failed tests, and the dashboard pages of kept sessions."""
        traces: list[str] = []
        kept: list[str] = []
        for kind in ("failed", "error"):
            for report in terminalreporter.stats.get(kind, []):
                for name, value in getattr(report, "user_properties", ()):
                    if name == _TRACE_PROPERTY:
                        traces.append(f"{report.nodeid}: {value}")
                    elif name == _KEPT_PROPERTY:
                        kept.append(f"{report.nodeid}: {value}")
        if not (traces or kept):
            return
        terminalreporter.section("llmts: where to look", sep="=")
        if traces:
            terminalreporter.line("trace files (open one with: llmts show FILE):")
            for line in traces:
                terminalreporter.line(f"  {line}")
        if kept:
            terminalreporter.line("sessions kept on the server (dashboard, filter: failed tests):")
            for line in kept:
                terminalreporter.line(f"  {line}")

    def report_section(self, item: pytest.Item, session: SessionClient, report: pytest.TestReport) -> str:
        """The ``llmts`` section of a failed phase's report: the journal table, failed expectations, and
        where the session can be seen now."""
        lines = [f"session {session.id} ({session.provider_base})"]
        try:  # the most recent requests: the ones that explain a failure
            entries = session.requests(order="desc", limit=_REPORT_ROWS)[::-1]
        except OSError as exc:
            entries = []
            lines.append(f"(the journal could not be read: {exc})")
        if entries:
            earlier = int(entries[0].get("sequence") or 1) - 1
            if earlier > 0:
                lines.append(f"({earlier} earlier request(s) not shown: see the trace or the dashboard)")
            lines.append(journal_table(entries, width=_REPORT_WIDTH))
            lines.append(_usage_line(session))
        else:
            lines.append("no requests reached this session")
        verdict = item.stash.get(_VERDICT, None)
        if verdict is not None and not verdict.passed:
            lines.extend(("", f"expectations: {verdict.report()}"))
        lines.extend(("", *self._where_to_look(item, session, _Outcome.of_failed(report))))
        return "\n".join(lines)

    def _where_to_look(self, item: pytest.Item, session: SessionClient, outcome: _Outcome) -> list[str]:
        lines = []
        if self.keeps(outcome) and self.attached:
            lines.append(f"dashboard: {dashboard_url(session)}")
        elif self.keeps(outcome):
            lines.append(
                "the server this run started stops when the run ends, and the session with it "
                "(attach to a running server with --llmts-url to keep sessions for its dashboard)"
            )
        else:
            lines.append(f"the session is deleted after the test (--llmts-keep {self.keep})")
        if self.traces(outcome):
            lines.append(f"trace: {self.trace_path(item)}  (open it with: llmts show <file>)")
        else:
            lines.append("no trace file (--llmts-trace off); --llmts-trace retain-on-failure writes one")
        return lines

    # --- the end of the test ------------------------------------------------------------------------

    def finish(self, item: pytest.Item, session: SessionClient) -> tuple[bool, Path | None]:
        """At the session fixture's teardown: write the trace if chosen, record the outcome on a kept
        session. Returns whether the session stays, and the trace written (if any)."""
        outcome = self.outcome(item)
        trace = None
        if self.traces(outcome):
            trace = self._write_trace(item, session, outcome)
        kept = self.keeps(outcome)
        if kept:
            session.annotate(test_outcome=outcome.name)
        return kept, trace

    def _write_trace(self, item: pytest.Item, session: SessionClient, outcome: _Outcome) -> Path:
        # Imported on the first trace: the bundler's regular expressions cost every pytest run ~13 ms.
        from llmts.dashboard.trace import write_trace

        report = outcome.report
        test: dict[str, Any] = {"nodeid": item.nodeid, "outcome": outcome.name}
        if report is not None:
            test["duration_seconds"] = round(report.duration, 6)
            test["when"] = report.when
            if report.longrepr is not None and outcome.name != "passed":
                test["longrepr"] = _shortened(str(report.longrepr), _LONGREPR_CHARS)
        verdict = item.stash.get(_VERDICT, None)
        expectation = item.stash.get(_EXPECTATION, None)
        export = collect_trace_export(session, test=test, verification=verdict, expectation=expectation)
        return write_trace(self.trace_path(item), export)


def _usage_line(session: SessionClient) -> str:
    """The session's tokens and cost in one line (``GET /admin-api/usage``; docs/journal.md)."""
    usage = usage_or_none(session)
    if usage is None:
        return "usage: not reported by this server"
    totals = usage.get("totals") or {}
    cost = totals.get("cost_usd")
    priced = f"${cost:.6f}" if isinstance(cost, (int, float)) else "unknown"
    unpriced = totals.get("unpriced_requests") or 0
    return (
        f"usage: {totals.get('requests', 0)} request(s), {totals.get('input_tokens', 0)} input and "
        f"{totals.get('output_tokens', 0)} output tokens, cost {priced}"
        + (f" ({unpriced} request(s) of a model without a price)" if unpriced else "")
    )


def dashboard_url(session: SessionClient) -> str:
    """The dashboard page of ``session``'s journal on the server process that holds it."""
    return f"{session.server.url}/dashboard#/sessions/{session.id}/journal"


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
