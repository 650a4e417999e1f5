"""``/mcp/...`` and ``/a2a/...``: the session (path prefix or header, as every route), then the protocol's
HTTP handler. Errors before a handler runs (unknown session, a bad session header) answer as a JSON-RPC
error object with the HTTP status of the llmts error; a bug answers 500 with one, never a traceback, and
the request's journal entry, if it opened one, ends failed (``llm_test_server_internal_error``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, MutableSet
from typing import Any

from llmts.errors import LlmtsError, RouteNotFound
from llmts.peers.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, error_response
from llmts.runtime import SessionRegistry
from llmts.server.api.control import select_session
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.http.log_text import log_text
from llmts.server.http.wsgi import StartResponse, json_body
from llmts.server.lost_sessions import LostSessions
from llmts.server.peers.context import PeerRequest, PeerServices
from llmts.transport.deadline import ActiveDelivery

__all__ = ["PEER_PREFIXES", "PeerPath"]

_log = logging.getLogger("llmts")

# The protocols and their URL roots (docs/mcp.md, docs/a2a.md).
PEER_PREFIXES = ("/mcp/", "/a2a/")

PeerHandler = Callable[[PeerRequest], Iterable[bytes]]


def _handlers(services: PeerServices) -> dict[str, PeerHandler]:
    from llmts.server.peers.a2a_http import A2aHttp
    from llmts.server.peers.mcp_http import McpHttp

    return {"mcp": McpHttp(services), "a2a": A2aHttp(services)}


class PeerPath:
    def __init__(
        self,
        registry: SessionRegistry,
        metrics: ProcessMetrics,
        *,
        max_body_bytes: int,
        body_timeout: float | None,
        write_timeout: float | None,
    ) -> None:
        self._registry = registry
        self.services = PeerServices(metrics, max_body_bytes, body_timeout, write_timeout)
        self.lost: LostSessions | None = None
        # Built on the first peer request: a server whose tests never talk MCP or A2A loads neither.
        self._protocols: dict[str, PeerHandler] | None = None

    @property
    def deliveries(self) -> MutableSet[ActiveDelivery] | None:
        return self.services.deliveries

    @deliveries.setter
    def deliveries(self, value: MutableSet[ActiveDelivery] | None) -> None:
        self.services.deliveries = value

    def __call__(
        self, environ: dict[str, Any], start_response: StartResponse, path: str, path_session: str | None
    ) -> Iterable[bytes]:
        protocol, _, rest = path[1:].partition("/")
        name, slash, rest = rest.partition("/")
        request: PeerRequest | None = None
        try:
            if not name:
                raise RouteNotFound(f"name a {protocol} peer: /{protocol}/{{name}}")
            session = select_session(self._registry, environ, path_session, self.lost)
            handlers = self._protocols
            if handlers is None:
                handlers = self._protocols = _handlers(self.services)
            mount = (f"/sessions/{path_session}" if path_session is not None else "") + f"/{protocol}/{name}"
            request = PeerRequest(
                environ,
                start_response,
                environ["REQUEST_METHOD"],
                session,
                protocol,
                name,
                slash + rest,
                mount,
                self.services,
            )
            return handlers[protocol](request)
        except LlmtsError as error:
            self.services.metrics.reject(protocol, error.http_status)
            code = INVALID_REQUEST if error.http_status < 500 else INTERNAL_ERROR
            body = error_response(None, code, str(error), {"code": error.code})
            return json_body(start_response, error.http_status, body)
        except ConnectionResetError:  # a stream_delivery plan dropped the connection (transport/abort.py)
            raise
        except Exception:  # a bug: a JSON-RPC error, never a traceback page
            _log.exception(
                "unhandled error on %s %s", log_text(environ.get("REQUEST_METHOD")), log_text(path)
            )
            body = error_response(None, INTERNAL_ERROR, "llmts hit an internal error; see the server log")
            if request is not None:
                self._internal_error(request)
            return json_body(start_response, 500, body)

    def _internal_error(self, request: PeerRequest) -> None:
        """A bug ended the request: its journal entry, if it opened one, fails (none stays in progress)."""
        entry = request.entry
        if entry is None or entry.completed:
            return
        entry.answered(500)
        entry.failed("llm_test_server_internal_error")
        request.session.journal.finish(entry)
        self.services.metrics.record(entry)
