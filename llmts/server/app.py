"""The WSGI application: one routing map over every adapter's routes, plus control and health.

The provider path is the hot path. It reads ``environ`` directly, matches with a pre-bound werkzeug
``MapAdapter``, and hands bytes to gunicorn without building werkzeug Request/Response objects.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

from llmts.errors import (
    ControlUnauthorized,
    HostNotAllowed,
)
from llmts.providers.adapters import ADAPTERS
from llmts.providers.base import (
    ProviderAdapter,
)
from llmts.runtime import DEFAULT_MAX_SESSIONS, SessionRegistry
from llmts.runtime.memory import parse_memory_size
from llmts.schema.config import SessionConfig
from llmts.server.api.auth import ControlAuth
from llmts.server.api.control import ControlApi
from llmts.server.api.dashboard import Dashboard
from llmts.server.api.metrics import METRICS_CONTENT_TYPE, MetricsEndpoint
from llmts.server.http.host_check import HostPolicy, host_policy
from llmts.server.http.log_text import log_text
from llmts.server.http.timeouts import DEFAULT_MAX_BODY_BYTES, Timeouts
from llmts.server.http.upgrade import UpgradeHandler
from llmts.server.http.wsgi import (
    StartResponse,
    bearer_matches,
    control_error,
    send,
)
from llmts.server.lost_sessions import LostSessions
from llmts.server.peers.path import PEER_PREFIXES, PeerPath
from llmts.server.process.worker_restarts import WorkerRestart
from llmts.server.provider_path import ProviderPath
from llmts.server.realtime.path import RealtimePath
from llmts.server.realtime.settings import RealtimeSettings
from llmts.transport.deadline import ActiveDelivery, deadlines_available

__all__ = ["LlmtsApp", "create_app"]

_log = logging.getLogger("llmts")
_HEALTH = b'{"status":"ok"}'
_READY = b'{"status":"ready"}'
_DRAINING = b'{"status":"draining"}'
_SESSIONS_PREFIX = "/sessions/"
_NO_ARGS: dict[str, str] = {}


def _cooperative_yield() -> Callable[[], None]:
    """Under gevent, a yield at the start of each request: every connection that became readable reads
    its request before any is worked on (with the handler's yield before its first write, the worker
    batches one pass of the event loop; docs/architecture.md, "The server's hot path")."""
    try:
        from gevent import monkey, sleep
    except ImportError:  # pragma: no cover - gevent is a dependency
        return lambda: None
    if monkey.is_module_patched("time"):
        return lambda: sleep(0)
    return lambda: None


class LlmtsApp:
    def __init__(
        self,
        *,
        registry: SessionRegistry | None = None,
        control_key: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        adapters: tuple[ProviderAdapter, ...] = ADAPTERS,
        timeouts: Timeouts | None = None,
        metrics_key: str | None = None,
        drain_seconds: float = 0.0,
        hosts: HostPolicy | None = None,
        realtime: RealtimeSettings | None = None,
    ) -> None:
        self.registry = registry or SessionRegistry()
        # The Host names answered (server/http/host_check.py: DNS rebinding); None answers every Host.
        self.hosts = hosts
        self.control_key = control_key or None
        # GET /metrics and GET /ready (docs/deployment.md): counters the hot path bumps, the optional
        # scrape credential, and the drain: after SIGTERM /ready answers 503 for ``drain_seconds`` while
        # everything else is still served, then the worker's graceful stop begins.
        self.metrics_endpoint = MetricsEndpoint(self.registry)
        self._metrics = self.metrics_endpoint.metrics
        self.metrics_key = metrics_key or None
        self.drain_seconds = drain_seconds
        self.draining = False
        # Set when this process's worker replaced one that died (worker_restarted): sessions are lost.
        self.lost: LostSessions | None = None
        self.max_body_bytes = max_body_bytes
        # Body-read and write deadlines act under gevent (both llmts workers, and plain gunicorn's);
        # head, keep-alive and graceful stop are the worker's (server/http/connections.py).
        self.timeouts = timeouts or Timeouts()
        enforced = deadlines_available()
        self._body_timeout = self.timeouts.body if enforced else None
        self._write_timeout = self.timeouts.write if enforced else None
        self._deliveries: set[ActiveDelivery] | None = None
        # The control key's checks, the dashboard's login tokens and the wrong-key throttle: per process,
        # not session state (llmts/server/api/auth.py; docs/architecture.md, "The dashboard").
        self.control_auth = ControlAuth(self.control_key)
        self._control = ControlApi(self.registry, self.control_auth, max_body_bytes, self._body_timeout)
        self._dashboard = Dashboard(self.control_auth, self._body_timeout)
        # Under gevent, yield once per request so a connection whose next request already arrived waits
        # its turn behind the others (p99 under load). Elsewhere that yield would be a real sleep syscall.
        self._yield_to_others = _cooperative_yield()
        # The provider routes, one exchange per request (server/provider_path.py).
        self._provider = ProviderPath(
            self.registry,
            adapters,
            self._metrics,
            control_key=self.control_key,
            max_body_bytes=max_body_bytes,
            body_timeout=self._body_timeout,
            write_timeout=self._write_timeout,
        )
        # Realtime and Live WebSocket routes (server/realtime/): the HTTP loop hands their upgrades over.
        # Their writes run under the same write timeout as every response.
        self.realtime = realtime or RealtimeSettings()
        self._realtime = RealtimePath(
            self.registry,
            adapters,
            self._metrics,
            control_key=self.control_key,
            settings=self.realtime,
            write_timeout=self._write_timeout,
        )
        # MCP servers and A2A agents (server/peers/): JSON-RPC peers of the agent under test.
        self._peers = PeerPath(
            self.registry,
            self._metrics,
            max_body_bytes=max_body_bytes,
            body_timeout=self._body_timeout,
            write_timeout=self._write_timeout,
        )

    def track_deliveries(self) -> set[ActiveDelivery]:
        """The registry of responses being written, for a worker's graceful stop
        (server/http/connections.py)."""
        if self._deliveries is None:
            self._deliveries = set()
            self._provider.deliveries = self._peers.deliveries = self._realtime.deliveries = self._deliveries
        return self._deliveries

    # --- entry ------------------------------------------------------------------------------------

    def upgrade_handler(self, environ: dict[str, Any]) -> UpgradeHandler | None:
        """The handler of a WebSocket upgrade (server/http/upgrade.py): a realtime route's, else None. A
        ``Host`` this server does not answer gets its 403 in the route's envelope, as on HTTP."""
        self._realtime.lost = self.lost
        hosts = self.hosts
        if hosts is not None and not hosts.allows(environ.get("HTTP_HOST")):
            return self._realtime.handler_for(environ, self._host_refusal(environ))
        return self._realtime.handler_for(environ)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        self._yield_to_others()
        path: str = environ.get("PATH_INFO") or "/"
        path_session: str | None = None
        if path.startswith(_SESSIONS_PREFIX):
            path_session, _, rest = path[len(_SESSIONS_PREFIX) :].partition("/")
            path = "/" + rest
        hosts = self.hosts
        if hosts is not None and not hosts.allows(environ.get("HTTP_HOST")):
            return self._refuse_host(environ, start_response, path)
        if path.startswith("/admin-api"):
            return self._control(environ, start_response, path, path_session)
        if path_session is None:
            if path == "/health":
                return send(start_response, 200, [("Content-Type", "application/json")], _HEALTH)
            if path == "/ready":
                return self._ready(start_response)
            if path == "/metrics":
                return self._metrics_page(environ, start_response)
            if path.startswith("/dashboard"):
                return self._dashboard(environ, start_response, path)
        if path.startswith(PEER_PREFIXES):
            return self._peers(environ, start_response, path, path_session)
        return self._provider(environ, start_response, path, path_session)

    def _host_refusal(self, environ: dict[str, Any]) -> HostNotAllowed:
        assert self.hosts is not None
        extra = " or ".join(self.hosts.allowed) or "none"
        return HostNotAllowed(
            f"Host {log_text(environ.get('HTTP_HOST'))!r} is not allowed: this server answers loopback "
            f"names (localhost, 127.0.0.1, [::1]) and --allowed-hosts ({extra}), against DNS rebinding; "
            "see docs/server.md, 'Allowed hosts'"
        )

    def _refuse_host(
        self, environ: dict[str, Any], start_response: StartResponse, path: str
    ) -> Iterable[bytes]:
        """403 for a ``Host`` this server does not answer, in the route's envelope; nothing is journaled
        or changed (it is nobody's session traffic)."""
        error = self._host_refusal(environ)
        provider = self._provider
        adapter = None if path.startswith(("/admin-api", "/dashboard")) else provider.adapter_for(path)
        if adapter is None:
            return control_error(start_response, error)
        provider.reject(adapter.namespace, error.http_status)
        reply = adapter.render_error_for(path)(error, provider.new_request_id())
        return send(start_response, reply.status, reply.headers, reply.body)

    def begin_drain(self) -> float:
        """SIGTERM arrived (the worker calls this): /ready answers 503 from now on; returns how many seconds
        to keep serving before the graceful stop, so load balancers stop sending new work first."""
        self.draining = True
        return self.drain_seconds

    def worker_restarted(self, restart: WorkerRestart) -> None:
        """This worker replaced one that died (``ReplacementAware`` in server/http/connections.py calls
        this): requests naming a session it
        lost get 500 ``llm_test_server_worker_restarted`` and /ready answers 503 from now on."""
        self.lost = self._control.lost = self._provider.lost = self._peers.lost = LostSessions(restart)

    def _ready(self, start_response: StartResponse) -> Iterable[bytes]:
        if self.draining:
            return send(start_response, 503, [("Content-Type", "application/json")], _DRAINING)
        if self.lost is not None:
            return send(start_response, 503, [("Content-Type", "application/json")], self.lost.ready_body)
        return send(start_response, 200, [("Content-Type", "application/json")], _READY)

    def _metrics_page(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self.metrics_key is not None and not bearer_matches(environ, self.metrics_key):
            return control_error(
                start_response, ControlUnauthorized("GET /metrics needs Authorization: Bearer <metrics key>")
            )
        return send(
            start_response, 200, [("Content-Type", METRICS_CONTENT_TYPE)], self.metrics_endpoint.page()
        )


def create_app(
    *,
    control_key: str | None = None,
    fixtures: SessionConfig | None = None,
    max_body_bytes: int | None = None,
    max_sessions: int | None = None,
    timeouts: Timeouts | None = None,
    max_memory_bytes: int | None = None,
    metrics_key: str | None = None,
    drain_seconds: float | None = None,
    allowed_hosts: str | None = None,
    binds: list[str] | None = None,
    realtime: RealtimeSettings | None = None,
) -> LlmtsApp:
    """WSGI factory: ``gunicorn -k gevent 'llmts.app:create_app()'``.

    Unset arguments fall back to ``LLMTS_CONTROL_KEY``, ``LLMTS_FIXTURES``, ``LLMTS_MAX_BODY_BYTES``,
    ``LLMTS_MAX_SESSIONS``, ``LLMTS_MAX_MEMORY`` (bytes, or ``512M``/``2G``; default from the machine) and
    the ``LLMTS_*_TIMEOUT`` and ``LLMTS_WS_*`` variables (docs/server.md), ``LLMTS_METRICS_KEY`` and
    ``LLMTS_DRAIN_SECONDS`` (docs/deployment.md). Under gunicorn with more than one worker it refuses to
    start (sessions would be split between processes; ``llmts serve --workers N`` is the way to use more
    cores).

    ``allowed_hosts`` (``--allowed-hosts``, else ``LLMTS_ALLOWED_HOSTS``) and ``binds`` (the addresses the
    server listens on; else gunicorn's ``bind``) decide which ``Host`` names are answered
    (server/http/host_check.py).
    """
    from llmts.runtime.allocator import tune as tune_allocator
    from llmts.server.process.settings import load_fixtures_file
    from llmts.server.process.single_process import gunicorn_binds, refuse_several_gunicorn_workers

    refuse_several_gunicorn_workers()
    tune_allocator()  # docs/design/memory.md, "Memory beyond the accounted bytes"

    env = os.environ
    registry = SessionRegistry(
        max_sessions=max_sessions or int(env.get("LLMTS_MAX_SESSIONS", DEFAULT_MAX_SESSIONS)),
        max_memory_bytes=max_memory_bytes
        or (parse_memory_size(env["LLMTS_MAX_MEMORY"]) if env.get("LLMTS_MAX_MEMORY") else None),
    )
    if fixtures is None and env.get("LLMTS_FIXTURES"):
        fixtures = load_fixtures_file(env["LLMTS_FIXTURES"])
    if fixtures is not None:
        registry.default.configure(fixtures)
    return LlmtsApp(
        registry=registry,
        control_key=control_key or env.get("LLMTS_CONTROL_KEY") or None,
        max_body_bytes=max_body_bytes or int(env.get("LLMTS_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)),
        timeouts=timeouts or Timeouts.from_env(env),
        metrics_key=metrics_key or env.get("LLMTS_METRICS_KEY") or None,
        drain_seconds=drain_seconds
        if drain_seconds is not None
        else float(env.get("LLMTS_DRAIN_SECONDS") or 0),
        hosts=host_policy(binds if binds is not None else gunicorn_binds() or [], allowed_hosts, env),
        realtime=realtime or RealtimeSettings.from_env(env),
    )
