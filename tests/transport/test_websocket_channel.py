"""The WebSocket channel (llmts/transport/websocket.py) through real sockets: a monkey-patched gevent server
in a subprocess (tests/transport/websocket_echo_server.py, shaped like llmts's worker: deadlines act only
there) accepts with it and echoes; the clients are the ``websockets`` library and raw sockets for what a
well-behaved client never sends. A transport unit test, not an SDK-compatibility claim."""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

_SERVER = Path(__file__).with_name("websocket_echo_server.py")
_ROOT = Path(__file__).resolve().parents[2]
_HOST = "127.0.0.1"
_TEXT, _BINARY, _CLOSE, _PING, _PONG, _CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class _Server:
    """The subprocess and the evidence lines it printed, by connection id."""

    def __init__(self, *tls: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")])}
        self.process = subprocess.Popen(
            [sys.executable, str(_SERVER), *tls],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        self.port = int(json.loads(self.process.stdout.readline())["port"])
        self._records: dict[str, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self._count = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            record = json.loads(line)
            with self._arrived:
                self._records[record["id"]] = record
                self._arrived.notify_all()

    def new_id(self) -> str:
        self._count += 1
        return f"c{self._count}"

    def evidence(self, connection_id: str, timeout: float = 10.0) -> dict[str, Any]:
        with self._arrived:
            assert self._arrived.wait_for(lambda: connection_id in self._records, timeout), connection_id
            return self._records[connection_id]

    def stop(self) -> None:
        """Stop the server; it must not have printed anything (a traceback, gevent's hub reporting an
        exception that escaped a greenlet)."""
        self.process.terminate()
        self.process.wait(10)
        assert self.process.stderr is not None
        errors = self.process.stderr.read()
        assert not errors, errors


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    running = _Server()
    yield running
    running.stop()


def _url(server: _Server, connection_id: str, query: str = "", scheme: str = "ws") -> str:
    return f"{scheme}://127.0.0.1:{server.port}/rt?id={connection_id}{'&' + query if query else ''}"


def _closed_by_server(ws: Any) -> tuple[int | None, str | None]:
    """Receive until the connection closes; the close code and reason the server sent (None: no frame)."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=10)
    received = closed.value.rcvd
    return (received.code, received.reason) if received is not None else (None, None)


# --- raw client ------------------------------------------------------------------------------------------


def _handshake(headers: dict[str, str], path: str = "/rt") -> bytes:
    fields = {
        "Host": "127.0.0.1",
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        **headers,
    }
    lines = [f"GET {path} HTTP/1.1"] + [f"{name}: {value}" for name, value in fields.items() if value]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def _frame(opcode: int, payload: bytes, *, fin: bool = True, rsv1: bool = False, mask: bool = True) -> bytes:
    head = bytearray([(0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode])
    size = len(payload)
    bit = 0x80 if mask else 0
    if size < 126:
        head.append(bit | size)
    elif size < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", size)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", size)
    if not mask:
        return bytes(head) + payload
    key = os.urandom(4)
    return bytes(head) + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class _Raw:
    """A hand-driven client socket after the 101."""

    def __init__(
        self,
        server: _Server,
        connection_id: str,
        query: str = "",
        *,
        first: bytes = b"",
        tls: ssl.SSLContext | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock, server_hostname=_HOST)
        path = f"/rt?id={connection_id}{'&' + query if query else ''}"
        self.sock.sendall(_handshake(headers or {}, path) + first)  # ``first``: frames in the same packet
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            assert chunk, self.buffer
            self.buffer += chunk
        self.head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")

    def _need(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def frame(self) -> tuple[int, bytes]:
        first, second = self._need(2)
        size = second & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", self._need(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", self._need(8))
        return first & 0x0F, self._need(size)

    def close_frame(self) -> tuple[int, str]:
        """Frames until the server's close; its code and reason (data frames before it are skipped)."""
        while True:
            opcode, payload = self.frame()
            if opcode == _CLOSE:
                return struct.unpack("!H", payload[:2])[0], payload[2:].decode("utf-8")

    def __enter__(self) -> _Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


# --- messages --------------------------------------------------------------------------------------------


def test_echo_text_and_binary(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid), compression=None) as ws:
        assert ws.response is not None and ws.response.headers.get("Sec-WebSocket-Extensions") is None
        ws.send("héllo ✓")
        assert ws.recv(timeout=10) == "héllo ✓"
        ws.send(b"\x00\xffbin")
        assert ws.recv(timeout=10) == b"\x00\xffbin"
    evidence = server.evidence(cid)
    assert evidence["messages_received"] == 2 and evidence["messages_sent"] == 2
    assert evidence["bytes_sent"] == len("héllo ✓".encode()) + 5
    assert evidence["compressed"] is False


def test_fragmented_and_partial_messages_are_assembled(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid), compression=None) as ws:
        ws.send(iter(["frag", "men", "ted ✓"]))
        assert ws.recv(timeout=10) == "fragmented ✓"
        ws.send(iter([b"\x01", b"\x02\x03"]))
        assert ws.recv(timeout=10) == b"\x01\x02\x03"
    # A frame in the handshake's own packet (``leftover``), one split over three writes, a ping between
    # a message's fragments.
    cid = server.new_id()
    with _Raw(server, cid, first=_frame(_TEXT, b"in the handshake packet")) as raw:
        assert raw.frame() == (_TEXT, b"in the handshake packet")
        text = ("x" * 300 + "é").encode()
        split = _frame(_TEXT, text)
        for part in (split[:3], split[3:200], split[200:-1], split[-1:]):  # "é" split between reads
            raw.sock.sendall(part)
            time.sleep(0.02)
        assert raw.frame() == (_TEXT, text)
        ping_inside = _frame(_TEXT, b"one ", fin=False) + _frame(_PING, b"p") + _frame(_CONTINUATION, b"two")
        raw.sock.sendall(ping_inside)
        assert raw.frame() == (_PONG, b"p")
        assert raw.frame() == (_TEXT, b"one two")
    assert server.evidence(cid)["messages_received"] == 3


def test_permessage_deflate_negotiated_with_no_context_takeover(server: _Server) -> None:
    cid = server.new_id()
    text = "compressible " * 20_000
    with connect(_url(server, cid)) as ws:  # websockets offers permessage-deflate by default
        assert ws.response is not None
        extensions = ws.response.headers["Sec-WebSocket-Extensions"]
        assert extensions.startswith("permessage-deflate")
        assert "server_no_context_takeover" in extensions and "client_no_context_takeover" in extensions
        for _ in range(2):  # each message starts a fresh compressor and inflater
            ws.send(text)
            assert ws.recv(timeout=10) == text
        ws.send(b"\x00" * 70_000)
        assert ws.recv(timeout=10) == b"\x00" * 70_000
    assert server.evidence(cid)["compressed"] is True


def _deflated(text: bytes) -> bytes:
    compressor = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    return (compressor.compress(text) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]


@pytest.mark.parametrize("between", ["fragments", "messages"])
def test_a_ping_between_compressed_frames_keeps_them_compressed(server: _Server, between: str) -> None:
    """A ping between a message's fragments, or between two messages (websockets' keepalive, every 20 s:
    the next compressed message was read as uncompressed, 1007), leaves compression as it was."""
    first, second = b"hello hello hello fragmented", b"second message, compressed too"
    body = _deflated(first)
    if between == "fragments":
        frames = (
            _frame(_TEXT, body[:5], fin=False, rsv1=True)
            + _frame(_PING, b"p")
            + _frame(_CONTINUATION, body[5:])
        )
        expected = [(_PONG, None), (_TEXT, first)]
    else:
        frames = (
            _frame(_TEXT, body, rsv1=True) + _frame(_PING, b"p") + _frame(_TEXT, _deflated(second), rsv1=True)
        )
        expected = [(_TEXT, first), (_PONG, None), (_TEXT, second)]
    with _Raw(server, server.new_id(), headers={"Sec-WebSocket-Extensions": "permessage-deflate"}) as raw:
        assert b"permessage-deflate" in raw.head
        raw.sock.sendall(frames)
        for opcode, text in expected:
            got, payload = raw.frame()
            inflated = zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff") if text else None
            assert (got, inflated) == (opcode, text)


def test_subprotocol_is_echoed_only_when_offered(server: _Server) -> None:
    cid = server.new_id()
    offered: list[Any] = ["realtime", "openai-insecure-api-key.sk-test"]  # websockets' Subprotocol type
    with connect(_url(server, cid, "sub=realtime"), subprotocols=offered, compression=None) as ws:
        assert ws.subprotocol == "realtime"
    evidence = server.evidence(cid)
    assert evidence["offered"] == offered and evidence["subprotocol"] == "realtime"

    cid = server.new_id()
    with _Raw(server, cid, "sub=realtime") as raw:
        assert b"sec-websocket-protocol" not in raw.head.lower()
    cid = server.new_id()
    with _Raw(server, cid, "sub=realtime", headers={"Sec-WebSocket-Protocol": "other"}) as raw:
        assert b"sec-websocket-protocol" not in raw.head.lower()


def test_ping_is_answered(server: _Server) -> None:
    with connect(_url(server, server.new_id()), compression=None) as ws:
        assert ws.ping(b"heartbeat").wait(10)


# --- closing ---------------------------------------------------------------------------------------------


def test_client_close_is_echoed_and_ends_receive(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid), compression=None) as ws:
        ws.send("hi")
        ws.recv(timeout=10)
        ws.close(4000, "done")
        assert ws.close_code == 4000 and ws.close_reason == "done"  # the server's echo
    evidence = server.evidence(cid)
    assert evidence["receive_returned_none"] is True and evidence["receive_again"] is None
    assert evidence["send_after_end"] is False
    assert evidence["ended_by"] == "client_closed"
    assert (evidence["close_code_received"], evidence["close_reason_received"]) == (4000, "done")
    assert evidence["close_code_sent"] == 4000 and evidence["open_after"] is False


