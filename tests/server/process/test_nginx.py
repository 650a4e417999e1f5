"""Many machines: three llmts instances behind nginx ``hash $llmts_session_key consistent``, with the
configuration docs/deployment.md publishes (read from that document, ports substituted).

nginx comes from Debian packages (``apt-get install -y nginx``; .ci/run installs it when missing). It
runs as a subprocess with its own prefix and configuration in a temporary directory, on free ports, and
is always stopped.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from tests.helpers import USER_HI, free_port, raw_request
from tests.support.servers import BackgroundStops

pytestmark = pytest.mark.sdk

ROOT = Path(__file__).resolve().parents[3]
_NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(path, os.X_OK)), None
)
_SESSION_HEADER = "X-Llm-Test-Server-Session"


def _wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def documented_config() -> str:
    """The ```nginx block of docs/deployment.md."""
    text = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    match = re.search(r"^```nginx\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert match is not None, "docs/deployment.md has no ```nginx block"
    return match.group(1)


def _config(prefix: Path, listen: int, upstreams: list[int]) -> str:
    snippet = documented_config()
    servers = re.findall(r"^\s*server 127\.0\.0\.1:\d+ max_fails=0;$", snippet, re.MULTILINE)
    assert len(servers) == len(upstreams), servers
    for line, port in zip(servers, upstreams, strict=True):
        snippet = snippet.replace(line, f"    server 127.0.0.1:{port} max_fails=0;", 1)
    snippet, listens = re.subn(r"listen 127\.0\.0\.1:\d+;", f"listen 127.0.0.1:{listen};", snippet)
    assert listens == 1
    temp = "\n".join(
        f"    {kind}_temp_path {prefix}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log warn;\n"
        f"events {{ worker_connections 512; }}\nhttp {{\n    access_log off;\n{temp}\n{snippet}\n}}\n"
    )


@dataclass
class Topology:
    url: str
    instances: list[LlmTestServer]
    ports: list[int]
    prefix: Path


