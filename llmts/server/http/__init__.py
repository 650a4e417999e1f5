"""HTTP for gunicorn's gevent worker (docs/architecture.md, "The server's hot path"): llmts's own HTTP/1.1
connection loop on llhttp (``httptools``) and what the worker applies around it.

``connection`` is the per-connection loop (``Http1Server``, which ``GeventLoopWorker`` of
``gevent_workers`` serves with: what server/worker.py's ``LlmtsWorker`` becomes in the forked child);
``parser`` builds each request's environ as llhttp parses it; ``body`` is ``wsgi.input``;
``response`` checks and encodes a response head; ``upgrade`` is where a WebSocket upgrade goes;
``connections`` the head and keep-alive deadlines and the graceful stop; ``access_log``, ``log_text``,
``host_check``, ``timeouts``, ``multipart`` and ``wsgi`` (small WSGI helpers) the rest;
``pywsgi_handler`` the previous worker's handler for gevent's pywsgi. Nothing is imported here: the arbiter
process imports the worker module, and the worker loads the connection loop when it serves.
"""

from __future__ import annotations

__all__: list[str] = []
