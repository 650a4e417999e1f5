"""A gevent server (monkey-patched, like llmts's worker) that accepts WebSockets with
``llmts.transport.websocket`` and echoes messages, for tests/transport/test_websocket_channel.py.

Run as ``python websocket_echo_server.py [CERT KEY]``: prints ``PORT <n>``, then one JSON line of evidence per
connection. Each connection is configured by its query string: ``id`` (names its evidence line), limits
(``max``, ``idle``, ``wt`` write timeout, ``rate``, ``ct`` close timeout), ``sub`` (the subprotocol
to echo when offered), ``mode`` (``echo``, ``flood``: another greenlet sends ``size``-byte messages until
``send`` fails), ``budget`` (a memory budget of that many bytes for waiting writes) and ``trace``
(measure the peak Python allocation while the connection lives).

Echo mode obeys text commands: ``close CODE REASON`` closes from another greenlet while this one keeps
receiving; ``close-self CODE REASON`` closes from the receiving greenlet; ``abort`` aborts from another
greenlet; ``raw`` answers with ``send_raw``; ``stall`` starts a greenlet that waits for the end of the
connection with ``wait_closed``; ``end-writing CODE REASON`` starts a greenlet writing 16 MiB (blocked on a
client that does not read), then calls ``end`` from another.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import parse_qs  # noqa: E402

import gevent  # noqa: E402
from gevent.server import StreamServer  # noqa: E402

from llmts.server.http.parser import RequestParser  # noqa: E402
from llmts.transport.websocket import HandshakeRefused, WebSocket, WebSocketLimits, accept  # noqa: E402


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _evidence(ws: WebSocket) -> dict[str, Any]:
    return {
        "ended_by": ws.ended_by,
        "close_code_sent": ws.close_code_sent,
        "close_reason_sent": ws.close_reason_sent,
        "close_code_received": ws.close_code_received,
        "close_reason_received": ws.close_reason_received,
        "messages_received": ws.messages_received,
        "messages_sent": ws.messages_sent,
        "bytes_sent": ws.bytes_sent,
        "offered": list(ws.offered_subprotocols),
        "subprotocol": ws.subprotocol,
        "compressed": ws.compressed,
        "open_after": ws.open,
    }


def _limits(query: dict[str, str]) -> WebSocketLimits:
    def number(name: str, default: float | None) -> float | None:
        return float(query[name]) if name in query else default

    defaults = WebSocketLimits()
    return WebSocketLimits(
        max_message_bytes=int(query.get("max", defaults.max_message_bytes)),
        idle_timeout=number("idle", defaults.idle_timeout),
        write_timeout=number("wt", defaults.write_timeout),
        max_messages_per_second=int(query.get("rate", defaults.max_messages_per_second)),
        close_timeout=float(query.get("ct", defaults.close_timeout)),
    )


class _Budget:
    """A memory budget that holds at most ``room`` bytes."""

    def __init__(self, room: int) -> None:
        self.room = room

    def hold(self, size: int) -> bool:
        if size > self.room:
            return False
        self.room -= size
        return True

    def release(self, size: int) -> None:
        self.room += size


def _stall(ws: WebSocket, record: dict[str, Any]) -> None:
    started = time.monotonic()
    record["stall_ended"] = ws.wait_closed(10)
    record["stall_seconds"] = time.monotonic() - started


def _echo(ws: WebSocket, record: dict[str, Any]) -> None:
    stalls = []
    while (message := ws.receive()) is not None:
        command = message.decode("utf-8", "replace").split(" ", 2) if not ws.last_binary else [""]
        if command[0] == "close":
            gevent.spawn(ws.close, int(command[1]), command[2] if len(command) > 2 else "")
        elif command[0] == "close-self":
            ws.close(int(command[1]), command[2] if len(command) > 2 else "")
        elif command[0] == "abort":
            gevent.spawn(ws.abort)
        elif command[0] == "raw":
            ws.send_raw(b"{not json \xff")
        elif command[0] == "stall":
            stalls.append(gevent.spawn(_stall, ws, record))
        elif command[0] == "end-writing":
            gevent.spawn(ws.send, b"x" * (16 << 20), binary=True)
            gevent.spawn_later(0.2, ws.end, int(command[1]), command[2] if len(command) > 2 else "")
        else:
            ws.send(message, binary=ws.last_binary)
    record["receive_returned_none"] = True
    record["receive_again"] = ws.receive()
    record["send_after_end"] = ws.send(b"late")
    gevent.joinall(stalls, timeout=10)


def _flood(ws: WebSocket, record: dict[str, Any], size: int) -> None:
    payload = b"x" * size

    def flood() -> None:
        for count in range(400):
            started = time.monotonic()
            if not ws.send(payload, binary=True):
                record["failed_send_seconds"] = time.monotonic() - started
                record["sends_before_failure"] = count
                return

    sender = gevent.spawn(flood)
    while ws.receive() is not None:
        pass
    sender.join(30)


def handle(sock: Any, address: Any) -> None:
    parser = RequestParser({"REMOTE_ADDR": address[0]})
    while not parser.ready and not parser.dead:
        data = sock.recv(65536)
        if not data:
            sock.close()
            return
        parser.feed(data)
    environ = parser.ready.popleft().environ
    query = {key: values[0] for key, values in parse_qs(environ.get("QUERY_STRING", "")).items()}
    record: dict[str, Any] = {"id": query.get("id", "?")}
    trace = "trace" in query
    if trace:
        tracemalloc.start()
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        budget = _Budget(int(query["budget"])) if "budget" in query else None
        ws = accept(
            environ, sock, parser.leftover, subprotocol=query.get("sub"), limits=_limits(query), budget=budget
        )
    except HandshakeRefused as refused:
        head = f"HTTP/1.1 {refused.status} Refused\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in refused.headers)
        sock.sendall(f"{head}Content-Length: 0\r\nConnection: close\r\n\r\n".encode("latin-1"))
        sock.close()
        _emit({**record, "refused": refused.status, "message": refused.message, "headers": refused.headers})
        return
    started = time.monotonic()
    if query.get("mode") == "flood":
        _flood(ws, record, int(query.get("size", 262144)))
    else:
        _echo(ws, record)
    record["seconds"] = time.monotonic() - started
    if trace:
        record["traced_peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        record["maxrss_growth_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    _emit({**record, **_evidence(ws)})


def main() -> None:
    ssl_args: dict[str, Any] = {}
    if len(sys.argv) == 3:
        ssl_args = {"certfile": sys.argv[1], "keyfile": sys.argv[2]}
    server = StreamServer(("127.0.0.1", 0), handle, **ssl_args)
    server.start()
    _emit({"port": server.server_port})
    server.serve_forever()


if __name__ == "__main__":
    main()
