"""``LlmTestServer``: a running llmts server, one this object started (its process, ports and stop)
or one it attached to; it creates and finds ``SessionClient``s."""

from __future__ import annotations

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from llmts.client.control import (
    SERVER_ENV,
    SESSION_HEADER,
    ConfigInput,
    config_payload,
    is_session_id,
    new_session_id,
    server_error,
)
from llmts.client.session import SessionClient
from llmts.client.tls import trust_context

__all__ = ["LlmTestServer"]


def _popen(args: list[str], log_path: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )


# How ``LlmTestServer.start`` runs ``python -m llmts serve ...`` (its output to the log, a session of its
# own): a fresh interpreter. llmts's own test suite puts a fork server here (tests/support/server_template.py,
# docs/design/test-suite.md).
_launch: Callable[[list[str], Path, dict[str, str]], subprocess.Popen[bytes]] = _popen


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
        ca_file: str | Path | None = None,
        verify: bool = True,
    ) -> None:
        self.url = url.rstrip("/")
        self.control_key = control_key
        self.process = process
        self.log_path = log_path
        # An https server's certificate (``llmts serve --tls``, docs/tls.md): the file clients trust, or
        # None for the system's CAs; ``verify=False`` checks none.
        self.ca_file = str(ca_file) if ca_file is not None else None
        self.verify = verify
        self._ssl_context: ssl.SSLContext | None = None
        # Every server process of ``llmts serve --workers N`` (each owns its own sessions); ``url`` first.
        self.urls = [u.rstrip("/") for u in urls] if urls else [self.url]
        self._members: dict[str, LlmTestServer] = {self.url: self}

    # --- lifecycle ----------------------------------------------------------------------------------

    @classmethod
    def attach(
        cls,
        url: str | list[str],
        *,
        control_key: str | None = None,
        timeout: float = 10.0,
        ca_file: str | Path | None = None,
        verify: bool = True,
    ) -> LlmTestServer:
        """A running server; a list of URLs is one server of several processes (``llmts serve --workers``,
        in their order), whose sessions ``create_session`` spreads by id. An ``https`` server is trusted
        through ``ca_file`` (its certificate, e.g. from ``llmts serve --tls``), else the system's CAs;
        ``verify=False`` checks no certificate."""
        urls = [url] if isinstance(url, str) else list(url)
        server = cls(urls[0], control_key=control_key, urls=urls, ca_file=ca_file, verify=verify)
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
        tls: bool = False,
    ) -> LlmTestServer:
        """Start ``llmts serve`` as a subprocess on a free port and wait until ``/health`` answers.

        The server logs to ``log_path``; it also stops by itself when ``parent_pid`` (default: this
        process) exits, so a killed test run never leaves a server behind. ``workers`` > 1 starts that
        many server processes (``llmts serve --workers``), each on its own port and listed in ``urls``;
        ``create_session`` then spreads sessions over them by id (docs/deployment.md). ``env`` adds to
        (or, with ``""``, blanks) the server's environment, e.g. the AWS credentials it signs Bedrock
        upstream requests with (docs/recording.md). ``tls=True`` serves https with a certificate generated
        for it (``llmts serve --tls``): ``ca_file`` is its path, and the session's SDK clients trust it
        (docs/tls.md).
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
        ca_file = None
        if tls:  # generated into the working directory, so it goes with it
            args += ["--tls", "--tls-dir", str(workdir / "tls")]
            ca_file = workdir / "tls" / "cert.pem"
        if fixtures is not None:
            if isinstance(fixtures, str | Path):
                args += ["--fixtures", str(fixtures)]
            else:
                fixtures_path = workdir / "fixtures.json"
                fixtures_path.write_text(json.dumps(config_payload(fixtures)))
                args += ["--fixtures", str(fixtures_path)]
        args += extra_args or []
        # Settings come from the arguments above, never from LLMTS_* variables this process happens to have.
        env_vars = {key: value for key, value in os.environ.items() if key not in SERVER_ENV}
        env_vars.update(env or {})
        process = _launch(args, log_path, env_vars)
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
        server = cls(
            urls[0], control_key=control_key, process=process, log_path=log_path, urls=urls, ca_file=ca_file
        )
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
            except OSError as exc:
                if isinstance(getattr(exc, "reason", exc), ssl.SSLCertVerificationError):
                    raise  # not trusted (docs/tls.md): waiting would not change that
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.url}/health did not answer within {timeout} s")
            time.sleep(0.02)

    def health(self) -> bool:
        with urllib.request.urlopen(self.url + "/health", timeout=5, context=self.ssl_context()) as response:
            return bool(response.status == 200)

    def ssl_context(self) -> ssl.SSLContext | None:
        """An ``ssl.SSLContext`` trusting this server (``ca_file``, else the system's CAs; none checked with
        ``verify=False``), made once; None for an ``http`` server. The control calls and the SDK clients of
        its sessions use it (docs/tls.md)."""
        if not self.url.startswith("https://"):
            return None
        if self._ssl_context is None:
            self._ssl_context = trust_context(self.ca_file, self.verify)
        return self._ssl_context

    def worker_restarts(self) -> list[str]:
        """``"URL: reason"`` for each server process whose gunicorn worker died and was replaced, losing
        its sessions (its ``GET /ready`` says so from then on); empty when none did (docs/deployment.md,
        "When a worker dies"). The pytest plugin fails a run whose servers report one."""
        reasons = []
        for member in self.members():
            try:
                with urllib.request.urlopen(
                    member.url + "/ready", timeout=5, context=member.ssl_context()
                ) as response:
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
        status, response_headers, body = self._send(method, path, data, self._headers(headers, session_id))
        return status, response_headers, json.loads(body) if body else None

    def request_text(self, method: str, path: str, *, session_id: str | None = None) -> str:
        """Like ``request`` for routes that answer text (NDJSON exports)."""
        return self._send(method, path, None, self._headers({}, session_id))[2].decode()

    def _headers(self, headers: dict[str, str], session_id: str | None) -> dict[str, str]:
        """``headers`` with the control key and the session header."""
        if self.control_key:
            headers["Authorization"] = f"Bearer {self.control_key}"
        if session_id is not None:
            headers[SESSION_HEADER] = session_id
        return headers

    def _send(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """One control call over HTTP: (status, headers, body), or ``ServerError`` for an error answer."""
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30, context=self.ssl_context()) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            raise server_error(exc.code, exc.read()) from None

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
            member = self._members[url] = LlmTestServer(
                url, control_key=self.control_key, ca_file=self.ca_file, verify=self.verify
            )
        return member

    def owner(self, session_id: str) -> LlmTestServer:
        """The server process that owns ``session_id``: its id's number modulo the process count
        (``default`` and other ids: the first), the rule docs/deployment.md gives every client."""
        if len(self.urls) == 1 or not is_session_id(session_id):
            return self
        return self._member(self.urls[int(session_id[4:], 16) % len(self.urls)])

    def create_session(
        self, session_id: str | None = None, *, config: ConfigInput | None = None, label: str | None = None
    ) -> SessionClient:
        """A new session under a client-chosen id (``PUT /admin-api/sessions/{id}``; generated unless
        given), on the process that owns that id, so a load balancer hashing on the id routes its
        creation and traffic alike. ``config`` configures it and ``label`` (at most 200 characters)
        names it in the same request."""
        session_id = session_id or new_session_id()
        owner = self.owner(session_id)
        payload = config_payload(config) if config is not None else None
        body = payload if label is None else {**(payload or {}), "label": label}
        _, _, info = owner.request("PUT", f"/admin-api/sessions/{session_id}", body)
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

    def sessions(
        self,
        *,
        label: str | None = None,
        label_contains: str | None = None,
        test_outcome: str | None = None,
    ) -> list[dict[str, Any]]:
        """The sessions of every server process (``default`` once per process), optionally only those
        with this exact ``label``, a label containing ``label_contains`` (any case), or this
        ``test_outcome``."""
        filters = {"label": label, "label_contains": label_contains, "test_outcome": test_outcome}
        query = urllib.parse.urlencode({name: value for name, value in filters.items() if value is not None})
        listing: list[dict[str, Any]] = []
        for member in self.members():
            listing.extend(member.request("GET", "/admin-api/sessions" + (f"?{query}" if query else ""))[2])
        return listing
