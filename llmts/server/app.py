"""The WSGI application: one routing map over every adapter's routes, plus control and health.

The provider path is the hot path. It reads ``environ`` directly, matches with a pre-bound werkzeug
``MapAdapter``, and hands bytes to gunicorn without building werkzeug Request/Response objects.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from werkzeug.exceptions import MethodNotAllowed as _WzMethodNotAllowed
from werkzeug.exceptions import NotFound as _WzNotFound
from werkzeug.routing import Map, Rule

from llmts.errors import (
    BodyIncomplete,
    BodyReadTimeout,
    BodyTooLarge,
    ControlUnauthorized,
    HostNotAllowed,
    InvalidRequest,
    LlmtsError,
    MethodNotAllowed,
    ProviderUnauthorized,
    RouteNotFound,
    ScriptedError,
)
from llmts.providers.adapters import ADAPTERS
from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    Route,
    SimpleRoute,
)
from llmts.providers.strict import check_strict
from llmts.runtime import DEFAULT_MAX_SESSIONS, RandomIds, Session, SessionRegistry
from llmts.runtime.conversations import CONVERSATION_ENVIRON, Caller, conversation_id_from
from llmts.runtime.conversations.selection import MISSES
from llmts.runtime.determinism import WireIdentity
from llmts.runtime.journal import JournalRecord
from llmts.runtime.memory import parse_memory_size
from llmts.schema.config import SessionConfig
from llmts.server.control import ControlApi, select_session
from llmts.server.control_auth import ControlAuth
from llmts.server.dashboard import Dashboard
from llmts.server.forward import Forwarded, forward, recorded_reply, relay, replayed_exchange
from llmts.server.host_check import HostPolicy, host_policy
from llmts.server.http import (
    DEFAULT_MAX_BODY_BYTES,
    StartResponse,
    bearer_matches,
    control_error,
    json_body,
    read_body,
    same_secret,
    send,
)
from llmts.server.log_text import log_text
from llmts.server.metrics import METRICS_CONTENT_TYPE, MetricsEndpoint
from llmts.server.multipart import parse_multipart
from llmts.server.respond import respond
from llmts.server.timeouts import Timeouts
from llmts.server.upstream import UpstreamClient
from llmts.server.worker_restarts import LostSessions, WorkerRestart
from llmts.transport import WaitOutcome, client_socket, wait
from llmts.transport.deadline import ActiveDelivery, deadlines_available
from llmts.transport.pacing import StreamPacing, jittered

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
    ) -> None:
        self.registry = registry or SessionRegistry()
        # The Host names answered (server/host_check.py: DNS rebinding); None answers every Host.
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
        self._adapters = adapters
        # Body-read and write deadlines act under gevent (both llmts workers, and plain gunicorn's);
        # head, keep-alive and graceful stop are the worker's (server/connections.py).
        self.timeouts = timeouts or Timeouts()
        enforced = deadlines_available()
        self._body_timeout = self.timeouts.body if enforced else None
        self._write_timeout = self.timeouts.write if enforced else None
        self._deliveries: set[ActiveDelivery] | None = None
        # The control key's checks, the dashboard's login tokens and the wrong-key throttle: per process,
        # not session state (llmts/server/control_auth.py; docs/architecture.md, "The dashboard").
        self.control_auth = ControlAuth(self.control_key)
        self._control = ControlApi(self.registry, self.control_auth, max_body_bytes, self._body_timeout)
        self._dashboard = Dashboard(self.control_auth, self._body_timeout)
        rules = [
            Rule(route.rule, methods=list(route.methods), endpoint=(adapter, route))
            for adapter in adapters
            for route in adapter.routes
        ]
        # merge_slashes=False: werkzeug would answer a "//" with a redirect exception; here it is a 404.
        self._routes = Map(rules, strict_slashes=False, merge_slashes=False).bind("llmts")
        # Routes without path arguments skip the matcher: one dict lookup on the hot path.
        self._static_routes = {
            (route.rule, method): (adapter, route)
            for adapter in adapters
            for route in adapter.routes
            if "<" not in route.rule
            for method in route.methods
        }
        # Under gevent, yield once per request so a connection whose next request already arrived waits
        # its turn behind the others (p99 under load). Elsewhere that yield would be a real sleep syscall.
        self._yield_to_others = _cooperative_yield()
        self._request_ids = RandomIds()
        # Forwarding to sessions' upstreams (docs/recording.md): one pooled client per worker process.
        self._upstream = UpstreamClient()

    def track_deliveries(self) -> set[ActiveDelivery]:
        """The registry of responses being written, for a worker's graceful stop (server/connections.py)."""
        if self._deliveries is None:
            self._deliveries = set()
        return self._deliveries

    # --- entry ------------------------------------------------------------------------------------

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
        return self._provider(environ, start_response, path, path_session)

    def _refuse_host(
        self, environ: dict[str, Any], start_response: StartResponse, path: str
    ) -> Iterable[bytes]:
        """403 for a ``Host`` this server does not answer, in the route's envelope; nothing is journaled
        or changed (it is nobody's session traffic)."""
        assert self.hosts is not None
        extra = " or ".join(self.hosts.allowed) or "none"
        error = HostNotAllowed(
            f"Host {log_text(environ.get('HTTP_HOST'))!r} is not allowed: this server answers loopback "
            f"names (localhost, 127.0.0.1, [::1]) and --allowed-hosts ({extra}), against DNS rebinding; "
            "see docs/server.md, 'Allowed hosts'"
        )
        adapter = None if path.startswith(("/admin-api", "/dashboard")) else self._adapter_for(path)
        if adapter is None:
            return control_error(start_response, error)
        self._metrics.reject(adapter.namespace, error.http_status)
        reply = adapter.render_error_for(path)(error, "req_" + self._request_ids.new_hex(12))
        return send(start_response, reply.status, reply.headers, reply.body)

    def begin_drain(self) -> float:
        """SIGTERM arrived (the worker calls this): /ready answers 503 from now on; returns how many seconds
        to keep serving before the graceful stop, so load balancers stop sending new work first."""
        self.draining = True
        return self.drain_seconds

    def worker_restarted(self, restart: WorkerRestart) -> None:
        """This worker replaced one that died (server/worker.py calls this): requests naming a session it
        lost get 500 ``llm_test_server_worker_restarted`` and /ready answers 503 from now on."""
        self.lost = self._control.lost = LostSessions(restart)

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

    # --- provider routes --------------------------------------------------------------------------

    def _adapter_for(self, path: str) -> ProviderAdapter | None:
        for adapter in self._adapters:
            if path == adapter.prefix or path.startswith(adapter.prefix + "/"):
                return adapter
        return None

    def _provider(
        self, environ: dict[str, Any], start_response: StartResponse, path: str, path_session: str | None
    ) -> Iterable[bytes]:
        method: str = environ["REQUEST_METHOD"]
        adapter: ProviderAdapter | None = None
        session: Session | None = None
        entry: JournalRecord | None = None
        wire: WireIdentity | None = None
        reply: Reply | Forwarded
        request_id = "req_" + self._request_ids.new_hex(12)
        try:
            static = self._static_routes.get((path, method))
            if static is None and path.startswith("//"):  # werkzeug would strip the extra leading "/"
                raise RouteNotFound(f"llmts has no route {method} {path}")
            try:
                (adapter, route), args = (static, _NO_ARGS) if static else self._routes.match(path, method)
            except _WzMethodNotAllowed:
                adapter = self._adapter_for(path)
                raise MethodNotAllowed(f"{method} is not allowed on {path}") from None
            except _WzNotFound:
                adapter = self._adapter_for(path)
                raise RouteNotFound(f"llmts has no route {method} {path}") from None
            request_id = adapter.request_id_prefix + request_id[4:]
            session = self._session(environ, path_session)
            entry = session.journal_begin(request_id, adapter.namespace, method, path)
            wire = session.wire_identity(entry)
            retry_group = _retry_group(environ)
            conversation_id = conversation_id_from(raw_conversation := environ.get(CONVERSATION_ENVIRON))
            entry.identify(retry_group, conversation_id if raw_conversation is not None else None)
            body = read_body(environ, self.max_body_bytes, self._body_timeout)
            entry.capture_request(body, session.journal.preview_bytes)
            request = ProviderRequest(method, path, args, body, environ, parse_multipart)
            open_route = isinstance(route, SimpleRoute) and route.credential_free
            caller = Caller(
                conversation_id, None if open_route else self._authenticate(adapter, request, session)
            )
            call = ProviderCall(request, session, request_id, wire)
            header_conversation = conversation_id if raw_conversation is not None else None
            answer = self._run(route, session, call, environ, entry, caller, adapter, header_conversation)
            if answer is None:  # the client left during a delay: nothing to write
                entry.client_gone()
                session.journal_finish(entry)
                self._metrics.record(entry)
                start_response("499 Client Closed Request", [("Content-Length", "0")])
                return []
            reply = answer
        except LlmtsError as error:
            if adapter is None:
                return json_body(start_response, error.http_status, error.to_control_body())
            if session is None and error.http_status != 404:
                session = self._session_or_none(environ, path_session)
                if session is not None:
                    entry = session.journal_begin(request_id, adapter.namespace, method, path)
            if entry is not None:
                entry.failed(error.code, error.retry_after if isinstance(error, ScriptedError) else None)
            else:  # no session took it (unknown route or session): counted apart from the journaled
                self._metrics.reject(adapter.namespace, error.http_status)
            reply = adapter.render_error_for(path)(error, request_id)
            if isinstance(error, (BodyTooLarge, BodyReadTimeout, BodyIncomplete)):
                reply.headers.append(("Connection", "close"))
        except Exception:  # a bug: still answer in the provider's envelope, never with a traceback page
            _log.exception("unhandled error on %s %s", log_text(method), log_text(path))
            internal = LlmtsError(
                "llmts hit an internal error; see the server log", code="llm_test_server_internal_error"
            )
            if adapter is None:
                return json_body(start_response, 500, internal.to_control_body())
            if entry is not None:
                entry.failed(internal.code)
            reply = adapter.render_error_for(path)(internal, request_id)
        if isinstance(reply, Forwarded):
            assert session is not None and entry is not None
            return relay(
                start_response,
                reply,
                environ,
                session,
                entry,
                write_timeout=self._write_timeout,
                active=self._deliveries,
                metrics=self._metrics,
            )
        if wire is not None and (date := wire.http_date()) is not None:
            reply.headers.append(("Date", date))
        render_rate = adapter.rate_limit_headers
        if session is not None and render_rate is not None and (rate := session.rate_state()) is not None:
            reply.headers.extend(render_rate(rate))
        return respond(
            start_response,
            reply,
            environ,
            session,
            entry,
            write_timeout=self._write_timeout,
            active=self._deliveries,
            metrics=self._metrics,
        )

    def _session_or_none(self, environ: Mapping[str, Any], path_session: str | None) -> Session | None:
        try:
            return self._session(environ, path_session)
        except LlmtsError:
            return None

    def _session(self, environ: Mapping[str, Any], path_session: str | None) -> Session:
        return select_session(self.registry, environ, path_session, self.lost)

    def _authenticate(
        self, adapter: ProviderAdapter, request: ProviderRequest, session: Session
    ) -> str | None:
        """Check the presented provider credential; return it (its hash is part of conversation identity)."""
        presented = adapter.credential(request)
        if (
            self.control_key is not None
            and presented is not None
            and same_secret(presented, self.control_key)
        ):
            raise ProviderUnauthorized("the control key is not a provider credential")
        expected = session.credential_for(adapter.namespace)
        if expected is not None and (presented is None or not same_secret(presented, expected)):
            shown = (
                "none"
                if presented is None
                else presented[:3] + "*" * max(0, min(len(presented) - 7, 20)) + presented[-4:]
            )
            raise ProviderUnauthorized(f"Incorrect API key provided: {shown}.")
        return presented

    def _run(
        self,
        route: Route,
        session: Session,
        call: ProviderCall,
        environ: Mapping[str, Any],
        entry: JournalRecord,
        caller: Caller,
        adapter: ProviderAdapter,
        conversation: str | None,
    ) -> Reply | Forwarded | None:
        if not isinstance(route, InferenceRoute):
            entry.parsed(route.operation or route.rule)
            return route.handle(call)
        neutral = route.parse(call)
        if neutral.stream and neutral.operation in route.in_stream_faults:
            # The parser built this request for this call alone: set the flag in place (a model_copy
            # costs several microseconds on the hot path).
            neutral.__dict__["in_stream_faults"] = True
        entry.parsed(neutral.operation, neutral.model, neutral.stream, neutral.reasoning_settings)
        preview_bytes = session.journal.preview_bytes
        entry.capture_history(neutral.messages, preview_bytes)
        # With an upstream the real provider judges the request (docs/recording.md).
        upstream = session.upstream_for(neutral.provider)
        if route.strict_rules and upstream is None and call.strict_requests:
            body = call.request.rule_body()  # parsed once: the parser already did (JSON, or a multipart form)
            check_strict(route.strict_rules, call.request.body, body, session.signatures)  # consumes nothing
        session.rate_take(neutral)
        if route.shortcut is not None and upstream is None:
            early = route.shortcut(call, neutral)
            if early is not None:
                return early
        try:
            admission = session.admit(neutral, caller, entry)
        except MISSES:
            if upstream is None:
                raise
            admission = None
        # Nothing of the session owns it (a miss, or an operation llmts would generate, which commits
        # nothing): the upstream answers.
        if upstream is not None and (admission is None or admission.generated):
            entry.forwarded_upstream()
            return forward(
                self._upstream,
                session,
                adapter.prefix,
                call.request,
                neutral,
                upstream,
                conversation=conversation,
                credential=caller.credential,
            )
        assert admission is not None  # a miss without an upstream was raised above
        entry.admitted(admission.scenario_id)
        generation = admission.generation
        pacing = session.pacing_for(admission) if neutral.stream else None
        delay = admission.delay_ms / 1000
        ttft, rng = 0.0, None
        if pacing is not None:  # the time to the first frame is waited like a delay (409 if superseded)
            rng = call.wire.pacing_random() if pacing.jitter and call.wire is not None else None
            ttft = jittered(pacing.ttft_ms / 1000, pacing.jitter, rng)
            delay += ttft
        if delay:
            outcome = wait(delay, client_socket(environ), lambda: not session.is_current(generation))
            if outcome is WaitOutcome.CLIENT_GONE:
                session.release(admission)  # a conversation step that never ran does not advance
                return None
        completion = session.complete(admission, neutral, call.wire)
        session.rate_spend(completion.usage.output_tokens)
        ticket = admission.conversation
        entry.apply_completion(completion, replayed=ticket is not None and ticket.replay is not None)
        entry.capture_output_calls(completion.output.tool_calls, preview_bytes)
        recorded = completion.output.recorded
        if recorded is None:
            reply = route.render(call, neutral, completion)
        else:  # an upstream's answer, as recorded (docs/recording.md)
            reply = recorded_reply(recorded)
            if session.recording:  # a new_episodes run keeps what it replayed beside what it recorded
                kept = replayed_exchange(recorded, neutral, conversation)
                secrets = (caller.credential,) if caller.credential else ()
                session.keep_exchange(kept, secrets, generation)
        reply.delivery = completion.stream_delivery
        if pacing is not None and reply.frames is not None:
            tps = pacing.tokens_per_second
            reply.pacing = StreamPacing(
                1 / tps if tps else None,
                pacing.jitter,
                completion.usage.output_tokens,
                rng,
                lambda: not session.is_current(generation),
                ttft,
            )
        return reply


