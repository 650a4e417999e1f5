"""Where a WebSocket upgrade goes: the adapters' realtime routes (docs/realtime.md, docs/architecture.md,
"Realtime over WebSocket").

The HTTP loop hands a request that asks for a WebSocket to ``LlmtsApp.upgrade_handler``
(server/http/upgrade.py), which asks ``RealtimePath.handler_for``: the route is matched (under the server
root or ``/sessions/{id}``, like every provider route), the session selected and the protocol built
*before* the handshake, so every refusal is an ordinary HTTP answer in the provider's error envelope
(unknown session 404, missing model 400, a wrong key 401 where the provider refuses before the upgrade).
A route the adapters do not serve returns None: the loop answers 400 ``websocket_not_supported``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping, MutableSet
from typing import Any

from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map

from llmts.errors import LlmtsError, ProviderUnauthorized
from llmts.providers.base import ProviderAdapter, ProviderRequest, Reply
from llmts.providers.realtime import RealtimeRoute
from llmts.runtime import RandomIds, SessionRegistry
from llmts.server.api.control import select_session
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.http.log_text import log_text
from llmts.server.http.routing import MatchRule, routable
from llmts.server.http.upgrade import UpgradeHandler, UpgradeRequest
from llmts.server.http.wsgi import same_secret
from llmts.server.lost_sessions import LostSessions
from llmts.server.realtime.settings import RealtimeSettings
from llmts.transport.deadline import ActiveDelivery

__all__ = ["RealtimePath"]

_log = logging.getLogger("llmts")
_SESSIONS_PREFIX = "/sessions/"
_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    426: "Upgrade Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class RealtimePath:
    """Every adapter's WebSocket routes, matched with one pre-bound werkzeug map."""

    def __init__(
        self,
        registry: SessionRegistry,
        adapters: tuple[ProviderAdapter, ...],
        metrics: ProcessMetrics,
        *,
        control_key: str | None,
        settings: RealtimeSettings,
        write_timeout: float | None,
    ) -> None:
        self._registry = registry
        self._metrics = metrics
        self._control_key = control_key
        self._settings = settings
        self._write_timeout = write_timeout  # the server's (None where deadlines do not act)
        self._ids = RandomIds()
        rules = [
            MatchRule(route.rule, endpoint=(adapter, route), methods=["GET"])
            for adapter in adapters
            for route in adapter.realtime_routes
        ]
        self._routes = Map(rules, strict_slashes=False, merge_slashes=False).bind("llmts")
        self._adapters = adapters
        # Set by the app: the sessions a replaced worker lost, and the graceful stop's registry.
        self.lost: LostSessions | None = None
        self.deliveries: MutableSet[ActiveDelivery] | None = None

    def handler_for(
        self, environ: dict[str, Any], refusal: LlmtsError | None = None
    ) -> UpgradeHandler | None:
        """The handler of a WebSocket upgrade to a realtime route (None: no such route); with ``refusal``
        (a ``Host`` the server does not answer) the handler answers that error in the route's envelope."""
        path: str = environ.get("PATH_INFO") or "/"
        path_session: str | None = None
        if path.startswith(_SESSIONS_PREFIX):
            path_session, _, rest = path[len(_SESSIONS_PREFIX) :].partition("/")
            path = "/" + rest
        if not routable(path):
            return None
        try:
            (adapter, route), args = self._routes.match(path, "GET")
        except HTTPException:
            return None
        if refusal is not None:
            return lambda upgrade: self._refuse(upgrade, adapter, path, refusal)
        return lambda upgrade: self._serve(upgrade, adapter, route, args, path, path_session)

    def _refuse(self, upgrade: UpgradeRequest, adapter: ProviderAdapter, path: str, error: LlmtsError) -> int:
        """An upgrade refused before any session is chosen: counted, not journaled."""
        self._metrics.reject(adapter.namespace, error.http_status)
        request_id = adapter.request_id_prefix + self._ids.new_hex(12)
        return _write_answer(upgrade, adapter.render_error_for(path)(error, request_id))

    def _serve(
        self,
        upgrade: UpgradeRequest,
        adapter: ProviderAdapter,
        route: RealtimeRoute,
        args: Mapping[str, str],
        path: str,
        path_session: str | None,
    ) -> int:
        # The WebSocket stack (wsproto) loads with the first upgrade, not with the app.
        from llmts.server.realtime.connection import RealtimeConnection

        environ = upgrade.environ
        request_id = adapter.request_id_prefix + self._ids.new_hex(12)
        request = ProviderRequest("GET", path, args, b"", environ)
        try:
            session = select_session(self._registry, environ, path_session, self.lost)
            refused = self._refused_credential(adapter, route, request, session.plan.credential_for)
            if refused is not None and route.unauthorized_after_upgrade is None:
                raise refused
            connection = RealtimeConnection.open(
                upgrade,
                adapter,
                route,
                request,
                session,
                credential=route.credential(request),
                settings=self._settings,
                write_timeout=self._write_timeout,
                budget=self._registry.memory,
                metrics=self._metrics,
                refused=refused,
            )
        except LlmtsError as error:
            self._metrics.reject(adapter.namespace, error.http_status)
            reply = adapter.render_error_for(path)(error, request_id)
            if error.http_status == 426:  # RFC 6455 4.2.2: name the version this server speaks
                reply.headers.append(("Sec-WebSocket-Version", "13"))
            return _write_answer(upgrade, reply)
        except Exception:  # a bug: still an HTTP answer, never a traceback on the wire
            _log.exception("unhandled error on WebSocket upgrade %s", log_text(path))
            internal = LlmtsError("llmts hit an internal error; see the server log")
            return _write_answer(upgrade, adapter.render_error_for(path)(internal, request_id))
        connection.run(self.deliveries)
        return 101

    def _refused_credential(
        self, adapter: ProviderAdapter, route: RealtimeRoute, request: ProviderRequest, expected_for: Any
    ) -> LlmtsError | None:
        """The error a wrong credential gets (None: accepted), as on the HTTP routes."""
        presented = route.credential(request)
        if (
            self._control_key is not None
            and presented is not None
            and same_secret(presented, self._control_key)
        ):
            return ProviderUnauthorized("the control key is not a provider credential")
        expected = expected_for(adapter.namespace)
        if expected is not None and (presented is None or not same_secret(presented, expected)):
            return ProviderUnauthorized("Incorrect API key provided.")
        return None


def _write_answer(upgrade: UpgradeRequest, reply: Reply) -> int:
    """A refused handshake's HTTP answer (the connection closes after it); a HEAD request gets its head."""
    body = reply.body
    reason = _REASONS.get(reply.status, "Error")
    head = [f"HTTP/1.1 {reply.status} {reason}"]
    head.extend(f"{name}: {value}" for name, value in _headers(reply.headers))
    head.append(f"Content-Length: {len(body)}")
    head.append("Connection: close")
    data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
    if upgrade.environ.get("REQUEST_METHOD") != "HEAD":
        data += body
    with contextlib.suppress(OSError):
        upgrade.sock.sendall(data)
    return reply.status


def _headers(headers: Iterable[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    for name, value in headers:
        if name.lower() not in ("content-length", "connection", "transfer-encoding"):
            yield name, value
