"""The provider routes: each request an ``Exchange`` (llmts/server/exchange.py) taken through its stages.

The stages, in order (docs/architecture.md, "The path of one request"):

- ``_route``: the adapter and route for the path and method (a static dict first, then werkzeug's map);
- ``_open``: the session, its journal record, the body, the wire identity and the provider credential;
- for a ``SimpleRoute`` its handler answers; for an ``InferenceRoute``:
  ``_parse`` (wire -> neutral), ``_check_rules`` (strict rules, rate limits), ``_shortcut`` (a route's
  early answer), ``_admit`` (selection and commit, or forwarding a miss upstream), ``_wait`` (a fixture's
  delay and a paced stream's time to first frame), ``_complete`` and ``_render``;
- ``_deliver``: the transport writes the reply (or relays a forwarded one) and the journal gets the evidence.

An error anywhere is rendered in the route's provider envelope (``_failed``). Each stage reads the exchange
and adds what it decided; a stage that answers on its own returns the answer, which ends the pipeline.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, MutableSet
from typing import Any

from werkzeug.exceptions import MethodNotAllowed as _WzMethodNotAllowed
from werkzeug.exceptions import NotFound as _WzNotFound
from werkzeug.routing import Map

from llmts.errors import (
    BodyIncomplete,
    BodyReadTimeout,
    BodyTooLarge,
    InvalidRequest,
    LlmtsError,
    MethodNotAllowed,
    ModelNotFound,
    ProviderUnauthorized,
    RouteNotFound,
    ScriptedError,
)
from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    SimpleRoute,
)
from llmts.providers.strict import check_strict
from llmts.runtime import RandomIds, Session, SessionRegistry
from llmts.runtime.accounting import account_completion, check_allowances
from llmts.runtime.conversations import CONVERSATION_ENVIRON, Caller, conversation_id_from
from llmts.runtime.conversations.selection import MISSES
from llmts.schema.fixtures import LIMITS
from llmts.schema.neutral import RecordedOutput
from llmts.schema.operations import operation_family
from llmts.server.api.control import select_session
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.exchange import Exchange
from llmts.server.http.log_text import log_text
from llmts.server.http.multipart import parse_multipart
from llmts.server.http.routing import MatchRule, routable
from llmts.server.http.wsgi import StartResponse, json_body, read_body, same_secret
from llmts.server.lost_sessions import LostSessions
from llmts.server.respond import respond
from llmts.server.upstream.client import UpstreamClient
from llmts.server.upstream.forward import Forwarded, forward, recorded_reply, relay, replayed_exchange
from llmts.transport import WaitOutcome, client_socket, wait
from llmts.transport.deadline import ActiveDelivery
from llmts.transport.pacing import StreamPacing, jittered

__all__ = ["ProviderPath"]

_log = logging.getLogger("llmts")
_NO_ARGS: dict[str, str] = {}
# The longest model name a request may send: no configuration can name a longer one, and the name is kept
# (journal, usage rows, price and encoding look-ups), so a longer one is refused before it is.
_MODEL_CHARS = LIMITS["model_id_chars"]


class ProviderPath:
    """Every provider route of the adapters, served one exchange at a time; the process-level parts it
    needs (routing map, request ids, the upstream client's pool, metrics) are built once."""

    def __init__(
        self,
        registry: SessionRegistry,
        adapters: tuple[ProviderAdapter, ...],
        metrics: ProcessMetrics,
        *,
        control_key: str | None,
        max_body_bytes: int,
        body_timeout: float | None,
        write_timeout: float | None,
    ) -> None:
        self._registry = registry
        self._adapters = adapters
        self._metrics = metrics
        self._control_key = control_key
        self._max_body_bytes = max_body_bytes
        self._body_timeout = body_timeout
        self._write_timeout = write_timeout
        # Set by the app: the worker's shutdown registry, and the sessions a replaced worker lost.
        self.deliveries: MutableSet[ActiveDelivery] | None = None
        self.lost: LostSessions | None = None
        rules = [
            MatchRule(route.rule, methods=list(route.methods), endpoint=(adapter, route))
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
        self._request_ids = RandomIds()
        # Forwarding to sessions' upstreams (docs/recording.md): one pooled client per worker process.
        self._upstream = UpstreamClient()

    def adapter_for(self, path: str) -> ProviderAdapter | None:
        """The adapter whose prefix the path is under (its error envelope answers the path)."""
        for adapter in self._adapters:
            if path == adapter.prefix or path.startswith(adapter.prefix + "/"):
                return adapter
        return None

    def new_request_id(self) -> str:
        return "req_" + self._request_ids.new_hex(12)

    def reject(self, namespace: str, status: int) -> None:
        """Count an answer given before any session took the request."""
        self._metrics.reject(namespace, status)

    # --- one exchange -----------------------------------------------------------------------------

    def __call__(
        self, environ: dict[str, Any], start_response: StartResponse, path: str, path_session: str | None
    ) -> Iterable[bytes]:
        ex = Exchange(environ, environ["REQUEST_METHOD"], path, path_session)
        ex.request_id = self.new_request_id()
        reply: Reply | Forwarded
        try:
            self._route(ex)
            self._open(ex)
            answer = self._answer(ex)
            if answer is None:  # the client left during a delay: nothing to write
                return self._client_gone(ex, start_response)
            reply = answer
        except LlmtsError as error:
            if ex.adapter is None:
                return json_body(start_response, error.http_status, error.to_control_body())
            reply = self._failed(ex, error)
        except Exception:  # a bug: still answer in the provider's envelope, never with a traceback page
            _log.exception("unhandled error on %s %s", log_text(ex.method), log_text(ex.path))
            internal = LlmtsError(
                "llmts hit an internal error; see the server log", code="llm_test_server_internal_error"
            )
            if ex.adapter is None:
                return json_body(start_response, 500, internal.to_control_body())
            if ex.entry is not None:
                ex.entry.failed(internal.code)
            reply = ex.adapter.render_error_for(ex.path)(internal, ex.request_id)
        return self._deliver(ex, reply, start_response)

    def _answer(self, ex: Exchange) -> Reply | Forwarded | None:
        route, call, entry = ex.route, ex.call, ex.entry
        assert call is not None and entry is not None
        if not isinstance(route, InferenceRoute):
            assert route is not None
            entry.parsed(route.operation or route.rule)
            return route.handle(call)
        self._parse(ex, route)
        self._check_rules(ex, route)
        early = self._shortcut(ex, route)
        if early is not None:
            return early
        forwarded = self._admit(ex)
        if forwarded is not None:
            return forwarded
        if not self._wait(ex):
            return None
        self._complete(ex)
        reply = self._render(ex, route)
        self._pace(ex, reply)
        return reply

    # --- stages -----------------------------------------------------------------------------------

    def _route(self, ex: Exchange) -> None:
        path, method = ex.path, ex.method
        static = self._static_routes.get((path, method))
        if static is None and not routable(path):
            raise RouteNotFound(f"llmts has no route {method} {path}")
        try:
            (adapter, route), args = (static, _NO_ARGS) if static else self._routes.match(path, method)
        except _WzMethodNotAllowed:
            ex.adapter = self.adapter_for(path)
            raise MethodNotAllowed(f"{method} is not allowed on {path}") from None
        except _WzNotFound:
            ex.adapter = self.adapter_for(path)
            raise RouteNotFound(f"llmts has no route {method} {path}") from None
        ex.adapter, ex.route, ex.args = adapter, route, args
        ex.request_id = adapter.request_id_prefix + ex.request_id[4:]

    def _open(self, ex: Exchange) -> None:
        """The session, its journal record (from here on changed only through its own methods), the body
        within its size and time limits, and the caller's credential."""
        adapter, environ = ex.adapter, ex.environ
        assert adapter is not None and ex.route is not None
        session = ex.session = select_session(self._registry, environ, ex.path_session, self.lost)
        entry = ex.entry = session.journal.start(ex.request_id, adapter.namespace, ex.method, ex.path)
        wire = ex.wire = session.plan.wire_identity(entry)
        retry_group = _retry_group(environ)
        conversation_id = conversation_id_from(raw_conversation := environ.get(CONVERSATION_ENVIRON))
        ex.conversation = conversation_id if raw_conversation is not None else None
        entry.identify(retry_group, ex.conversation, *_client_attempt(environ))
        body = read_body(environ, self._max_body_bytes, self._body_timeout)
        entry.capture_request(body, session.journal.preview_bytes)
        request = ex.request = ProviderRequest(ex.method, ex.path, ex.args, body, environ, parse_multipart)
        open_route = isinstance(ex.route, SimpleRoute) and ex.route.credential_free
        ex.caller = Caller(
            conversation_id, None if open_route else self._credential(adapter, request, session)
        )
        ex.call = ProviderCall(request, session, ex.request_id, wire)

    def _credential(self, adapter: ProviderAdapter, request: ProviderRequest, session: Session) -> str | None:
        """Check the presented provider credential; return it (its hash is part of conversation identity)."""
        presented = adapter.credential(request)
        if (
            self._control_key is not None
            and presented is not None
            and same_secret(presented, self._control_key)
        ):
            raise ProviderUnauthorized("the control key is not a provider credential")
        expected = session.plan.credential_for(adapter.namespace)
        if expected is not None and (presented is None or not same_secret(presented, expected)):
            shown = (
                "none"
                if presented is None
                else presented[:3] + "*" * max(0, min(len(presented) - 7, 20)) + presented[-4:]
            )
            raise ProviderUnauthorized(f"Incorrect API key provided: {shown}.")
        return presented

    def _parse(self, ex: Exchange, route: InferenceRoute) -> None:
        call, entry, session = ex.call, ex.entry, ex.session
        assert call is not None and entry is not None and session is not None
        neutral = route.parse(call)
        model, family = neutral.model, operation_family(neutral.operation)
        if model is not None and len(model) > _MODEL_CHARS:  # journaled cut, then refused
            entry.parsed(
                neutral.operation,
                model[:_MODEL_CHARS] + "…",
                neutral.stream,
                neutral.reasoning_settings,
                family,
            )
            raise ModelNotFound(
                f"The model `{model[:64]}…` ({len(model)} characters) does not exist: a model name has at "
                f"most {_MODEL_CHARS} characters.",
                param="model",
            )
        entry.parsed(neutral.operation, model, neutral.stream, neutral.reasoning_settings, family)
        ex.in_stream = neutral.stream and neutral.operation in route.in_stream_faults
        ex.neutral = neutral
        entry.capture_history(neutral.messages, session.journal.preview_bytes)
        # With an upstream the real provider judges the request (docs/recording.md).
        ex.upstream = session.plan.upstream_for(neutral.provider)

    def _check_rules(self, ex: Exchange, route: InferenceRoute) -> None:
        """The strict request contract, the budget, then the rate-limit window: a refused request consumes
        nothing."""
        call, session, neutral = ex.call, ex.session, ex.neutral
        assert call is not None and session is not None and neutral is not None
        if route.strict_rules and ex.upstream is None and call.strict_requests:
            body = call.request.rule_body()  # parsed once: the parser already did (JSON, or a multipart form)
            check_strict(route.strict_rules, call.request.body, body, session.plan.signatures)
        check_allowances(session, neutral)

    def _shortcut(self, ex: Exchange, route: InferenceRoute) -> Reply | None:
        """A route's answer without admission (a cache warm-up, a model-loading request)."""
        if route.shortcut is None or ex.upstream is not None:
            return None
        assert ex.call is not None and ex.neutral is not None
        return route.shortcut(ex.call, ex.neutral)

    def _admit(self, ex: Exchange) -> Reply | Forwarded | None:
        """Selection and commit; a miss (or an answer llmts would only generate) goes to the session's
        upstream when it has one, which then answers the exchange."""
        session, neutral, caller, entry = ex.session, ex.neutral, ex.caller, ex.entry
        assert session is not None and neutral is not None and caller is not None and entry is not None
        try:
            admission = session.admit(neutral, caller, entry, in_stream=ex.in_stream)
        except MISSES:
            if ex.upstream is None:
                raise
            admission = None
        # A recording keeps each exchange at the place its request takes now, whenever its answer completes.
        ordinal = session.recorder.reserve()
        if ex.upstream is not None and (admission is None or admission.generated):
            assert ex.adapter is not None and ex.request is not None
            entry.forwarded_upstream()
            return forward(
                self._upstream,
                session,
                ex.adapter,
                ex.request,
                neutral,
                ex.upstream,
                conversation=ex.conversation,
                credential=caller.credential,
                ordinal=ordinal,
            )
        assert admission is not None  # a miss without an upstream was raised above
        entry.admitted(admission.scenario_id)
        ex.admission = admission
        ex.ordinal = ordinal
        return None

    def _wait(self, ex: Exchange) -> bool:
        """A fixture's ``delay_ms`` and a paced stream's time to its first frame, waited outside the lock and
        ended early by the client leaving (False: nothing more to do) or the session being superseded."""
        session, neutral, admission, call = ex.session, ex.neutral, ex.admission, ex.call
        assert session is not None and neutral is not None and admission is not None and call is not None
        generation = admission.generation
        pacing = session.plan.pacing_for(admission) if neutral.stream else None
        delay = admission.delay_ms / 1000
        if pacing is not None:  # the time to the first frame is waited like a delay (409 if superseded)
            rng = call.wire.pacing_random() if pacing.jitter and call.wire is not None else None
            ttft = jittered(pacing.ttft_ms / 1000, pacing.jitter, rng)
            delay += ttft
            ex.paced = (pacing, rng, ttft)
        if delay:
            outcome = wait(delay, client_socket(ex.environ), lambda: not session.is_current(generation))
            if outcome is WaitOutcome.CLIENT_GONE:
                session.release(admission)  # a conversation step that never ran does not advance
                return False
        return True

    def _complete(self, ex: Exchange) -> None:
        session, neutral, admission, call, entry = ex.session, ex.neutral, ex.admission, ex.call, ex.entry
        assert session is not None and neutral is not None and admission is not None
        assert call is not None and entry is not None
        completion = ex.completion = session.complete(admission, neutral, call.wire)
        account_completion(session, entry, admission, completion)
        ex.delivery = completion.stream_delivery

    def _render(self, ex: Exchange, route: InferenceRoute) -> Reply:
        """The provider's ``Reply`` for the completion: rendered by the route, or an upstream's answer as
        recorded."""
        neutral, call, completion = ex.neutral, ex.call, ex.completion
        assert neutral is not None and call is not None and completion is not None
        recorded = completion.output.recorded
        if recorded is None:
            return route.render(call, neutral, completion)
        self._keep_replayed(ex, recorded)
        ex.keep_frames = True  # its chunks keep their boundaries (docs/recording.md)
        return recorded_reply(recorded)

    def _keep_replayed(self, ex: Exchange, recorded: RecordedOutput) -> None:
        """A new_episodes recording keeps what it replayed beside what it records (docs/recording.md)."""
        session, neutral, admission, caller = ex.session, ex.neutral, ex.admission, ex.caller
        assert session is not None and neutral is not None and admission is not None
        if session.recorder.active:
            assert caller is not None
            kept = replayed_exchange(recorded, neutral, ex.conversation)
            secrets = (caller.credential,) if caller.credential else ()
            session.recorder.keep(kept, secrets, admission.generation, ex.ordinal)

    def _pace(self, ex: Exchange, reply: Reply) -> None:
        """A paced stream's frame spacing (``pacing``: tokens per second and jitter); its time to the first
        frame was waited in ``_wait``. Pacing spaces a stream's frames only."""
        if ex.paced is None or reply.frames is None:
            return
        session, admission, completion = ex.session, ex.admission, ex.completion
        assert session is not None and admission is not None and completion is not None
        pacing, rng, ttft = ex.paced
        tps, generation = pacing.tokens_per_second, admission.generation
        ex.pacing = StreamPacing(
            1 / tps if tps else None,
            pacing.jitter,
            completion.usage.output_tokens,
            rng,
            lambda: not session.is_current(generation),
            ttft,
        )

    # --- the end of an exchange -------------------------------------------------------------------

    def _failed(self, ex: Exchange, error: LlmtsError) -> Reply:
        """The error in the route's provider envelope, journaled when a session took the request."""
        adapter = ex.adapter
        assert adapter is not None
        if ex.session is None and error.http_status != 404:
            try:
                ex.session = select_session(self._registry, ex.environ, ex.path_session, self.lost)
            except LlmtsError:
                ex.session = None
            if ex.session is not None:
                ex.entry = ex.session.journal.start(ex.request_id, adapter.namespace, ex.method, ex.path)
        if ex.entry is not None:
            ex.entry.failed(error.code, error.retry_after if isinstance(error, ScriptedError) else None)
        else:  # no session took it (unknown route or session): counted apart from the journaled
            self._metrics.reject(adapter.namespace, error.http_status)
        ex.delivery = ex.pacing = None
        ex.keep_frames = False
        reply = adapter.render_error_for(ex.path)(error, ex.request_id)
        if isinstance(error, (BodyTooLarge, BodyReadTimeout, BodyIncomplete)):
            reply.headers.append(("Connection", "close"))
        return reply

    def _client_gone(self, ex: Exchange, start_response: StartResponse) -> Iterable[bytes]:
        assert ex.session is not None and ex.entry is not None
        ex.entry.client_gone()
        ex.session.journal.finish(ex.entry)
        self._metrics.record(ex.entry)
        start_response("499 Client Closed Request", [("Content-Length", "0")])
        return []

    def _deliver(
        self, ex: Exchange, reply: Reply | Forwarded, start_response: StartResponse
    ) -> Iterable[bytes]:
        session, entry = ex.session, ex.entry
        if isinstance(reply, Forwarded):
            assert session is not None and entry is not None
            return relay(
                start_response,
                reply,
                ex.environ,
                session,
                entry,
                write_timeout=self._write_timeout,
                active=self.deliveries,
                metrics=self._metrics,
            )
        if ex.wire is not None and (date := ex.wire.http_date()) is not None:
            reply.headers.append(("Date", date))
        adapter = ex.adapter
        render_rate = adapter.rate_limit_headers if adapter is not None else None
        if session is not None and render_rate is not None and (rate := session.rates.state()) is not None:
            reply.headers.extend(render_rate(rate))
        return respond(
            start_response,
            reply,
            ex.environ,
            session,
            entry,
            plan=ex.delivery,
            pacing=ex.pacing,
            keep_frames=ex.keep_frames,
            write_timeout=self._write_timeout,
            active=self.deliveries,
            metrics=self._metrics,
        )


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


# The SDK headers that identify a logical call (docs/journal.md, "Resilience"); a malformed or oversized
# value is ignored, never refused: these are the SDK's headers, not the caller's request.
_CALL_ID_CHARS = 128


def _client_attempt(environ: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """(attempt number, call id) from the client SDK's own headers: Stainless ``x-stainless-retry-count``
    (0-based), AWS ``amz-sdk-request: attempt=N; max=M`` and ``amz-sdk-invocation-id``, an
    ``Idempotency-Key``. Four dictionary lookups when none is present."""
    attempt: int | None = None
    retries = environ.get("HTTP_X_STAINLESS_RETRY_COUNT")
    if retries is not None and retries.isdecimal() and len(retries) < 6:
        attempt = int(retries) + 1
    aws = environ.get("HTTP_AMZ_SDK_REQUEST")
    if aws is not None:
        for part in aws.split(";", 2):
            name, _, value = part.strip().partition("=")
            if name == "attempt" and value.isdecimal() and len(value) < 6:
                attempt = int(value)
    call_id = environ.get("HTTP_AMZ_SDK_INVOCATION_ID") or environ.get("HTTP_IDEMPOTENCY_KEY")
    if call_id is not None and not 0 < len(call_id) <= _CALL_ID_CHARS:
        call_id = None
    return attempt, call_id