def _retry_group(environ: Mapping[str, Any]) -> str | None:
    value = environ.get("HTTP_X_LLM_TEST_SERVER_RETRY_GROUP")
    if value is None:
        return None
    if not value.strip() or len(value) > 128 or "," in value:
        raise InvalidRequest(
            "X-Llm-Test-Server-Retry-Group must be one nonblank value of at most 128 characters",
            code="invalid_retry_group",
        )
    return str(value)


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
) -> LlmtsApp:
    """WSGI factory: ``gunicorn -k gevent 'llmts.app:create_app()'``.

    Unset arguments fall back to ``LLMTS_CONTROL_KEY``, ``LLMTS_FIXTURES``, ``LLMTS_MAX_BODY_BYTES``,
    ``LLMTS_MAX_SESSIONS``, ``LLMTS_MAX_MEMORY`` (bytes, or ``512M``/``2G``; default from the machine) and
    the ``LLMTS_*_TIMEOUT`` variables (docs/server.md), ``LLMTS_METRICS_KEY`` and ``LLMTS_DRAIN_SECONDS``
    (docs/deployment.md). Under gunicorn with more than one worker it refuses to start (sessions would
    be split between processes; ``llmts serve --workers N`` is the way to use more cores).

    ``allowed_hosts`` (``--allowed-hosts``, else ``LLMTS_ALLOWED_HOSTS``) and ``binds`` (the addresses the
    server listens on; else gunicorn's ``bind``) decide which ``Host`` names are answered
    (server/host_check.py).
    """
    from llmts.server.allocator import tune as tune_allocator
    from llmts.server.settings import load_fixtures_file
    from llmts.server.single_process import gunicorn_binds, refuse_several_gunicorn_workers

    refuse_several_gunicorn_workers()
    tune_allocator()  # docs/architecture.md, "Memory beyond the accounted bytes"

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
    )
