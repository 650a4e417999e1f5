"""The body of a stream with nothing to do between its frames, written with its end in one ``send``.

A module of its own because it subclasses ``list``: transport/writer.py, which makes it, is compiled in
the compiled build (docs/design/compiled.md), and mypyc compiles a ``list`` subclass only as a non-native
class, declared with ``mypy_extensions``, which llmts does not depend on.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["WholeStream"]


class WholeStream(list[bytes]):
    """A stream with nothing to do between its frames (no plan, no pacing), handed as one body to a server
    that writes it together with its end: llmts's pywsgi handler sends head, frames and the chunked
    terminator in one ``send`` (docs/architecture.md, "The server's hot path"). The server sets ``written``
    once the bytes are out; ``close()`` (called by every WSGI server) records the evidence."""

    __slots__ = ("_done", "written")

    def __init__(self, body: bytes, done: Callable[[bool], None]) -> None:
        super().__init__((body,))
        self._done: Callable[[bool], None] | None = done
        self.written = False

    def close(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done(self.written)
