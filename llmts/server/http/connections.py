"""Worker-side connection lifecycle: request-head and keep-alive deadlines, and the graceful stop.

Theory of operation (docs/architecture.md, "Timeouts and shutdown"):

- Every connection waiting for a request head is registered with the worker's ``ConnectionTracker``
  together with a ``gevent.Timeout``: ``request_head`` seconds for a new connection, ``keepalive``
  seconds after a response on a kept-alive one. When it fires the connection closes without an answer
  (nothing was admitted, so nothing is journaled). The deadline is cancelled once the head is parsed;
  the body and the writes have their own deadlines in the app (server/http.py, transport/deadline.py).
- SIGTERM: stop accepting, close every connection that is only waiting for a head (idle keep-alive),
  and poll every 50 ms until no handler is busy: the worker exits as soon as in-flight work is done.
  Shortly before the graceful budget runs out, deliveries still running are ended cleanly
  (``end_delivery``: the chunked terminator, ``transport_outcome`` ``early_end``, journaled with
  ``error_code`` ``llm_test_server_shutdown``); whatever is still busy at the end is killed.

``HeadDeadlineHandler`` plugs this into gevent's pywsgi handler; ``GracefulWorker`` into both gunicorn
gevent workers (its ``timeout_ctx`` is what gunicorn's own ``gevent`` worker wraps around each head).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator, MutableSet
from contextlib import contextmanager
from functools import partial
from typing import Any

import gevent
from gevent import getcurrent
from gevent.pool import Pool
from gevent.server import StreamServer
from gunicorn.http.wsgi import base_environ
from gunicorn.sock import ssl_context

from llmts.server.http.access_log import GUNICORN_DEFAULT_FORMAT, AccessLog, access_streams
from llmts.server.http.timeouts import Timeouts
from llmts.server.process.worker_restarts import WorkerRestart
from llmts.transport.deadline import ActiveDelivery, end_delivery

__all__ = ["ConnectionTracker", "GracefulWorker", "HeadDeadlineHandler", "ReplacementAware"]

# How often the stopping worker looks whether in-flight work is done.
_STOP_POLL_SECONDS = 0.05
# How often the running worker looks at ``alive`` (a SIGTERM is noticed within this).
_ALIVE_POLL_SECONDS = 0.1


class ConnectionTracker:
    """Per worker: the connections waiting for a request head, and whether the worker is stopping."""

    def __init__(self, request_head: float, keepalive: float, write: float | None = None) -> None:
        self.request_head = request_head
        self.keepalive = keepalive
        # Seconds one write may wait for a client that does not read, bounded by the handler itself
        # (server/http/pywsgi_handler.py); None for an app that is not llmts's (it keeps gevent's unbounded
        # writes).
        self.write = write
        self.stopping = False
        # Greenlet -> the exception that closes it: connections waiting for a request head.
        self.waiting: dict[Any, BaseException] = {}
        # Greenlets of gunicorn's ``gevent`` worker that served a request (their next head is kept-alive).
        self._served: MutableSet[Any] = weakref.WeakSet()

    def head_seconds(self, kept_alive: bool) -> float:
        """The head deadline of a connection's next request (0 while stopping: close at once)."""
        return 0.0 if self.stopping else (self.keepalive if kept_alive else self.request_head)

    def wait_for_head(self, kept_alive: bool) -> gevent.Timeout:
        """Start the head deadline of the calling greenlet's connection and register it as waiting."""
        timer = gevent.Timeout(self.head_seconds(kept_alive))
        timer.start()
        self.waiting[getcurrent()] = timer
        return timer

    def head_done(self, timer: gevent.Timeout) -> None:
        timer.close()
        current = getcurrent()
        if self.waiting.get(current) is timer:
            del self.waiting[current]

    @contextmanager
    def head(self) -> Iterator[None]:
        """gunicorn ``gevent`` worker: the head deadline around ``next(parser)``; silent when it fires
        (the request stays None and gunicorn closes the connection)."""
        current = getcurrent()
        timer = self.wait_for_head(current in self._served)
        try:
            yield
        except gevent.Timeout as exc:
            if exc is not timer:
                raise
        finally:
            self.head_done(timer)

    def served(self) -> None:
        self._served.add(getcurrent())

    def stop(self) -> None:
        """Close every connection that is only waiting for a head (its deadline fires now)."""
        self.stopping = True
        for greenlet, timer in list(self.waiting.items()):
            greenlet.kill(timer, block=False)


class HeadTimeout(BaseException):
    """A request head did not arrive in time (or the worker is stopping): the connection closes quietly.

    A ``BaseException``, as ``gevent.Timeout`` is, so that gevent's request-head parser (which answers
    any ``Exception`` with a 400) lets it through to the handler."""


