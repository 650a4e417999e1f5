"""llmts in the test process: an ``LlmtsApp`` reached without sockets, for tests whose subject is the wire
format (docs/contributing.md, "Which depth for which test").

``InProcessServer`` is an ``LlmTestServer`` whose control calls go through werkzeug's test client, so
``create_session``, ``configure``, ``requests``, ``verify``... are the real control API. Its sessions are
``InProcessSession``: ``sdk_client`` builds the official SDK client as ``SessionClient`` does and hands it
an HTTP client whose transport calls the app (``WSGITransport`` of the httpx the SDK uses). What the
request path does under gevent (deadlines, the cooperative yield, the socket the delivery faults cut) is
off here: tests about those use the real server (``llmts_session``, ``own_server_factory``).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from werkzeug.test import Client

from llmts import LlmTestServer, SessionClient
from llmts.catalog.registry import CATALOG
from llmts.client.control import server_error
from llmts.server.app import LlmtsApp
from tests.helpers import RawResponse, raw_request

__all__ = ["BASE_URL", "InProcessServer", "InProcessSession", "app_raw_request", "sdk_transport", "send_raw"]

# The URL the in-process app answers under (any Host is answered: ``LlmtsApp`` without a host policy).
BASE_URL = "http://llmts.in-process"


class InProcessServer(LlmTestServer):
    """The ``LlmTestServer`` interface over an ``LlmtsApp`` in this process."""

    def __init__(self, app: LlmtsApp | None = None, *, control_key: str | None = None) -> None:
        super().__init__(BASE_URL, control_key=control_key)
        self.app = app if app is not None else LlmtsApp(control_key=control_key)
        self.wsgi = delivered(self.app)
        self._client = Client(self.wsgi)

    def _send(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """``LlmTestServer``'s one transport seam, through werkzeug's test client instead of a socket."""
        response = self._client.open(path, base_url=BASE_URL, method=method, data=data, headers=headers)
        body = response.get_data()
        if response.status_code >= 400:
            raise server_error(response.status_code, body)
        return response.status_code, dict(response.headers), body

    def health(self) -> bool:
        return self._client.get("/health", base_url=BASE_URL).status_code == 200

    def worker_restarts(self) -> list[str]:
        return []

    def stop(self, timeout: float = 10.0) -> None:
        """Nothing runs: the app goes with this object."""

    def create_session(
        self, session_id: str | None = None, *, config: Any = None, label: str | None = None
    ) -> InProcessSession:
        return InProcessSession.of(super().create_session(session_id, config=config, label=label))

    def session(self, session_id: str = "default") -> InProcessSession:
        return InProcessSession.of(super().session(session_id))

    def raw(
        self,
        base_url: str,
        method: str,
        path: str,
        body: bytes | str | dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> RawResponse:
        """``tests.helpers.raw_request`` through the app: the same arguments, the same ``RawResponse``."""
        return app_raw_request(self.wsgi, base_url, method, path, body, headers)


def delivered(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """``app`` with each response delivered whole before the client reads it. The real server writes a
    response out (and journals how its delivery went) whether or not the client reads on; an SDK that
    stops at a stream's last event would otherwise leave the app's iterator, and the journal entry,
    unfinished. The chunks stay apart: a stream's frames arrive as the app yielded them."""

    def whole(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        result = app(environ, start_response)
        try:
            return list(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()

    return whole


def app_raw_request(
    app: Callable[..., Any],
    base_url: str,
    method: str,
    path: str,
    body: bytes | str | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> RawResponse:
    """One request to the WSGI ``app`` with exactly these headers (plus ``Content-Type:
    application/json`` unless given, as ``raw_request`` sends), the whole body read."""
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    full_path = urlsplit(base_url).path.rstrip("/") + path
    target, _, query = full_path.partition("?")
    response = Client(app).open(
        target, base_url=BASE_URL, method=method, data=body, headers=all_headers, query_string=query or None
    )
    return RawResponse(
        response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.get_data()
    )


def _httpx_of(client_class: type) -> ModuleType:
    """The httpx package an SDK's HTTP client class is built on (``httpx`` or ``httpx2``)."""
    for cls in client_class.__mro__:
        package = cls.__module__.split(".")[0]
        if package in ("httpx", "httpx2"):
            return importlib.import_module(package)
    raise TypeError(f"{client_class!r} is not an httpx client")


def _stainless_httpx(sdk: str) -> ModuleType:
    """openai and anthropic (both generated by Stainless) wrap the httpx client in ``_base_client``."""
    base = importlib.import_module(f"{sdk}._base_client")
    return _httpx_of(base.SyncHttpxClientWrapper)


def _genai_httpx() -> ModuleType:
    """The httpx package google-genai uses by default (it follows the transport it is given)."""
    try:
        api_client = importlib.import_module("google.genai._api_client")
        backend = getattr(api_client, "_DEFAULT_HTTP_CLIENT_BACKEND", "httpx")
        return importlib.import_module(backend)
    except ImportError:
        return importlib.import_module("httpx")


class InProcessSession(SessionClient):
    """A session of an ``InProcessServer``; its SDK clients call the app in this process."""

    server: InProcessServer

    @classmethod
    def of(cls, session: SessionClient) -> InProcessSession:
        assert isinstance(session.server, InProcessServer)
        bound = cls(session.server, session.id, session.provider_base)
        bound._credentials = session._credentials
        return bound

    def sdk_client(self, name: str, /, *, headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
        _, spec = CATALOG.sdk_client(name)
        app = self.server.wsgi
        where = (spec.module, spec.factory)
        if where in {("openai", "OpenAI"), ("openai", "AzureOpenAI"), ("anthropic", "Anthropic")}:
            httpx = _stainless_httpx(spec.module)
            kwargs.setdefault("http_client", httpx.Client(transport=httpx.WSGITransport(app=app)))
        elif where == ("llmts.providers.cohere.sdk", "client_v2"):
            # The factory puts extra headers on an httpx client of its own only when given none.
            httpx = importlib.import_module("httpx")
            kwargs.setdefault(
                "httpx_client",
                httpx.Client(transport=httpx.WSGITransport(app=app), headers=headers or {}, timeout=300),
            )
        elif where == ("ollama", "Client"):
            kwargs.setdefault("transport", importlib.import_module("httpx").WSGITransport(app=app))
        elif where == ("google.genai", "Client"):
            httpx = _genai_httpx()
            options = dict(kwargs.pop("http_options", None) or {})
            options["client_args"] = {
                **(options.get("client_args") or {}),
                "transport": httpx.WSGITransport(app=app),
            }
            kwargs["http_options"] = options
        else:
            raise TypeError(
                f"{name}() has no in-process transport (boto3 takes none; the async clients would need an "
                "async WSGI bridge): use the real server's llmts_session"
            )
        return super().sdk_client(name, headers=headers, **kwargs)

    def raw(
        self,
        method: str,
        path: str,
        body: bytes | str | dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> RawResponse:
        """A raw request under this session's provider base."""
        return self.server.raw(self.provider_base, method, path, body, headers)


def send_raw(
    target: SessionClient | LlmTestServer,
    method: str,
    path: str,
    body: bytes | str | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> RawResponse:
    """``raw_request`` under a session's provider base (or a server's root): through the app when it is
    in process, over a fresh connection to the real server otherwise (so a module's helpers serve both)."""
    base = target.provider_base if isinstance(target, SessionClient) else target.url
    server = target.server if isinstance(target, SessionClient) else target
    if isinstance(server, InProcessServer):
        return server.raw(base, method, path, body, headers)
    return raw_request(base, method, path, body, headers)


def sdk_transport(session: SessionClient, sdk: str) -> dict[str, Any]:
    """For an ``openai`` or ``anthropic`` client a test builds itself (its own base URL or auth): the
    ``http_client`` that reaches an in-process session's app; nothing for a session of a real server."""
    if not isinstance(session, InProcessSession):
        return {}
    httpx = _stainless_httpx(sdk)
    return {"http_client": httpx.Client(transport=httpx.WSGITransport(app=session.server.wsgi))}
