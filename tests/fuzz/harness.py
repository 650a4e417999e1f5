"""The fuzz harness: one real server per test module, a raw HTTP/1.1 client, and the properties every
answer must have (docs/contributing.md, "Fuzzing and soak").

Properties checked for every generated request:

- the server answers, with a status below 500;
- an error answer is JSON in the right envelope: the provider's on a provider route, the control one
  (``{"error": {"code", "message", "details"}}``) everywhere else and for malformed HTTP;
- every line the server logged since the previous request is an access-log line or llmts's one-line
  note about malformed HTTP: no traceback, no "unhandled error", no line a client wrote.

After each family the server must still answer ``/health``.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmts import ConfigBuilder, LlmTestServer
from tests.support.servers import discard

CONTROL_KEY = "fuzz-control-key"
# Client text that would start a forged log line if the server logged it verbatim.
FORGED = "FORGED-LOG-LINE"

# Examples per family: a bounded run in the default suite, a deep one under ``pytest -m fuzz``.
BOUNDED_EXAMPLES = int(os.environ.get("LLMTS_FUZZ_EXAMPLES", "200"))
DEEP_EXAMPLES = int(os.environ.get("LLMTS_FUZZ_DEEP_EXAMPLES", "10000"))
# A deep family takes minutes (the default pytest-timeout of setup.cfg is for ordinary tests).
DEEP_TIMEOUT = 3600


def fuzz_settings(examples: int, *, derandomize: bool) -> settings:
    return settings(
        max_examples=examples,
        derandomize=derandomize,
        deadline=None,
        database=None,  # no .hypothesis directory in the work tree; failures print their reproducer
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
        ],
    )


# The bounded run is part of the default suite and CI: the same examples every run, so a red build is
# always a change's doing (LLMTS_FUZZ_RANDOM=1 explores instead). The deep run explores: new examples
# each time, and what it finds becomes a regression test (docs/contributing.md, "Fuzzing and soak").
BOUNDED = fuzz_settings(BOUNDED_EXAMPLES, derandomize=os.environ.get("LLMTS_FUZZ_RANDOM") != "1")
DEEP = fuzz_settings(DEEP_EXAMPLES, derandomize=False)

_ACCESS_LINE = re.compile(r'^\S+ - \S+ \[[^\]]+\] "[^"]*(?:\\"[^"]*)*" \S+ \S+ "[^"]*" "[^"]*"$')
_REJECTION_LINE = re.compile(r"^llmts: rejected malformed HTTP from [\x20-\x7e]+$")
_GUNICORN_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d [^\]]+\] \[\d+\] \[INFO\] [\x20-\x7e]+$")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


# Well below the server's keep-alive deadline (docs/server.md: 30 s by default); between two fuzz tests
# of a module, other work may keep the connection idle longer than that on a loaded machine.
_IDLE_RECONNECT_SECONDS = 5.0


class FuzzServer:
    """A dedicated llmts server, a keep-alive raw connection to it, and its log read as it grows."""

    def __init__(self, server: LlmTestServer) -> None:
        self.server = server
        assert server.log_path is not None
        self._log_path = server.log_path
        self._log_offset = 0
        self._sock: socket.socket | None = None
        self._last_used = 0.0
        self.requests = 0
        self.statuses: Counter[int] = Counter()  # answers by status, for the deep run's figures
        self.port = int(server.url.rsplit(":", 1)[1])

    # --- HTTP ---------------------------------------------------------------------------------------

    def send(
        self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> Answer:
        """One request as raw bytes (nothing validated or normalised on the way), one answer."""
        lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")
        answer = self.send_raw(head + body, method)
        connection = {name.lower(): value for name, value in (headers or {}).items()}.get("connection")
        if connection is not None and connection.strip().lower() != "keep-alive":
            self.close()  # the server closes after answering, without saying so
        return answer

    def send_raw(self, data: bytes, method: str = "GET") -> Answer:
        if self._sock is not None and time.monotonic() - self._last_used > _IDLE_RECONNECT_SECONDS:
            # The server may be closing this kept-alive connection right now (its keep-alive deadline):
            # a request written into that close would be lost without an answer, so start afresh.
            self.close()
        if self._sock is None:
            self._sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock = self._sock
        self.requests += 1
        try:
            sock.sendall(data)
        except OSError:  # the server closed a kept-alive connection just now: one retry on a fresh one
            self.close()
            return self.send_raw(data, method)
        response = http.client.HTTPResponse(sock, method=method)
        try:
            response.begin()
            body = response.read()
        except Exception:
            self.close()
            raise
        self._last_used = time.monotonic()
        if response.will_close:
            self.close()
        self.statuses[response.status] += 1
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    # --- log ----------------------------------------------------------------------------------------

    def new_log_lines(self) -> list[str]:
        with open(self._log_path, "rb") as log:
            log.seek(self._log_offset)
            data = log.read()
        cut = data.rfind(b"\n") + 1  # a line still being written is read next time
        self._log_offset += cut
        return data[:cut].decode("utf-8", "replace").splitlines()

    def check(self, answer: Answer, family: str, method: str) -> None:
        """The answer's properties and the log's, with the server's new log lines in any failure."""
        lines = self.new_log_lines()
        try:
            assert_envelope(answer, family, method)
        except AssertionError as failure:
            raise AssertionError(f"{failure}\nserver log:\n" + "\n".join(lines)) from None
        self.assert_lines_clean(lines)

    def assert_log_clean(self) -> None:
        self.assert_lines_clean(self.new_log_lines())

    def assert_lines_clean(self, lines: list[str]) -> None:
        for line in lines:
            assert FORGED not in line.split(" ", 1)[0], f"a client wrote a log line: {line!r}"
            assert "Traceback" not in line and "unhandled error" not in line, f"server log: {line!r}"
            assert _ACCESS_LINE.match(line) or _REJECTION_LINE.match(line) or _GUNICORN_LINE.match(line), (
                f"unexpected server log line: {line!r}"
            )

    def assert_healthy(self) -> None:
        answer = self.send("GET", "/health")
        assert answer.status == 200 and answer.json() == {"status": "ok"}


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[FuzzServer]:
    """One real server for the whole module, its default session answering every inference request."""
    fixtures = ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("fuzzed").build()
    server = LlmTestServer.start(control_key=CONTROL_KEY, fixtures=fixtures)
    target = FuzzServer(server)
    try:
        target.new_log_lines()  # start-up lines
        yield target
        target.assert_healthy()
        import time

        time.sleep(0.2)  # the last access-log lines
        target.assert_log_clean()
    finally:
        target.close()
        discard(server)