@pytest.mark.parametrize("command", ["close", "close-self"])
def test_server_close_reaches_the_client_with_code_and_reason(server: _Server, command: str) -> None:
    """``close`` from another greenlet while one is in ``receive``, and from the receiving greenlet."""
    cid = server.new_id()
    with connect(_url(server, cid), compression=None) as ws:
        ws.send(f"{command} 1011 boom")
        assert _closed_by_server(ws) == (1011, "boom")
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "server_closed"
    assert (evidence["close_code_sent"], evidence["close_reason_sent"]) == (1011, "boom")
    assert evidence["close_code_received"] == 1011  # the client's answer, seen by whoever was reading
    assert evidence["seconds"] < 1.5  # no wait for the close timeout (2 s)


@pytest.mark.parametrize("command", ["close", "close-self"])
def test_a_peer_that_never_answers_our_close_is_dropped_after_the_close_timeout(
    server: _Server, command: str
) -> None:
    cid = server.new_id()
    with _Raw(server, cid, "ct=0.3") as raw:
        raw.sock.sendall(_frame(_TEXT, f"{command} 1000 bye".encode()))
        assert raw.close_frame() == (1000, "bye")
        with pytest.raises(EOFError):  # no answer from us: the server closes on its own
            raw.frame()
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "server_closed" and evidence["close_code_received"] is None
    assert 0.25 <= evidence["seconds"] < 5