@pytest.fixture(scope="module")
def topology(
    tmp_path_factory: pytest.TempPathFactory, background_stops: BackgroundStops
) -> Iterator[Topology]:
    """One balancer and its three instances for the module: each test works with sessions of its own and
    looks only at those (the restart test leaves a fresh instance in the topology)."""
    if _NGINX is None:
        pytest.skip("nginx is not installed (apt-get install -y nginx; .ci/run installs it)")
    ports = [free_port() for _ in range(3)]
    # Started side by side, stopped in the background: a start or stop is mostly waiting.
    with ThreadPoolExecutor(len(ports)) as pool:
        instances = list(pool.map(lambda port: LlmTestServer.start(port=port, access_log=False), ports))
    listen = free_port()
    prefix = tmp_path_factory.mktemp("nginx")
    config = prefix / "nginx.conf"
    config.write_text(_config(prefix, listen, ports))
    nginx = subprocess.Popen(
        [_NGINX, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log"), "-g", "daemon off;"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        try:
            _wait_port(listen)
        except OSError:
            nginx.kill()
            _, err = nginx.communicate(10)
            pytest.fail(f"nginx did not start: {err.decode()} {(prefix / 'error.log').read_text()}")
        yield Topology(f"http://127.0.0.1:{listen}", instances, ports, prefix)
    finally:
        if nginx.poll() is None:
            nginx.send_signal(signal.SIGTERM)
            try:
                nginx.wait(10)
            except subprocess.TimeoutExpired:
                nginx.kill()
                nginx.wait(10)
        for instance in instances:
            background_stops.stop(instance)


def _owned(instance: LlmTestServer, ids: set[str]) -> set[str]:
    """Which of ``ids`` (one test's sessions) live on ``instance``."""
    return {s["id"] for s in instance.sessions()} & ids


def _ask(client: Any) -> str:
    return str(
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content
    )


def _by_header(front: str, session: SessionClient) -> Any:
    return openai.OpenAI(
        base_url=f"{front}/openai/v1",
        api_key="k",
        max_retries=0,
        default_headers={_SESSION_HEADER: session.id},
    )


def _script(session: SessionClient) -> None:
    builder = ConfigBuilder().scenario()
    for turn in range(1, 7):
        builder = builder.text(f"{session.id}-{turn}")
    session.configure(builder)


def test_sessions_spread_and_each_sessions_traffic_lands_on_its_owner(topology: Topology) -> None:
    front = LlmTestServer.attach(topology.url)
    sessions = [front.create_session() for _ in range(24)]
    for session in sessions:
        assert session.provider_base == f"{topology.url}/sessions/{session.id}"  # the balancer's address
        _script(session)  # POST /admin-api/configure with the session header, through nginx

    ids = {session.id for session in sessions}
    owned = [_owned(instance, ids) for instance in topology.instances]
    assert all(owned), f"24 sessions spread over all three instances: {[len(o) for o in owned]}"
    assert set().union(*owned) == ids and sum(len(o) for o in owned) == len(ids), "each on exactly one"

    for session in sessions:
        by_path = session.openai_client(max_retries=0, _strict_response_validation=True)
        assert _ask(by_path) == f"{session.id}-1"
        assert _ask(_by_header(topology.url, session)) == f"{session.id}-2"
    for instance, mine in zip(topology.instances, owned, strict=True):
        for session_id in mine:
            journal = instance.session(session_id).requests()
            assert len(journal) == 2 and {e["provider"] for e in journal} == {"openai"}
        # An instance knows nothing of the others' sessions.
        stranger = next(iter(ids - mine))
        assert raw_request(instance.url, "GET", f"/admin-api/sessions/{stranger}").status == 404


def _stream_through(front: str, session: SessionClient) -> tuple[list[tuple[float, bytes]], bytes]:
    """A raw streamed chat request through nginx: (arrival time, bytes) of each read, and everything."""
    body = b'{"model":"gpt-4.1-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}'
    parts = urlsplit(front)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    path = f"/sessions/{session.id}/openai/v1/chat/completions"
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    reads: list[tuple[float, bytes]] = []
    while chunk := sock.recv(65536):
        reads.append((time.monotonic(), chunk))
    sock.close()
    return reads, b"".join(chunk for _, chunk in reads)


def test_streams_and_faults_pass_through_unbuffered(topology: Topology) -> None:
    front = LlmTestServer.attach(topology.url)
    session = front.create_session()
    paced = {"text": "a b c d", "chunks": ["a ", "b ", "c ", "d"], "pacing": {"tokens_per_second": 1}}
    early = {
        "text": "e f",
        "chunks": ["e ", "f"],
        "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
    }
    abort = {
        "text": "g h",
        "chunks": ["g ", "h"],
        "stream_delivery": {"mode": "abort_connection", "after_content_frames": 1},
    }
    session.configure({"scenarios": [{"responses": [paced, early, abort]}]})

    reads, whole = _stream_through(topology.url, session)
    assert whole.startswith(b"HTTP/1.1 200") and b"data: [DONE]" in whole
    first = next(at for at, chunk in reads if b'"content":"a "' in chunk)
    last = reads[-1][0]
    assert last - first > 1.0, "the first chunk must arrive before the rest is generated (no buffering)"

    cut = session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in cut if c.choices) == "e "

    _, aborted = _stream_through(topology.url, session)
    assert b'"content":"g "' in aborted and b'"content":"h"' not in aborted
    assert b"[DONE]" not in aborted and not aborted.endswith(b"\r\n0\r\n\r\n"), "no clean end after an abort"
    [entry] = session.requests(request_id=None, limit=1)
    assert entry["transport_outcome"] == "aborted"


def test_one_instance_restarting_affects_only_its_own_sessions(topology: Topology) -> None:
    front = LlmTestServer.attach(topology.url)
    sessions = [front.create_session() for _ in range(18)]
    for session in sessions:
        _script(session)
        assert _ask(session.openai_client(max_retries=0)) == f"{session.id}-1"
    ids = {session.id for session in sessions}
    owned = [_owned(instance, ids) for instance in topology.instances]
    assert all(owned)
    victim = 1
    topology.instances[victim].stop()
    try:
        for session in sessions:
            client = session.openai_client(max_retries=0)
            if session.id in owned[victim]:
                with pytest.raises(openai.InternalServerError):  # nginx's 502: nobody else answers for it
                    _ask(client)
            else:
                assert _ask(client) == f"{session.id}-2"  # untouched: its state goes on
    finally:
        topology.instances[victim] = LlmTestServer.start(port=topology.ports[victim], access_log=False)

    for session in sessions:
        client = session.openai_client(max_retries=0)
        if session.id in owned[victim]:
            with pytest.raises(openai.NotFoundError) as caught:  # the restarted instance lost them
                _ask(client)
            assert caught.value.code == "llm_test_server_session_not_found"
            recreated = front.create_session(session.id, config=ConfigBuilder().scenario().text("again"))
            assert recreated.id in _owned(topology.instances[victim], ids)
            assert _ask(client) == "again"
        else:
            assert _ask(client) == f"{session.id}-3"
