"""The control API under ``/admin-api``: sessions, configure, reset, configuration.

Every answer is JSON; every error is ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from werkzeug.exceptions import MethodNotAllowed as _WzMethodNotAllowed
from werkzeug.exceptions import NotFound as _WzNotFound
from werkzeug.routing import Map

from llmts.catalog.prices import PRICES_AS_OF
from llmts.errors import (
    ControlUnauthorized,
    InvalidRequest,
    LlmtsError,
    MemoryBudgetExceeded,
    MethodNotAllowed,
    RouteNotFound,
)
from llmts.runtime import DEFAULT_SESSION_ID, Session, SessionRegistry
from llmts.runtime.allocator import trim_after
from llmts.runtime.journal import utc_iso
from llmts.schema.config import SessionConfig
from llmts.schema.control import SessionAnnotations, SessionInfo, SessionListQuery
from llmts.schema.validation import parse_session_body, parse_session_config_json
from llmts.server.api.auth import ControlAuth
from llmts.server.api.conversations import conversations_listing, explain_match
from llmts.server.api.dashboard import cookie_authorizes
from llmts.server.api.journal import (
    export_payload,
    parse_query,
    query_headers,
    query_session,
    requests_listing,
    resilience_listing,
    strict_query,
)
from llmts.server.api.recording import recording_payload
from llmts.server.http.log_text import log_text
from llmts.server.http.routing import MatchRule
from llmts.server.http.wsgi import StartResponse, bearer_token, control_error, read_body, send
from llmts.server.lost_sessions import LostSessions
from llmts.server.process.process_stats import process_stats

__all__ = ["SESSION_HEADER_ENVIRON", "ControlApi", "select_session", "server_base"]

SESSION_HEADER_ENVIRON = "HTTP_X_LLM_TEST_SERVER_SESSION"
_log = logging.getLogger("llmts")


@dataclass(frozen=True, slots=True)
class RawBody:
    """A handler result that is already serialized (exports)."""

    content_type: str
    body: bytes


def _annotate(session: Session, annotations: SessionAnnotations | None) -> None:
    """Apply the fields a body set (a PUT naming only ``test_outcome`` keeps the label)."""
    if annotations is not None:
        session.annotations = session.annotations.model_copy(
            update=annotations.model_dump(exclude_unset=True)
        )


def _listed(session: Session, query: SessionListQuery) -> bool:
    label = session.annotations.label
    if query.label is not None and label != query.label:
        return False
    if query.label_contains is not None and (
        label is None or query.label_contains.casefold() not in label.casefold()
    ):
        return False
    return query.test_outcome is None or session.annotations.test_outcome == query.test_outcome


def _provider_base(environ: Mapping[str, Any], session_id: str) -> str:
    """Where the session's SDK base URLs start: ``<server>/sessions/<id>``, and the server URL itself for
    ``default`` (which the plain provider roots serve), as ``SessionClient.provider_base`` says."""
    base = server_base(environ)
    return base if session_id == DEFAULT_SESSION_ID else f"{base}/sessions/{session_id}"


def select_session(
    registry: SessionRegistry,
    environ: Mapping[str, Any],
    path_session: str | None,
    lost: LostSessions | None = None,
    *,
    restores: bool = False,
) -> Session:
    """The session a request names by ``/sessions/{id}`` prefix or header (``default`` when neither);
    ``lost`` after a worker restart (server/process/worker_restarts.py), where ``restores`` (reset, configure)
    accepts the lost default session."""
    header_session = environ.get(SESSION_HEADER_ENVIRON)
    if path_session is not None and header_session is not None and header_session != path_session:
        raise InvalidRequest(
            f"the path selects session {path_session!r} "
            f"but X-Llm-Test-Server-Session says {header_session!r}",
            code="llm_test_server_session_conflict",
        )
    session_id = path_session or header_session or DEFAULT_SESSION_ID
    if lost is None:
        return registry.get(session_id)
    return lost.get(registry, session_id, restores=restores)


def server_base(environ: Mapping[str, Any]) -> str:
    host = (
        environ.get("HTTP_HOST")
        or f"{environ.get('SERVER_NAME', '127.0.0.1')}:{environ.get('SERVER_PORT', '80')}"
    )
    return f"{environ.get('wsgi.url_scheme', 'http')}://{host}"


Handler = Callable[
    [Mapping[str, Any], Mapping[str, str], "str | None"], tuple[int, Any, list[tuple[str, str]]]
]


class ControlApi:
    def __init__(
        self,
        registry: SessionRegistry,
        auth: ControlAuth,
        max_body_bytes: int,
        body_timeout: float | None = None,
    ) -> None:
        self._registry = registry
        self._auth = auth
        self._max_body_bytes = max_body_bytes
        self._body_timeout = body_timeout
        # Set by the app when this process's worker replaced one that died
        # (server/process/worker_restarts.py).
        self.lost: LostSessions | None = None
        self._routes = Map(
            [
                MatchRule("/admin-api/sessions", methods=["GET"], endpoint=self._list_sessions),
                MatchRule("/admin-api/sessions", methods=["POST"], endpoint=self._create_session),
                MatchRule(
                    "/admin-api/sessions/<session_id>", methods=["DELETE"], endpoint=self._delete_session
                ),
                MatchRule("/admin-api/sessions/<session_id>", methods=["GET"], endpoint=self._get_session),
                MatchRule("/admin-api/sessions/<session_id>", methods=["PUT"], endpoint=self._put_session),
                MatchRule("/admin-api/configure", methods=["POST"], endpoint=self._configure),
                MatchRule("/admin-api/reset", methods=["POST"], endpoint=self._reset),
                MatchRule("/admin-api/configuration", methods=["GET"], endpoint=self._configuration),
                MatchRule("/admin-api/queues", methods=["GET"], endpoint=self._queues),
                MatchRule("/admin-api/requests", methods=["GET"], endpoint=self._requests),
                MatchRule("/admin-api/process", methods=["GET"], endpoint=self._process),
                MatchRule("/admin-api/requests/export", methods=["GET"], endpoint=self._export),
                MatchRule("/admin-api/conversations", methods=["GET"], endpoint=self._conversations),
                MatchRule("/admin-api/match/explain", methods=["POST"], endpoint=self._explain),
                MatchRule("/admin-api/verify", methods=["POST"], endpoint=self._verify),
                MatchRule("/admin-api/resilience", methods=["GET"], endpoint=self._resilience),
                MatchRule("/admin-api/recording", methods=["GET"], endpoint=self._recording),
                MatchRule("/admin-api/usage", methods=["GET"], endpoint=self._usage),
            ],
            strict_slashes=False,
            merge_slashes=False,  # a "//" is a 404, not werkzeug's redirect exception
        ).bind("llmts")

    def __call__(
        self, environ: Mapping[str, Any], start_response: StartResponse, path: str, path_session: str | None
    ) -> Iterable[bytes]:
        try:
            self._authorize(environ)
            try:
                handler, args = self._routes.match(path, environ["REQUEST_METHOD"])
            except _WzMethodNotAllowed:
                raise MethodNotAllowed(f"{environ['REQUEST_METHOD']} is not allowed on {path}") from None
            except _WzNotFound:
                raise RouteNotFound(f"no control route {path}") from None
            status, payload, headers = handler(environ, args, path_session)
            if status == 204:
                return send(start_response, 204, headers, b"")
            if isinstance(payload, RawBody):
                return send(
                    start_response, status, [("Content-Type", payload.content_type), *headers], payload.body
                )
            return send(
                start_response,
                status,
                [("Content-Type", "application/json"), *headers],
                orjson.dumps(payload),
            )
        except LlmtsError as error:
            return control_error(start_response, error)
        except Exception:  # a bug: still a JSON error, never the WSGI server's error page
            _log.exception("unhandled error on control route %s", log_text(path))
            return control_error(
                start_response,
                LlmtsError(
                    "llmts hit an internal error; see the server log", code="llm_test_server_internal_error"
                ),
            )

    def _authorize(self, environ: Mapping[str, Any]) -> None:
        auth = self._auth
        if not auth.key_required:
            return
        # A bearer key counts against the client's wrong-key throttle like a login (429 while locked out).
        presented = bearer_token(environ)
        if presented is not None and auth.key_matches(environ, presented):
            return
        # The dashboard's login token, only with the dashboard's header (docs/dashboard.md, "Login").
        if cookie_authorizes(environ, auth.tokens.valid):
            return
        raise ControlUnauthorized("this server needs Authorization: Bearer <control key> on /admin-api")

    def _selected(
        self, environ: Mapping[str, Any], path_session: str | None, *, restores: bool = False
    ) -> Session:
        return select_session(self._registry, environ, path_session, self.lost, restores=restores)

    def _named(self, session_id: str, *, restores: bool = False) -> Session:
        if self.lost is None:
            return self._registry.get(session_id)
        return self.lost.get(self._registry, session_id, restores=restores)

    def _info(self, environ: Mapping[str, Any], session: Session) -> dict[str, Any]:
        entries, retained_bytes, observed, evicted = session.journal.counters()
        config = session.plan.configuration
        return SessionInfo(
            id=session.id,
            provider_base=_provider_base(environ, session.id),
            configured=config is not None,
            created_at=utc_iso(session.created_at),
            scenario_count=len(config.scenarios) if config is not None else 0,
            conversation_count=len(config.conversations) if config is not None else 0,
            request_count=observed,
            journal_entries=entries,
            journal_bytes=retained_bytes,
            evicted_count=evicted,
            label=session.annotations.label,
            test_outcome=session.annotations.test_outcome,
        ).model_dump()

    # --- handlers: (environ, path args, path session) -> (status, payload, extra headers) ---------------

    def _list_sessions(self, environ: Mapping[str, Any], args: Mapping[str, str], _: str | None) -> Any:
        query = strict_query(str(environ.get("QUERY_STRING", "")), SessionListQuery, what="sessions")[0]
        listed = [self._info(environ, s) for s in self._registry.list() if _listed(s, query)]
        return 200, listed, []

    def _create_session(self, environ: Mapping[str, Any], args: Mapping[str, str], _: str | None) -> Any:
        """A new session; the body, if any, may carry ``label``/``test_outcome`` and a configuration
        (all validated first: a bad body creates nothing)."""
        annotations, config = parse_session_body(read_body(environ, self._max_body_bytes, self._body_timeout))
        session = self._registry.create()
        if config is not None:
            self._configure_new(session, config, created=True)
        _annotate(session, annotations)
        return 201, self._info(environ, session), []

    def _put_session(self, environ: Mapping[str, Any], args: Mapping[str, str], _: str | None) -> Any:
        """Create the client-chosen session if absent (201) or answer for it (200): a load balancer that
        hashes on the id sends this and all the session's traffic to one instance. A body, if any, is a
        configuration put in force unless it already is (validated first: a bad one creates nothing); an
        empty one or ``{}`` means "no configuration", as for ``POST``, so a generic client's retried PUT
        never wipes a configured session."""
        annotations, config = parse_session_body(read_body(environ, self._max_body_bytes, self._body_timeout))
        session, created = self._registry.ensure(args["session_id"])
        if config is not None and (created or session.plan.configuration != config):
            self._configure_new(session, config, created=created)
        _annotate(session, annotations)
        return (201 if created else 200), self._info(environ, session), []

    def _configure_new(self, session: Session, config: SessionConfig, *, created: bool) -> None:
        """Put ``config`` in force; a session this request created goes again when it cannot (a 507 of the
        memory budget), so a refused body creates nothing and changes nothing."""
        try:
            session.configure(config)
        except MemoryBudgetExceeded:
            if created:
                self._registry.delete(session.id)
            raise

    def _get_session(self, environ: Mapping[str, Any], args: Mapping[str, str], _: str | None) -> Any:
        return 200, self._info(environ, self._named(args["session_id"])), []

    def _delete_session(self, environ: Mapping[str, Any], args: Mapping[str, str], _: str | None) -> Any:
        if self.lost is not None:
            self._named(args["session_id"], restores=True)  # a lost one: WorkerRestarted, not 404
        used = self._registry.memory.used_bytes
        self._registry.delete(args["session_id"])
        trim_after(used - self._registry.memory.used_bytes)  # give the freed pages back to the system
        return 204, None, []

    def _configure(
        self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None
    ) -> Any:
        session = self._selected(environ, path_session, restores=True)
        config = parse_session_config_json(read_body(environ, self._max_body_bytes, self._body_timeout))
        session.configure(config)
        if self.lost is not None:
            self.lost.restored(session.id)
        return 200, {"session_id": session.id, "configuration": config.model_dump(mode="json")}, []

    def _reset(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        session = self._selected(environ, path_session, restores=True)
        used = self._registry.memory.used_bytes
        session.reset()
        trim_after(used - self._registry.memory.used_bytes)
        if self.lost is not None:
            self.lost.restored(session.id)
        return 200, {"session_id": session.id, "status": "reset"}, []

    def _configuration(
        self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None
    ) -> Any:
        session = self._selected(environ, path_session)
        config = session.plan.configuration
        payload = config.model_dump(mode="json") if config is not None else {}
        return 200, payload, [("X-Llm-Test-Server-Configured", "true" if config is not None else "false")]

    def _queues(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        statuses = self._selected(environ, path_session).queues.status()
        return 200, [status.model_dump() for status in statuses], []

    def _requests(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        listing, headers = requests_listing(self._selected(environ, path_session), environ)
        return 200, listing, headers

    def _export(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        query, extras = parse_query(str(environ.get("QUERY_STRING", "")), frozenset({"format"}))
        fmt = extras.get("format", "json")
        if fmt not in ("json", "ndjson"):
            raise InvalidRequest(
                "format must be json or ndjson",
                code="invalid_query",
                details=[{"path": "format", "message": "expected json or ndjson"}],
            )
        result = query_session(self._selected(environ, path_session), query)
        content_type, body = export_payload(result, query, fmt)
        return 200, RawBody(content_type, body), query_headers(result)

    def _verify(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        # Loaded on the first verification (its schema and evaluator), not when the app loads.
        from llmts.server.api.verify import verify_session

        session = self._selected(environ, path_session)
        return (
            200,
            verify_session(session, environ, read_body(environ, self._max_body_bytes, self._body_timeout)),
            [],
        )

    def _resilience(
        self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None
    ) -> Any:
        return 200, resilience_listing(self._selected(environ, path_session), environ), []

    def _conversations(
        self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None
    ) -> Any:
        return 200, conversations_listing(self._selected(environ, path_session), environ), []

    def _explain(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        session = self._selected(environ, path_session)
        return (
            200,
            explain_match(session, environ, read_body(environ, self._max_body_bytes, self._body_timeout)),
            [],
        )

    def _recording(
        self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None
    ) -> Any:
        body, headers = recording_payload(self._selected(environ, path_session), environ)
        return 200, RawBody("application/json", body), headers

    def _usage(self, environ: Mapping[str, Any], args: Mapping[str, str], path_session: str | None) -> Any:
        """Tokens and cost per provider and model since the last configure or reset (docs/journal.md)."""
        summary = self._selected(environ, path_session).spend.summary()
        return 200, {**summary, "list_prices_as_of": PRICES_AS_OF}, []

    def _process(self, environ: Mapping[str, Any], args: Mapping[str, str], _: str | None) -> Any:
        registry = self._registry
        return 200, process_stats(registry.memory, len(registry.list())), []