def test_a_client_that_leaves_without_a_close_frame_ends_receive(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid), compression=None) as ws:
        ws.send("stall")  # a greenlet waits for the end with ``wait_closed``
        time.sleep(0.05)
        ws.socket.close()  # no close frame
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "eof" and evidence["close_code_received"] is None
    assert evidence["stall_ended"] is True and evidence["stall_seconds"] < 5


def test_abort_drops_the_connection_without_a_close_frame(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid), compression=None) as ws:
        ws.send("abort")
        assert _closed_by_server(ws) == (None, None)  # 1006
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "aborted" and evidence["close_code_sent"] is None


def test_end_resets_a_connection_whose_write_is_blocked(server: _Server) -> None:
    """``end`` (a session deleted under a realtime connection) is ``close`` when nothing is being written,
    and a reset at once when a write waits on a client that does not read: the close frame would wait
    behind it until the write deadline."""
    cid = server.new_id()
    with _Raw(server, cid) as raw:
        raw.sock.sendall(_frame(_TEXT, b"end-writing 1001 gone"))  # and never read the 16 MiB
        time.sleep(0.5)
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "aborted" and evidence["close_code_sent"] is None
    assert evidence["seconds"] < 5  # not the write deadline


def test_send_raw_is_a_valid_text_frame(server: _Server) -> None:
    with connect(_url(server, server.new_id()), compression=None) as ws:
        ws.send("raw")
        assert ws.recv(timeout=10) == "{not json \ufffd"