# --- envelopes --------------------------------------------------------------------------------------


def family_of(target: str, prefixes: dict[str, str]) -> str:
    """Which envelope the app must answer ``target`` in: a provider namespace, or ``control``."""
    path = unquote(target.split("?", 1)[0], encoding="latin-1")
    if path.startswith("/sessions/"):
        path = "/" + path[len("/sessions/") :].partition("/")[2]
    if path.startswith("/admin-api"):
        return "control"
    for prefix, namespace in prefixes.items():
        if path == prefix or path.startswith(prefix + "/"):
            return namespace
    return "control"


def assert_envelope(answer: Answer, family: str, method: str) -> None:
    """An error answer is JSON in ``family``'s envelope (malformed HTTP: the control one, anywhere)."""
    assert answer.status < 500, (answer.status, answer.body[:500])
    if method == "HEAD":
        return
    if answer.status < 400:
        if answer.headers.get("content-type", "").startswith("application/json") and answer.body:
            json.loads(answer.body)
        return
    body = json.loads(answer.body)
    assert isinstance(body, dict), body
    refused = body.get("error")
    if isinstance(refused, dict) and refused.get("code") == "malformed_http_request":
        family = "control"  # the HTTP server's own answer: the control envelope on any path
    if family == "cohere" and "error" not in body:  # Cohere's flat envelope: {"id", "message", "code"}
        assert set(body) == {"id", "message", "code"}, body
        assert all(isinstance(body[key], str) for key in body), body
        return
    if family == "bedrock":  # AWS rest-json: the x-amzn-ErrorType header and {"message"}
        assert isinstance(answer.headers.get("x-amzn-errortype"), str), answer.headers
        assert set(body) == {"message"} and isinstance(body["message"], str), body
        return
    error = body.get("error")
    if family in ("mcp", "a2a"):  # JSON-RPC: {"jsonrpc": "2.0", "id", "error": {"code": int, "message": str}}
        assert body.get("jsonrpc") == "2.0" and "id" in body and isinstance(error, dict), body
        assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), body
        return
    if family == "ollama" and not isinstance(error, dict):  # Ollama's native envelope: {"error": "<text>"}
        assert set(body) == {"error"} and isinstance(error, str) and error, body
        return
    assert isinstance(error, dict), body
    if family == "control":
        assert set(error) == {"code", "message", "details"}, body
        assert isinstance(error["code"], str) and isinstance(error["message"], str), body
    elif family == "azure-openai" and set(error) == {"code", "message"}:  # Azure's own (DeploymentNotFound)
        assert isinstance(error["code"], str) and isinstance(error["message"], str), body
    elif family in ("openai", "azure-openai"):
        assert {"message", "type", "param", "code"} <= set(error), body
        assert isinstance(error["message"], str) and isinstance(error["type"], str), body
    elif family == "anthropic":
        assert body.get("type") == "error" and isinstance(error.get("type"), str), body
        assert isinstance(error.get("message"), str), body
    elif family == "gemini":
        assert error.get("code") == answer.status and isinstance(error.get("status"), str), body
        assert isinstance(error.get("message"), str), body
    elif family == "bedrock":
        pass  # checked before: its envelope has no "error" object
    else:  # pragma: no cover - a family the harness does not know
        raise AssertionError(f"unknown family {family}")


# --- running a family ---------------------------------------------------------------------------------

Request = tuple[str, str, dict[str, str], bytes]


def check_request(server: FuzzServer, request: Request, prefixes: dict[str, str]) -> None:
    """Send one generated request; its answer must be in the envelope ``family_of`` names for it."""
    method, target, request_headers, body = request
    answer = server.send(method, target, request_headers, body)
    server.check(answer, family_of(target, prefixes), method)


def survive(
    server: FuzzServer,
    examples: st.SearchStrategy[Any],
    check: Callable[[Any], None],
    profile: settings,
    family: str,
) -> None:
    """Every example of ``examples`` through ``check`` under ``profile`` (``BOUNDED`` or ``DEEP``), then
    the server must still answer; a deep run prints its requests by status (shown with ``-rP``), the
    figures docs/contributing.md asks a deep run to report."""

    @profile
    @given(example=examples)
    def run(example: Any) -> None:
        check(example)

    sent, statuses = server.requests, server.statuses.copy()
    run()
    server.assert_healthy()
    if profile is DEEP:
        by_status = dict(sorted((server.statuses - statuses).items()))
        print(f"deep fuzz {family}: {server.requests - sent} requests, by status {by_status}")
