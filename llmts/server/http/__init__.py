"""llmts's own HTTP/1.1 server for gunicorn's gevent worker: llhttp (``httptools``) parses, this package
runs the connection (docs/architecture.md, "The server's hot path").

``parser`` builds each request's environ as llhttp parses it; ``body`` is ``wsgi.input``; ``response``
checks and encodes a response head; ``connection`` is the per-connection loop; ``upgrade`` is where a
WebSocket upgrade goes. server/worker.py's ``LlmtsWorker`` serves with it.
"""

from __future__ import annotations

from llmts.server.http.connection import Connection, Http1Server
from llmts.server.http.upgrade import UpgradeHandler, UpgradeRequest

__all__ = ["Connection", "Http1Server", "UpgradeHandler", "UpgradeRequest"]