# --- limits ----------------------------------------------------------------------------------------------


def test_message_over_the_limit_closes_1009(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid, "max=1000"), compression=None) as ws:
        ws.send("a" * 1000)
        assert ws.recv(timeout=10) == "a" * 1000
        with contextlib.suppress(ConnectionClosed):  # the close may beat the end of the send
            ws.send(iter(["b" * 600, "b" * 600]))  # over only once the fragments add up
        assert _closed_by_server(ws) == (1009, "message too big")
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "message_too_big" and evidence["messages_received"] == 1


def test_inflation_bomb_closes_1009_with_bounded_memory(server: _Server) -> None:
    """10 MB of zeros compress to about 10 KB: the server inflates at most the 1 MiB limit of it."""
    cid = server.new_id()
    with connect(_url(server, cid, "trace=1"), max_size=None) as ws:
        with contextlib.suppress(ConnectionClosed):
            ws.send(b"\x00" * 10_000_000)
        assert _closed_by_server(ws) == (1009, "message too big")
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "message_too_big" and evidence["messages_received"] == 0
    # Peak Python allocation while the connection lived (tracemalloc): about 4 MiB measured, the message
    # limit plus wsproto's copies of the inflated piece; inflating everything would be over 20 MB.
    assert evidence["traced_peak_bytes"] < 8 * 1024 * 1024, evidence


def test_invalid_utf8_text_closes_1007(server: _Server) -> None:
    cid = server.new_id()
    with _Raw(server, cid) as raw:
        raw.sock.sendall(_frame(_TEXT, b"ok \xff\xfe"))
        code, _ = raw.close_frame()
        assert code == 1007
        with pytest.raises(EOFError):  # then the server ends the connection
            raw.frame()
    assert server.evidence(cid)["ended_by"] == "protocol_error"


def test_unmasked_client_frame_closes_1002(server: _Server) -> None:
    cid = server.new_id()
    with _Raw(server, cid) as raw:
        raw.sock.sendall(_frame(_TEXT, b"hello", mask=False))
        code, reason = raw.close_frame()
        assert code == 1002 and "unmasked" in reason
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "protocol_error" and evidence["close_code_sent"] == 1002


def test_idle_client_is_closed_1001(server: _Server) -> None:
    cid = server.new_id()
    started = time.monotonic()
    with connect(_url(server, cid, "idle=0.5"), compression=None, ping_interval=None) as ws:
        assert _closed_by_server(ws) == (1001, "idle timeout")
    elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 8
    assert server.evidence(cid)["ended_by"] == "idle_timeout"


def test_message_rate_over_the_limit_closes_1008(server: _Server) -> None:
    cid = server.new_id()
    with connect(_url(server, cid, "rate=5"), compression=None) as ws:
        with contextlib.suppress(ConnectionClosed):  # the close may come before the last send
            for number in range(30):
                ws.send(str(number))
        echoed = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                echoed.append(ws.recv(timeout=10))
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "rate limit")
    assert echoed[:5] == ["0", "1", "2", "3", "4"] and len(echoed) < 30
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "rate_limited" and evidence["messages_received"] == len(echoed)


def test_a_client_that_never_reads_is_cut_by_the_write_timeout(server: _Server) -> None:
    cid = server.new_id()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", server.port))
    with sock:
        sock.sendall(_handshake({}, f"/rt?id={cid}&mode=flood&wt=0.5&size=262144"))
        evidence = server.evidence(cid, timeout=30)  # never reading a byte
    assert evidence["ended_by"] == "write_timeout"
    # The send that found the buffers full waited out the write timeout, then failed (margins: 2 cores).
    assert 0.45 <= evidence["failed_send_seconds"] < 5, evidence
    assert evidence["open_after"] is False


def test_a_write_the_memory_budget_cannot_hold_resets_at_once(server: _Server) -> None:
    cid = server.new_id()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", server.port))
    with sock:
        sock.sendall(_handshake({}, f"/rt?id={cid}&mode=flood&wt=5&size=262144&budget=1000"))
        evidence = server.evidence(cid, timeout=30)
    assert evidence["ended_by"] == "memory_budget"
    assert evidence["failed_send_seconds"] < 2  # not the 5 s write timeout


# --- handshakes ------------------------------------------------------------------------------------------

