"""A request's body as the app reads it (``wsgi.input``).

A body that arrived with its head (the usual case: an SDK's head and JSON body in one packet) is a
:class:`BufferedBody`, an in-memory reader: the app reads it without arming its body deadline
(server/http.py), since nothing can stall. A body still arriving is a :class:`StreamingBody`, which reads
the connection (and parses what it reads) as the app asks for more; it sends ``100 Continue`` before its
first read when the client asked for it. A body that ends early or breaks its chunked framing raises
:class:`BodyBroken`, an ``OSError`` as gevent's reader raised, which the app answers with 400.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

from llmts.server.http.parser import Request

__all__ = ["BodyBroken", "BufferedBody", "StreamingBody"]


class BodyBroken(ConnectionError):
    """The request body ended before its length, or its chunked framing is broken."""


class BufferedBody(io.BytesIO):
    """A body read together with its head."""


class StreamingBody:
    """A body still arriving: ``pull`` reads the connection once (parsing what it read into the request)
    and raises ``OSError`` when no more can come; ``send_continue`` answers ``Expect: 100-continue``."""

    __slots__ = ("_continue", "_pull", "_request")

    def __init__(
        self, request: Request, pull: Callable[[Request], None], send_continue: Callable[[], None] | None
    ) -> None:
        self._request = request
        self._pull = pull
        self._continue = send_continue

    def _begin(self) -> None:
        send, self._continue = self._continue, None
        if send is not None and not self._request.complete:
            send()

    def read(self, size: int | None = -1) -> bytes:
        request = self._request
        if self._continue is not None:
            self._begin()
        wanted = -1 if size is None or size < 0 else size
        while not request.complete and (wanted < 0 or request.buffered < wanted):
            self._pull(request)
        return self._take(wanted)

    def _take(self, size: int) -> bytes:
        request = self._request
        pieces = request.body
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if size < 0 or len(data) <= size:
            pieces.clear()
            request.buffered = 0
            return data
        pieces[:] = [data[size:]]
        request.buffered = len(data) - size
        return data[:size]

    def readline(self, size: int | None = -1) -> bytes:
        request = self._request
        if self._continue is not None:
            self._begin()
        limit = -1 if size is None or size < 0 else size
        while True:
            data = b"".join(request.body)
            end = data.find(b"\n") + 1
            if end or request.complete or (0 <= limit <= len(data)):
                request.body[:] = [data]
                return self._take(min(end or len(data), limit) if limit >= 0 else (end or len(data)))
            self._pull(request)

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line
