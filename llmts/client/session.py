"""``SessionClient``: one session of a server: configure, reset, read its journal, verify, and build the
official SDK clients bound to it."""

from __future__ import annotations

import importlib
import json
import ssl
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any
from urllib.parse import quote

from llmts.catalog.registry import CATALOG
from llmts.catalog.sdk_env import sdk_environment
from llmts.client.control import (
    DEFAULT_API_KEY,
    ConfigInput,
    ControlChannel,
    ServerError,
    config_payload,
    query_string,
)
from llmts.client.conversations import CONVERSATION_HEADER, ConversationClient, explained_request
from llmts.client.sdk_shortcuts import SdkClientShortcuts
from llmts.client.tls import NODE_CA_VARIABLE, sharing_default_context, trusting_kwargs
from llmts.schema.journal import JournalQuery
from llmts.schema.resilience import ResilienceReport
from llmts.schema.verify import VerificationRequest, VerificationResult

__all__ = ["SessionClient"]


# GET /admin-api/requests's largest page.
_PAGE = 500


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """A response header by name, whatever its case."""
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def _number(headers: Mapping[str, str], name: str) -> int | None:
    value = header_value(headers, name)
    return int(value) if value is not None and value.isdigit() else None


class SessionClient(SdkClientShortcuts):
    """One session: configure it, reset it, and get official SDK clients bound to it."""

    def __init__(self, server: ControlChannel, session_id: str, provider_base: str) -> None:
        self.server = server
        self.id = session_id
        self.provider_base = provider_base.rstrip("/")
        self._credentials: dict[str, str] | None = None

    def __repr__(self) -> str:
        return f"SessionClient(id={self.id!r}, provider_base={self.provider_base!r})"

    def configure(self, config: ConfigInput) -> dict[str, Any]:
        """Replace the session's configuration atomically; returns the effective configuration."""
        _, _, result = self.server.request(
            "POST", "/admin-api/configure", config_payload(config), session_id=self.id
        )
        effective: dict[str, Any] = result["configuration"]
        self._credentials = dict(effective.get("provider_credentials") or {})
        return effective

    def reset(self) -> None:
        self.server.request("POST", "/admin-api/reset", session_id=self.id)

    def configuration(self) -> dict[str, Any]:
        _, _, config = self.server.request("GET", "/admin-api/configuration", session_id=self.id)
        return dict(config)

    def delete(self) -> None:
        self.server.request("DELETE", f"/admin-api/sessions/{self.id}")

    def info(self) -> dict[str, Any]:
        """The session's description (``GET /admin-api/sessions/{id}``): counters, label, test outcome."""
        _, _, info = self.server.request("GET", f"/admin-api/sessions/{self.id}")
        return dict(info)

    def annotate(self, *, label: str | None = None, test_outcome: str | None = None) -> dict[str, Any]:
        """Set the session's ``label`` and/or ``test_outcome`` (``passed``, ``failed``, ``skipped``,
        ``error``); what is not given stays. Returns the session's description."""
        fields = {"label": label, "test_outcome": test_outcome}
        body = {name: value for name, value in fields.items() if value is not None}
        _, _, info = self.server.request("PUT", f"/admin-api/sessions/{self.id}", body)
        return dict(info)

    def recording(self, *, pacing: bool = False) -> dict[str, Any]:
        """What this recording session kept, as a configuration ``configure`` loads unchanged
        (``GET /admin-api/recording``; ``pacing`` adds the measured timing; docs/recording.md)."""
        query = "?pacing=true" if pacing else ""
        _, _, config = self.server.request("GET", "/admin-api/recording" + query, session_id=self.id)
        return dict(config)

    def requests(self, query: JournalQuery | None = None, /, **filters: Any) -> list[dict[str, Any]]:
        """Journal entries of this session (newest first); a ``JournalQuery`` and/or keyword filters as in
        ``GET /admin-api/requests`` (``from_`` for ``from``; booleans as Python bools)."""
        _, _, entries = self.server.request(
            "GET", "/admin-api/requests" + query_string(filters, query), session_id=self.id
        )
        return list(entries)

    def all_requests(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Every retained journal entry, oldest first, and the journal's counters (``total_observed``,
        ``evicted_count``, ``retained_byte_count``, ``retention_truncated``). Paged with the ``after``
        cursor, so eviction meanwhile skips nothing; it stops at what was observed when it began, so a
        test still making requests cannot keep it going."""
        entries: list[dict[str, Any]] = []
        counters: dict[str, Any] = {}
        cursor = 0
        observed: int | None = None
        while True:
            path = f"/admin-api/requests?order=asc&limit={_PAGE}" + (f"&after={cursor}" if cursor else "")
            _, headers, page = self.server.request("GET", path, session_id=self.id)
            if observed is None:
                observed = _number(headers, "X-Total-Observed")
                counters = {
                    "total_observed": observed,
                    "evicted_count": _number(headers, "X-Evicted-Count"),
                    "retained_byte_count": _number(headers, "X-Retained-Byte-Count"),
                    "retention_truncated": header_value(headers, "X-Retention-Truncated") == "true",
                }
            fresh = [entry for entry in page if observed is None or entry["sequence"] <= observed]
            entries.extend(fresh)
            if len(page) < _PAGE or len(fresh) < len(page):
                return entries, counters
            cursor = page[-1]["sequence"]

    def export(self, format: str = "json", query: JournalQuery | None = None, **filters: Any) -> Any:
        """``GET /admin-api/requests/export``: the JSON envelope, or the NDJSON lines decoded one by one."""
        path = "/admin-api/requests/export" + query_string({**filters, "format": format}, query)
        if format == "ndjson":
            return [
                json.loads(line)
                for line in self.server.request_text("GET", path, session_id=self.id).splitlines()
            ]
        _, _, payload = self.server.request("GET", path, session_id=self.id)
        return payload

    def resilience(self, query: JournalQuery | None = None, /, **filters: Any) -> ResilienceReport:
        """``GET /admin-api/resilience``: the verdict on each retry group among the journal entries the
        filters match (as in ``requests``, without paging)."""
        _, _, report = self.server.request(
            "GET", "/admin-api/resilience" + query_string(filters, query), session_id=self.id
        )
        return ResilienceReport.model_validate(report)

    def verify(
        self,
        request: VerificationRequest | dict[str, Any] | None = None,
        /,
        *,
        conversation: str | None = None,
        **fields: Any,
    ) -> VerificationResult:
        """``POST /admin-api/verify``: a ``VerificationRequest`` (or its JSON as a dict), or its fields as
        keyword arguments. ``conversation`` sends ``X-Llm-Test-Server-Conversation`` (scopes the journal).
        Returns the verdict; ``result.assert_passed()`` raises with a readable report."""
        if request is None:
            request = VerificationRequest(**fields)
        elif fields:
            raise TypeError("pass either a verification request or keyword fields, not both")
        payload = (
            request.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if isinstance(request, VerificationRequest)
            else request
        )
        headers = {CONVERSATION_HEADER: conversation} if conversation is not None else None
        _, _, verdict = self.server.request(
            "POST", "/admin-api/verify", payload, session_id=self.id, headers=headers
        )
        return VerificationResult.model_validate(verdict)

    def credential(self, provider: str) -> str:
        """The session's credential for ``provider`` (read from the server once), else a default key."""
        if self._credentials is None:
            try:
                self._credentials = dict(self.configuration().get("provider_credentials") or {})
            except (ServerError, OSError):
                return DEFAULT_API_KEY
        return self._credentials.get(provider, DEFAULT_API_KEY)

    def sdk_environment(self) -> dict[str, str]:
        """The environment variables that point the official SDKs at this session (``llmts env``,
        docs/server.md): base URLs under ``provider_base`` and the session's credentials; on ``https`` with
        a ``ca_file``, also ``NODE_EXTRA_CA_CERTS`` (it adds to Node's trust, docs/tls.md)."""
        environment = sdk_environment(self.provider_base, self.credential)
        if self._tls_trust_needed() and self.server.ca_file is not None:
            environment[NODE_CA_VARIABLE] = self.server.ca_file
        return environment

    @property
    def ca_file(self) -> str | None:
        """The certificate file this session's server is trusted through (``llmts serve --tls``), or None."""
        return self.server.ca_file

    def ssl_context(self) -> ssl.SSLContext | None:
        """An ``ssl.SSLContext`` trusting this session's server on ``https`` (None on ``http``): for clients
        the Python API does not build, e.g. a WebSocket (docs/tls.md)."""
        return self.server.ssl_context() if self.provider_base.startswith("https://") else None

    def websocket_connection_options(self) -> dict[str, Any]:
        """What the openai SDK's ``realtime.connect(websocket_connection_options=...)`` needs to trust this
        session's server: ``{"ssl": context}`` on ``https``, ``{}`` on ``http`` (websockets refuses ``ssl``
        for a ``ws://`` URL). google-genai's Live client needs nothing more than ``gemini_client()``."""
        context = self.ssl_context()
        return {"ssl": context} if context is not None else {}

    def _tls_trust_needed(self) -> bool:
        """Whether SDK clients must be told whom to trust: ``https`` with a certificate file or unverified
        (otherwise each SDK's own CA bundle decides)."""
        return self.provider_base.startswith("https://") and (
            self.server.ca_file is not None or not self.server.verify
        )

    def sdk_client(self, name: str, /, *, headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
        """The official SDK client ``name`` (``openai_client``, ``gemini_client``... as the providers declare
        them in their ``info.py``) bound to this session; ``headers`` are sent on every request, the
        client's ``option_keywords`` (google-genai's ``api_version``) go inside its options dict when not
        None, other kwargs go to the constructor. On ``https`` the client trusts the server's ``ca_file``
        (docs/tls.md). The SDK is imported on first use."""
        try:
            info, spec = CATALOG.sdk_client(name)
        except KeyError:
            known = ", ".join(CATALOG.sdk_client_names())
            raise ValueError(f"no SDK client {name!r}; the providers offer {known}") from None
        if spec.url_argument in kwargs:
            raise TypeError(f"{name}() sets {spec.url_argument} itself (to this session's provider base)")
        factory = getattr(importlib.import_module(spec.module), spec.factory)
        url = self.provider_base + spec.path
        if spec.credential_header is not None:
            bearer = {spec.credential_header: "Bearer " + self.credential(info.namespace)}
            headers = {**bearer, **(headers or {})}
        chosen = {key: kwargs.pop(key) for key in spec.option_keywords if key in kwargs}
        if spec.options_argument is not None:
            options: dict[str, Any] = {spec.url_argument: url}
            options.update((key, value) for key, value in chosen.items() if value is not None)
            options.update(kwargs.pop(spec.options_argument, None) or {})
            if headers:
                options[spec.headers_argument] = {**(options.get(spec.headers_argument) or {}), **headers}
            kwargs[spec.options_argument] = options
        else:
            kwargs[spec.url_argument] = url
            if headers:
                kwargs[spec.headers_argument] = {**(kwargs.get(spec.headers_argument) or {}), **headers}
        for key, value in spec.defaults:
            kwargs.setdefault(key, value)
        context = self.ssl_context() if spec.trust is not None and self._tls_trust_needed() else None
        if context is not None:
            trusting_kwargs(spec, kwargs, context, self.server.ca_file, self.server.verify)
        elif spec.trust is not None and self.provider_base.startswith("http://"):
            sharing_default_context(spec, kwargs)
        if spec.credential_header is None:
            kwargs.setdefault("api_key", self.credential(info.namespace))
        return factory(**kwargs)

    def mcp_url(self, name: str) -> str:
        """The Streamable HTTP endpoint of this session's MCP server ``name`` (docs/mcp.md)."""
        return f"{self.provider_base}/mcp/{name}"

    def mcp_session(self, name: str, /, **options: Any) -> AbstractAsyncContextManager[Any]:
        """An async context manager yielding an initialized official ``mcp.ClientSession`` connected to
        this session's MCP server ``name``; ``options`` go to ``llmts.client.mcp.connect_mcp`` (``headers``,
        ``timeout``, and ``ClientSession``'s callbacks). ``mcp`` is imported on first use."""
        from llmts.client.mcp import connect_mcp

        return connect_mcp(self.mcp_url(name), **options)

    def conversations(self, conversation_id: str | None = None) -> list[dict[str, Any]]:
        """``GET /admin-api/conversations``: the state of every conversation identity of this session
        (only ``conversation_id``'s when given)."""
        headers = {CONVERSATION_HEADER: conversation_id} if conversation_id is not None else None
        _, _, states = self.server.request(
            "GET", "/admin-api/conversations", session_id=self.id, headers=headers
        )
        return list(states)

    def queues(self) -> list[dict[str, Any]]:
        """``GET /admin-api/queues``: how far each scenario's response queue has advanced."""
        _, _, statuses = self.server.request("GET", "/admin-api/queues", session_id=self.id)
        return list(statuses)

    def usage(self) -> dict[str, Any]:
        """``GET /admin-api/usage``: tokens and cost since the last configure or reset, per provider and
        model (``models``), per provider (``providers``) and in all (``totals``), and the ``budget``
        (docs/journal.md, "Usage and cost"). ``cost_usd`` is null where a model has no price."""
        _, _, summary = self.server.request("GET", "/admin-api/usage", session_id=self.id)
        return dict(summary)

    def explain(
        self,
        request: Any,
        provider: str | None = None,
        *,
        conversation_id: str | None = None,
        credential: str | None = None,
    ) -> dict[str, Any]:
        """``POST /admin-api/match/explain``: which graph step or scenario ``request`` would select, and why
        the others did not, without changing anything. ``request`` is a normalized request (a dict with
        ``model``, ``messages`` [{role, text|content, tool_calls, tool_call_id}], ``tool_names``... or a
        ``NeutralRequest``); ``credential`` defaults to the one this session's SDK clients send."""
        body = explained_request(request)
        provider = provider or body.pop("provider", None) or CATALOG.default.namespace
        body.pop("provider", None)
        payload = {
            "provider_namespace": provider,
            "credential": credential if credential is not None else self.credential(provider),
            "request": body,
        }
        headers = {CONVERSATION_HEADER: conversation_id} if conversation_id is not None else None
        _, _, explanation = self.server.request(
            "POST", "/admin-api/match/explain", payload, session_id=self.id, headers=headers
        )
        return dict(explanation)

    def explain_wire(
        self,
        path: str,
        body: dict[str, Any],
        *,
        conversation_id: str | None = None,
        credential: str | None = None,
    ) -> dict[str, Any]:
        """``POST /admin-api/match/explain`` for the provider request itself: ``path`` is the provider route
        (``/anthropic/v1/messages``) and ``body`` its JSON body. It is parsed and checked by the route's
        strict rules as the real request would be (a broken rule is outcome ``rejected`` with its
        ``strict_rule``), then explained like ``explain``."""
        namespace = path.lstrip("/").split("/", 1)[0]
        if credential is None and namespace in CATALOG.namespaces:
            credential = self.credential(namespace)
        payload: dict[str, Any] = {"wire": {"path": path, "body": body}}
        if credential is not None:
            payload["credential"] = credential
        headers = {CONVERSATION_HEADER: conversation_id} if conversation_id is not None else None
        _, _, explanation = self.server.request(
            "POST", "/admin-api/match/explain", payload, session_id=self.id, headers=headers
        )
        return dict(explanation)

    def a2a_base_url(self, name: str) -> str:
        """Where this session's A2A agent ``name`` answers (docs/a2a.md): the URL an A2A client is given;
        its card is at ``{base}/.well-known/agent-card.json``."""
        return f"{self.provider_base}/a2a/{quote(name, safe='')}"

    def a2a_card_url(self, name: str) -> str:
        """The agent card of this session's A2A agent ``name``."""
        return self.a2a_base_url(name) + "/.well-known/agent-card.json"

    async def a2a_client(self, name: str, /, **client_config: Any) -> Any:
        """A connected official ``a2a-sdk`` client of this session's agent ``name`` (the card fetched and
        its interface chosen: 1.x speaks the 1.0 wire, 0.3.x the 0.3 wire). ``client_config`` goes to the
        SDK's ``ClientConfig`` (``streaming``, ``polling``, ``httpx_client``...); without an
        ``httpx_client`` the SDK makes one (httpx's 5 s read timeout) and ``await client.close()`` closes
        it. The SDK is imported on first use."""
        from a2a.client import ClientConfig, ClientFactory

        config = ClientConfig(**client_config)
        factory: Any = ClientFactory
        if hasattr(factory, "connect"):  # a2a-sdk 0.3
            return await factory.connect(self.a2a_base_url(name), client_config=config)
        return await factory(config).create_from_url(self.a2a_base_url(name))

    def for_conversation(self, conversation_id: str) -> ConversationClient:
        """SDK clients (and status/explain) for one conversation identity: every request they send carries
        ``X-Llm-Test-Server-Conversation: <conversation_id>``."""
        return ConversationClient(self, conversation_id)