_REFUSALS = [
    ({"Sec-WebSocket-Key": ""}, 400),
    ({"Sec-WebSocket-Key": base64.b64encode(b"short").decode()}, 400),
    ({"Sec-WebSocket-Version": "8"}, 426),
    ({"Sec-WebSocket-Version": ""}, 426),
    ({"Sec-WebSocket-Protocol": "réaltime"}, 400),
    ({"Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits=abc"}, 400),
    ({"Sec-WebSocket-Extensions": "permessage-déflate"}, 400),
    ({"Connection": "keep-alive, Upgrade-ish"}, 400),
    ({"Upgrade": "h2c"}, 400),
    ({"Host": ""}, 400),
]


@pytest.mark.parametrize(("headers", "status"), _REFUSALS)
def test_bad_handshakes_are_refused_before_the_101(
    server: _Server, headers: dict[str, str], status: int
) -> None:
    cid = server.new_id()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(_handshake(headers, f"/rt?id={cid}"))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer
    evidence = server.evidence(cid)
    assert evidence["refused"] == status and evidence["message"]
    if status == 426:
        assert evidence["headers"] == [["Sec-WebSocket-Version", "13"]]


def test_out_of_range_deflate_offer_is_declined_not_refused(server: _Server) -> None:
    offer = "permessage-deflate; client_max_window_bits=99, permessage-deflate"
    with _Raw(server, server.new_id(), headers={"Sec-WebSocket-Extensions": offer}) as raw:
        assert raw.head.startswith(b"HTTP/1.1 101 ")
        assert b"permessage-deflate; client_no_context_takeover; server_no_context_takeover" in raw.head


# --- TLS: nothing assumes a plain socket -----------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[_Server, ssl.SSLContext]]:
    crypto = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = crypto.Name([crypto.NameAttribute(crypto.oid.NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        crypto.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(crypto.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(crypto.SubjectAlternativeName([crypto.IPAddress(ipaddress.ip_address(_HOST))]), False)
        .sign(key, hashes.SHA256())
    )
    directory = tmp_path_factory.mktemp("tls")
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(cafile=str(cert_path))
    running = _Server(str(cert_path), str(key_path))
    yield running, context
    running.stop()


def test_tls_echo_close_abort_protocol_error_and_write_timeout(
    tls_server: tuple[_Server, ssl.SSLContext],
) -> None:
    """The same channel over gevent's ``SSLSocket``. Single-threaded raw clients: the ``websockets`` sync
    client reads and writes one ``ssl.SSLSocket`` from two threads, which hung once in about 2,000 TLS
    connections here (the server still waiting for the request), with or without this channel."""
    server, context = tls_server
    cid = server.new_id()
    with _Raw(server, cid, tls=context) as client:
        client.sock.sendall(_frame(_TEXT, b"over tls " * 1000))
        assert client.frame() == (_TEXT, b"over tls " * 1000)
        client.sock.sendall(_frame(_TEXT, b"close 4001 bye"))
        assert client.close_frame() == (4001, "bye")
        client.sock.sendall(_frame(_CLOSE, struct.pack("!H", 4001)))
        with pytest.raises(EOFError):
            client.frame()
    evidence = server.evidence(cid)
    assert evidence["ended_by"] == "server_closed" and evidence["close_code_received"] == 4001

    cid = server.new_id()
    with _Raw(server, cid, tls=context) as client:
        client.sock.sendall(_frame(_TEXT, b"abort"))
        with pytest.raises((EOFError, ConnectionResetError, ssl.SSLError)):  # no close frame
            client.frame()
    assert server.evidence(cid)["ended_by"] == "aborted"

    cid = server.new_id()
    with _Raw(server, cid, tls=context) as client:
        client.sock.sendall(_frame(_TEXT, b"hello", mask=False))
        assert client.close_frame()[0] == 1002
        with pytest.raises(EOFError):
            client.frame()
    assert server.evidence(cid)["ended_by"] == "protocol_error"

    cid = server.new_id()
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(10)
    raw.connect(("127.0.0.1", server.port))
    with context.wrap_socket(raw, server_hostname=_HOST) as sock:
        sock.sendall(_handshake({}, f"/rt?id={cid}&mode=flood&wt=0.5&size=262144"))
        evidence = server.evidence(cid, timeout=30)
    assert evidence["ended_by"] == "write_timeout"
    assert 0.45 <= evidence["failed_send_seconds"] < 5, evidence