class HeadDeadlineHandler:
    """Mixin for gevent's ``pywsgi.WSGIHandler``: deadlines on each request head, closing on stop.

    Each connection keeps two raw event-loop timers (the first request's ``request_head`` and the
    kept-alive ``keepalive``) and restarts one per request: ``gevent.Timeout.start``/``cancel`` cost
    several microseconds of Python per request, a loop timer's ``start``/``stop`` a fraction of one."""

    _llmts_kept_alive = False
    _llmts_timer: Any = None
    _llmts_timers: dict[float, Any]
    _llmts_expired: HeadTimeout

    def handle_one_request(self) -> Any:
        tracker: ConnectionTracker | None = getattr(self.server, "llmts_connections", None)  # type: ignore[attr-defined]
        if tracker is None:
            return super().handle_one_request()  # type: ignore[misc]
        if tracker.stopping:
            return None  # close the connection instead of waiting for another request
        timers = self.__dict__.get("_llmts_timers")
        if timers is None:
            timers = self._llmts_timers = {}
            self._llmts_expired = HeadTimeout()
        seconds = tracker.head_seconds(self._llmts_kept_alive)
        timer = timers.get(seconds)
        if timer is None:
            # ``again`` restarts from ``repeat``: ``start`` after a ``stop`` would resume the time the timer
            # had left, so a kept-alive connection's idle periods would add up to one timeout.
            timer = timers[seconds] = self.server.loop.timer(seconds, seconds)  # type: ignore[attr-defined]
        expired = self._llmts_expired
        current = getcurrent()
        timer.again(current.throw, expired)
        self._llmts_timer = timer
        waiting = tracker.waiting
        waiting[current] = expired  # a stopping worker closes it (ConnectionTracker.stop)
        try:
            return super().handle_one_request()  # type: ignore[misc]
        except HeadTimeout as exc:
            if exc is not expired:
                raise
            return None  # the head did not arrive in time: close, nothing was admitted
        finally:
            timer.stop()
            waiting.pop(current, None)

    def get_environ(self) -> Any:
        self._llmts_head_arrived()
        return super().get_environ()  # type: ignore[misc]

    def _llmts_head_arrived(self) -> None:
        # The head is complete: from here the app's own deadlines (body, writes) apply.
        timer = self._llmts_timer
        if timer is not None:
            timer.stop()
            self._llmts_timer = None
            self._llmts_kept_alive = True
            tracker: ConnectionTracker = self.server.llmts_connections  # type: ignore[attr-defined]
            tracker.waiting.pop(getcurrent(), None)
            if tracker.stopping:
                self.close_connection = True

    def handle(self) -> Any:
        try:
            return super().handle()  # type: ignore[misc]
        finally:
            for timer in self.__dict__.get("_llmts_timers", {}).values():
                timer.close()


