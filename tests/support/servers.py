"""Dedicated gunicorn servers without waiting on them.

A graceful stop is ~0.6 s and a start ~1-2 s of mostly waiting, per server. ``BackgroundStops`` ends a
test's servers on threads of their own; ``SpareServers`` starts the next server with the same options
while a test uses the current one, so a test that needs a fresh server gets one that is already up.
``SharedServers`` starts one server per set of start options for all the tests of a run (of an xdist
worker) that need only those options, each with sessions of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from llmts import LlmTestServer

__all__ = ["BackgroundStops", "SharedServers", "SpareServers", "discard"]

# ``LlmTestServer.start`` itself, for when a test replaces the class attribute (tests/test_docs.py).
_START = LlmTestServer.start.__func__  # type: ignore[attr-defined]


def discard(server: LlmTestServer) -> None:
    """End a server a test is done with. One server process (gunicorn's arbiter and its worker, a process
    group of their own) is killed: its graceful stop would cost ~0.2 s of CPU that shows nothing, since a
    test whose subject is the stop stops its server itself. A ``--workers`` supervisor's instances are
    process groups of their own, so such a server stops gracefully. Then ``stop()`` reaps it and removes
    its working directory."""
    process = server.process
    if process is not None and len(server.urls) == 1 and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    server.stop()


class BackgroundStops:
    """Ends servers (``discard``) on threads of their own; ``join`` waits for all of them (at the end of
    the run)."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []

    def stop(self, server: LlmTestServer) -> None:
        thread = threading.Thread(target=discard, args=(server,), name="llmts-test-stop", daemon=True)
        thread.start()
        self._threads.append(thread)

    def join(self, timeout: float = 30.0) -> None:
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()


class _Spare(LlmTestServer):
    """A server from ``SpareServers``: its first ``stop()`` (a ``with`` block's end) hands it to the
    background stops and returns at once."""

    stops: BackgroundStops | None = None

    def stop(self, timeout: float = 10.0) -> None:
        stops, self.stops = self.stops, None
        if stops is None:
            super().stop(timeout)
        else:
            stops.stop(self)


class SpareServers:
    """Fresh servers started with one set of options, each for one test: ``take`` returns one that is up
    (started while the previous test ran) and starts the next unless told none is needed; ``close`` stops
    the spare."""

    def __init__(self, stops: BackgroundStops, **options: Any) -> None:
        self.options = options
        self._stops = stops
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="llmts-test-spare")
        self._next: Future[LlmTestServer] | None = None

    def _start(self) -> Future[LlmTestServer]:
        return self._executor.submit(_START, _Spare, **self.options)

    def take(self, start_next: bool = True) -> LlmTestServer:
        """A server that is up; ``start_next=False`` when no test will take another (a spare nobody takes
        is a server start for nothing)."""
        server = (self._next or self._start()).result()
        self._next = self._start() if start_next else None
        assert isinstance(server, _Spare)
        server.stops = self._stops
        return server

    def close(self) -> None:
        if self._next is not None:
            try:
                self._stops.stop(self._next.result())
            finally:
                self._next = None
        self._executor.shutdown()


class SharedServers:
    """One server per set of start options (``LlmTestServer.start`` keyword arguments), started on first
    use and kept for the rest of the run: for tests whose subject is not the process (a control key's
    checks, say) and that work only with sessions of their own. ``close`` stops them all."""

    def __init__(self, stops: BackgroundStops) -> None:
        self._stops = stops
        self._servers: dict[str, LlmTestServer] = {}
        self._lock = threading.Lock()

    def get(self, **options: Any) -> LlmTestServer:
        key = repr(sorted(options.items()))
        with self._lock:
            if key not in self._servers:
                self._servers[key] = LlmTestServer.start(**options)
            return self._servers[key]

    def close(self) -> None:
        with self._lock:
            for server in self._servers.values():
                self._stops.stop(server)
            self._servers.clear()
