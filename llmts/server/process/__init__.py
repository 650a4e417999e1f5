"""The server's processes: gunicorn embedded with one gevent worker, ``--workers N`` supervision,
worker restarts, start-up settings, the TLS certificate (``--tls``) and process diagnostics."""

from __future__ import annotations

__all__: list[str] = []