class GracefulWorker:
    """Mixin for gunicorn's ``GeventWorker`` family: head deadlines and a graceful stop that does not wait
    longer than in-flight work needs."""

    cfg: Any
    log: Any
    wsgi: Any
    sockets: list[Any]
    alive: bool
    worker_connections: int
    server_class: Any
    wsgi_handler: Any

    def _llmts_timeouts(self) -> Timeouts:
        timeouts = getattr(self.wsgi, "timeouts", None)
        if isinstance(timeouts, Timeouts):
            return timeouts
        keepalive = float(self.cfg.keepalive or 2)  # a foreign app: gunicorn's own keep-alive setting
        graceful = float(self.cfg.graceful_timeout)
        return Timeouts(request_head=keepalive, keepalive=keepalive, graceful=graceful)

    _llmts_tracker: ConnectionTracker

    def timeout_ctx(self) -> Any:
        return self._llmts_tracker.head()

    def handle_request(self, *args: Any) -> Any:
        self._llmts_tracker.served()
        return super().handle_request(*args)  # type: ignore[misc]

    def run(self) -> None:
        timeouts = self._llmts_timeouts()
        own_app = isinstance(getattr(self.wsgi, "timeouts", None), Timeouts)
        tracker = self._llmts_tracker = ConnectionTracker(
            timeouts.request_head, timeouts.keepalive, timeouts.write if own_app else None
        )
        track = getattr(self.wsgi, "track_deliveries", None)
        deliveries: MutableSet[ActiveDelivery] = track() if callable(track) else set()
        access = self._llmts_access_log()
        servers = [self._llmts_server(listener, tracker, access) for listener in self.sockets]
        notified = 0.0
        try:
            while self.alive:
                if time.monotonic() - notified >= 1.0:
                    self.notify()  # type: ignore[attr-defined]
                    notified = time.monotonic()
                gevent.sleep(_ALIVE_POLL_SECONDS)
            self._llmts_drain()
            self._llmts_stop(servers, tracker, deliveries)
        finally:
            if access is not None:
                access.close()  # the lines of the last requests

    def _llmts_drain(self) -> None:
        """Before the graceful stop: the app's /ready answers 503 while it keeps serving for its drain
        seconds (docs/deployment.md), so a load balancer stops sending new work first."""
        begin = getattr(self.wsgi, "begin_drain", None)
        seconds = float(begin()) if callable(begin) else 0.0
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.notify()  # type: ignore[attr-defined]
            gevent.sleep(min(left, 1.0))

    def _llmts_access_log(self) -> AccessLog | None:
        """The batched access log (server/http/access_log.py) where the worker's handler writes one and
        gunicorn's access log is on with its default format and plain stream/file handlers."""
        if not getattr(self, "batched_access_log", False) or not self.cfg.accesslog:
            return None
        if self.cfg.access_log_format != GUNICORN_DEFAULT_FORMAT or access_streams(self.log) is None:
            return None
        return AccessLog(
            partial(access_streams, self.log),
            json_lines=bool(getattr(self.log, "json_lines", False)),
            loop=gevent.get_hub().loop,
        )

    def _llmts_server(self, listener: Any, tracker: ConnectionTracker, access: AccessLog | None) -> Any:
        """The same servers gunicorn's ``GeventWorker.run`` starts, with the tracker attached; a worker with
        ``llmts_connection_handler`` serves each connection with the handler it makes."""
        listener.setblocking(1)
        # The TLS handshake happens on the connection's first read, under its request-head deadline: gevent
        # would otherwise shake hands before the handler, with no deadline at all (docs/tls.md).
        ssl_args: dict[str, Any] = {}
        if self.cfg.is_ssl:
            context = ssl_context(self.cfg)
            # No TLS 1.3 session tickets: they reach the client just after the handshake, while a client
            # that reads in a thread of its own (websockets' sync client, under the OpenAI SDK's realtime)
            # may be writing its first request on the same SSL object, which OpenSSL does not allow; about
            # 1 in 1,000 such upgrades lost its request. Python clients never resume sessions by themselves,
            # so the tickets bought nothing (docs/tls.md, "Session tickets").
            context.num_tickets = 0
            ssl_args = {"ssl_context": context, "do_handshake_on_connect": False}
        pool = Pool(self.worker_connections)
        server: Any
        own_loop = getattr(self, "llmts_connection_handler", None)
        if own_loop is not None:  # llmts's own HTTP/1.1 loop (server/http/)
            server = StreamServer(
                listener, handle=own_loop(listener, tracker, access), spawn=pool, **ssl_args
            )
        elif self.server_class is not None:
            from gunicorn.workers.ggevent import VERSION

            environ = base_environ(self.cfg)
            environ.update({"wsgi.multithread": True, "SERVER_SOFTWARE": VERSION})
            server = self.server_class(
                listener,
                application=self.wsgi,
                spawn=pool,
                log=self.log,
                handler_class=self.wsgi_handler,
                environ=environ,
                **ssl_args,
            )
        else:
            server = StreamServer(listener, handle=partial(self.handle, listener), spawn=pool, **ssl_args)  # type: ignore[attr-defined]
        server.llmts_connections = tracker
        server.llmts_access_log = access
        server.start()
        return server

    def _llmts_stop(
        self, servers: list[Any], tracker: ConnectionTracker, deliveries: MutableSet[ActiveDelivery]
    ) -> None:
        started = time.monotonic()
        # The arbiter waits ``cfg.graceful_timeout`` (whole seconds, rounded up from this) before SIGKILL.
        budget = min(self._llmts_timeouts().graceful, float(self.cfg.graceful_timeout))
        # Streams still running this long before the budget ends get a clean end; what is still busy
        # at ``kill_at`` is killed, leaving the arbiter (which waits the same budget) time to reap us.
        end_at = started + budget - min(1.0, budget / 4)
        kill_at = started + budget - min(0.25, budget / 10)
        for server in servers:
            server.close()  # stop accepting
        tracker.stop()
        for delivery in list(deliveries):
            if delivery.end is not None:  # a realtime connection: told to go away now, not at the deadline
                end_delivery(delivery)
        ended = False
        notified = started
        while any(server.pool.free_count() != server.pool.size for server in servers):
            now = time.monotonic()
            if now >= kill_at:
                self.log.warning("llmts: graceful timeout reached; ending the remaining connections")
                for server in servers:
                    server.stop(timeout=0.1)
                return
            if now >= end_at and not ended:
                ended = True
                for delivery in list(deliveries):
                    end_delivery(delivery)
            if now - notified >= 1.0:
                self.notify()  # type: ignore[attr-defined]
                notified = now
            gevent.sleep(_STOP_POLL_SECONDS)


class ReplacementAware:
    """Mixin for gunicorn workers: gunicorn numbers the workers it starts (``age``), so a worker above 1
    replaced an earlier one of the same arbiter, whose sessions died with it. The app hears of it before
    it serves; under ``llmts serve`` the arbiter also left how the old worker ended on the application."""

    age: int
    pid: int
    app: Any
    wsgi: Any

    def load_wsgi(self) -> None:
        super().load_wsgi()  # type: ignore[misc]
        note = getattr(self.wsgi, "worker_restarted", None)
        if self.age > 1 and callable(note):
            previous = getattr(self.app, "llmts_last_worker_end", None)
            note(WorkerRestart(self.pid, self.age, time.time(), previous))
