"""Python API: start or attach to a server, manage sessions, and get official SDK clients bound to them.

    with LlmTestServer.start() as server:
        session = server.create_session()
        session.configure(ConfigBuilder().scenario().text("Hello!").build())
        reply = session.openai_client().chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "Hi"}]
        )

Only the standard library is used for the control API; each provider SDK is imported when its client is
first asked for.
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmts.conversation_client import CONVERSATION_HEADER, ConversationClient, explained_request
from llmts.providers.catalog import CATALOG
from llmts.schema.builder import ConfigBuilder, ConversationBuilder, ScenarioBuilder, StepBuilder
from llmts.schema.config import SessionConfig
from llmts.schema.journal import JournalQuery
from llmts.schema.sdk_env import sdk_environment
from llmts.schema.verify import VerificationRequest, VerificationResult
from llmts.sdk_shortcuts import SdkClientShortcuts

__all__ = [
    "DEFAULT_API_KEY",
    "ConversationClient",
    "LlmTestServer",
    "ServerError",
    "SessionClient",
    "new_session_id",
]

# The key SDK clients send when the session configures no provider credential (SDKs insist on one).
DEFAULT_API_KEY = "llmts-test-key"
_SESSION_HEADER = "X-Llm-Test-Server-Session"
_SERVER_ENV = frozenset(
    {
        "LLMTS_HOST",
        "LLMTS_PORT",
        "LLMTS_CONTROL_KEY",
        "LLMTS_FIXTURES",
        "LLMTS_MAX_BODY_BYTES",
        "LLMTS_MAX_SESSIONS",
        "LLMTS_WORKER_CLASS",
        "LLMTS_WORKERS",
        "LLMTS_METRICS_KEY",
        "LLMTS_DRAIN_SECONDS",
    }
)

ConfigInput = (
    SessionConfig | ConfigBuilder | ScenarioBuilder | ConversationBuilder | StepBuilder | dict[str, Any]
)


def _query_string(query: dict[str, Any], typed: JournalQuery | None = None) -> str:
    if typed is not None:
        query = {**typed.model_dump(mode="json", by_alias=True, exclude_defaults=True), **query}
    pairs = []
    for key, value in query.items():
        if value is None:
            continue
        name = "from" if key == "from_" else key
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        pairs.append((name, text))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


class ServerError(Exception):
    """A control API call failed; ``code``, ``message`` and ``details`` come from the server's error body."""

    def __init__(self, status: int, code: str, message: str, details: list[Any] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []


def _config_payload(config: ConfigInput) -> dict[str, Any]:
    if isinstance(config, ScenarioBuilder | ConversationBuilder | StepBuilder):
        config = config.config
    if isinstance(config, ConfigBuilder):
        return config.to_dict()
    if isinstance(config, SessionConfig):
        payload: dict[str, Any] = config.model_dump(mode="json")
        return payload
    if isinstance(config, dict):
        return config
    raise TypeError(
        f"configure() takes a SessionConfig, a ConfigBuilder or a dict, not {type(config).__name__}"
    )


def _server_error(exc: urllib.error.HTTPError) -> ServerError:
    raw = exc.read()
    try:
        error = json.loads(raw)["error"]
    except (ValueError, KeyError, TypeError):
        return ServerError(exc.code, "http_error", raw.decode(errors="replace")[:500])
    return ServerError(exc.code, error.get("code", ""), error.get("message", ""), error.get("details"))


class LlmTestServer:
    """A running llmts server: one this object started (``start``) or one it attached to (``attach``)."""

    def __init__(
        self,
        url: str,
        *,
        control_key: str | None = None,
        process: subprocess.Popen[bytes] | None = None,
        log_path: Path | None = None,
        urls: list[str] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.control_key = control_key
        self.process = process
        self.log_path = log_path
        # Every server process of ``llmts serve --workers N`` (each owns its own sessions); ``url`` first.
        self.urls = [u.rstrip("/") for u in urls] if urls else [self.url]
        self._members: dict[str, LlmTestServer] = {self.url: self}

    # --- lifecycle ----------------------------------------------------------------------------------

    @classmethod
    def attach(
        cls, url: str | list[str], *, control_key: str | None = None, timeout: float = 10.0
    ) -> LlmTestServer:
        """A running server; a list of URLs is one server of several processes (``llmts serve --workers``,
        in their order), whose sessions ``create_session`` spreads by id."""
        urls = [url] if isinstance(url, str) else list(url)
        server = cls(urls[0], control_key=control_key, urls=urls)
        for member in server.members():
            member.wait_healthy(timeout)
        return server

    @classmethod
    def start(
        cls,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        control_key: str | None = None,
        fixtures: ConfigInput | str | Path | None = None,
        access_log: bool = True,
        parent_pid: int | None = None,
        startup_timeout: float = 30.0,
        extra_args: list[str] | None = None,
        workers: int = 1,
        env: Mapping[str, str] | None = None,
    ) -> LlmTestServer:
        """Start ``llmts serve`` as a subprocess on a free port and wait until ``/health`` answers.

        The server logs to ``log_path``; it also stops by itself when ``parent_pid`` (default: this
        process) exits, so a killed test run never leaves a server behind. ``workers`` > 1 starts that
        many server processes (``llmts serve --workers``), each on its own port and listed in ``urls``;
        ``create_session`` then spreads sessions over them by id (docs/deployment.md). ``env`` adds to
        (or, with ``""``, blanks) the server's environment, e.g. the AWS credentials it signs Bedrock
        upstream requests with (docs/recording.md).
        """
        workdir = Path(tempfile.mkdtemp(prefix="llmts-"))
        ready_file = workdir / "url"
        log_path = workdir / "server.log"
        args = [sys.executable, "-m", "llmts", "serve", "--host", host, "--port", str(port)]
        args += ["--parent-pid", str(parent_pid or os.getpid()), "--ready-file", str(ready_file)]
        if control_key:
            args += ["--control-key", control_key]
        if not access_log:
            args.append("--no-access-log")
        if workers > 1:
            args += ["--workers", str(workers)]
        if fixtures is not None:
            if isinstance(fixtures, str | Path):
                args += ["--fixtures", str(fixtures)]
            else:
                fixtures_path = workdir / "fixtures.json"
                fixtures_path.write_text(json.dumps(_config_payload(fixtures)))
                args += ["--fixtures", str(fixtures_path)]
        args += extra_args or []
        # Settings come from the arguments above, never from LLMTS_* variables this process happens to have.
        env_vars = {key: value for key, value in os.environ.items() if key not in _SERVER_ENV}
        env_vars.update(env or {})
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                args,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env_vars,
            )
        deadline = time.monotonic() + startup_timeout
        while not ready_file.exists():
            if process.poll() is not None:
                raise RuntimeError(
                    f"llmts exited with {process.returncode} during start-up:\n{log_path.read_text()}"
                )
            if time.monotonic() > deadline:
                process.kill()
                raise TimeoutError(f"llmts did not start within {startup_timeout} s:\n{log_path.read_text()}")
            time.sleep(0.02)
        urls = ready_file.read_text().split()  # one URL per server process
        server = cls(urls[0], control_key=control_key, process=process, log_path=log_path, urls=urls)
        try:
            for member in server.members():
                member.wait_healthy(max(1.0, deadline - time.monotonic()))
        except Exception:
            server.stop()
            raise
        return server

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def wait_healthy(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.health():
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.url}/health did not answer within {timeout} s")
            time.sleep(0.02)

    def health(self) -> bool:
        with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
            return bool(response.status == 200)

    def worker_restarts(self) -> list[str]:
        """``"URL: reason"`` for each server process whose gunicorn worker died and was replaced, losing
        its sessions (its ``GET /ready`` says so from then on); empty when none did (docs/deployment.md,
        "When a worker dies"). The pytest plugin fails a run whose servers report one."""
        reasons = []
        for member in self.members():
            try:
                with urllib.request.urlopen(member.url + "/ready", timeout=5) as response:
                    body = response.read()
            except urllib.error.HTTPError as exc:
                body = exc.read()
            try:
                ready = json.loads(body)
            except ValueError:
                continue
            if isinstance(ready, dict) and ready.get("status") == "worker_restarted":
                reasons.append(f"{member.url}: {ready.get('reason')}")
        return reasons

    def stop(self, timeout: float = 10.0) -> None:
        """Stop a server this object started (SIGTERM, then SIGKILL) and remove its working directory
        (log included); attached servers are left running."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)
        if self.log_path is not None:
            shutil.rmtree(self.log_path.parent, ignore_errors=True)

    def __enter__(self) -> LlmTestServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- control API --------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        session_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        """Call the control API; returns (status, headers, decoded JSON) or raises ``ServerError``."""
        data = None if payload is None else json.dumps(payload).encode()
        headers = dict(headers or {})
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.control_key:
            headers["Authorization"] = f"Bearer {self.control_key}"
        if session_id is not None:
            headers[_SESSION_HEADER] = session_id
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                body = response.read()
                return response.status, dict(response.headers), json.loads(body) if body else None
        except urllib.error.HTTPError as exc:
            raise _server_error(exc) from None

    def request_text(self, method: str, path: str, *, session_id: str | None = None) -> str:
        """Like ``request`` for routes that answer text (NDJSON exports)."""
        headers = {"Authorization": f"Bearer {self.control_key}"} if self.control_key else {}
        if session_id is not None:
            headers[_SESSION_HEADER] = session_id
        req = urllib.request.Request(self.url + path, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return str(response.read().decode())
        except urllib.error.HTTPError as exc:
            raise _server_error(exc) from None

    def process_stats(self) -> dict[str, Any]:
        """Greenlets, open sockets and RSS of the server's worker (for leak checks)."""
        _, _, stats = self.request("GET", "/admin-api/process")
        return dict(stats)

    def members(self) -> list[LlmTestServer]:
        """One handle per server process (just this one unless started with ``workers``)."""
        return [self._member(url) for url in self.urls]

    def _member(self, url: str) -> LlmTestServer:
        member = self._members.get(url)
        if member is None:
            member = self._members[url] = LlmTestServer(url, control_key=self.control_key)
        return member

    def owner(self, session_id: str) -> LlmTestServer:
        """The server process that owns ``session_id``: its id's number modulo the process count
        (``default`` and other ids: the first), the rule docs/deployment.md gives every client."""
        if len(self.urls) == 1 or not _is_session_id(session_id):
            return self
        return self._member(self.urls[int(session_id[4:], 16) % len(self.urls)])

    def create_session(
        self, session_id: str | None = None, *, config: ConfigInput | None = None
    ) -> SessionClient:
        """A new session under a client-chosen id (``PUT /admin-api/sessions/{id}``; generated unless
        given), on the process that owns that id, so a load balancer hashing on the id routes its
        creation and traffic alike. ``config`` configures it in the same request."""
        session_id = session_id or new_session_id()
        owner = self.owner(session_id)
        payload = _config_payload(config) if config is not None else None
        _, _, info = owner.request("PUT", f"/admin-api/sessions/{session_id}", payload)
        session = SessionClient(owner, info["id"], info["provider_base"])
        if payload is not None:
            session._credentials = dict(payload.get("provider_credentials") or {})
        return session

    def session(self, session_id: str = "default") -> SessionClient:
        """A handle on an existing session (``default`` unless named), on the process that owns it."""
        owner = self.owner(session_id)
        base = owner.url if session_id == "default" else f"{owner.url}/sessions/{session_id}"
        return SessionClient(owner, session_id, base)

    @property
    def default_session(self) -> SessionClient:
        return self.session("default")

    def sessions(self) -> list[dict[str, Any]]:
        """The sessions of every server process (``default`` once per process)."""
        listing: list[dict[str, Any]] = []
        for member in self.members():
            listing.extend(member.request("GET", "/admin-api/sessions")[2])
        return listing


def new_session_id() -> str:
    """A fresh random session id (``ses_`` + 32 lowercase hex), as the server would mint it."""
    return "ses_" + secrets.token_hex(16)


def _is_session_id(session_id: str) -> bool:
    return len(session_id) == 36 and session_id.startswith("ses_") and _HEX.issuperset(session_id[4:])


_HEX = frozenset("0123456789abcdef")


class SessionClient(SdkClientShortcuts):
    """One session: configure it, reset it, and get official SDK clients bound to it."""

    def __init__(self, server: LlmTestServer, session_id: str, provider_base: str) -> None:
        self.server = server
        self.id = session_id
        self.provider_base = provider_base.rstrip("/")
        self._credentials: dict[str, str] | None = None

    def __repr__(self) -> str:
        return f"SessionClient(id={self.id!r}, provider_base={self.provider_base!r})"

    def configure(self, config: ConfigInput) -> dict[str, Any]:
        """Replace the session's configuration atomically; returns the effective configuration."""
        _, _, result = self.server.request(
            "POST", "/admin-api/configure", _config_payload(config), session_id=self.id
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
            "GET", "/admin-api/requests" + _query_string(filters, query), session_id=self.id
        )
        return list(entries)

    def export(self, format: str = "json", query: JournalQuery | None = None, **filters: Any) -> Any:
        """``GET /admin-api/requests/export``: the JSON envelope, or the NDJSON lines decoded one by one."""
        path = "/admin-api/requests/export" + _query_string({**filters, "format": format}, query)
        if format == "ndjson":
            return [
                json.loads(line)
                for line in self.server.request_text("GET", path, session_id=self.id).splitlines()
            ]
        _, _, payload = self.server.request("GET", path, session_id=self.id)
        return payload

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
        docs/server.md): base URLs under ``provider_base`` and the session's credentials."""
        return sdk_environment(self.provider_base, self.credential)

    def sdk_client(self, name: str, /, *, headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
        """The official SDK client ``name`` (``openai_client``, ``gemini_client``... as the providers declare
        them in their ``info.py``) bound to this session; ``headers`` are sent on every request, the
        client's ``option_keywords`` (google-genai's ``api_version``) go inside its options dict when not
        None, other kwargs go to the constructor. The SDK is imported on first use."""
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
        if spec.credential_header is None:
            kwargs.setdefault("api_key", self.credential(info.namespace))
        return factory(**kwargs)

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

    def for_conversation(self, conversation_id: str) -> ConversationClient:
        """SDK clients (and status/explain) for one conversation identity: every request they send carries
        ``X-Llm-Test-Server-Conversation: <conversation_id>``."""
        return ConversationClient(self, conversation_id)
