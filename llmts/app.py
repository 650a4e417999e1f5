"""``llmts.app:create_app()``: the WSGI factory, for ``gunicorn -k gevent 'llmts.app:create_app()'``."""

from __future__ import annotations

from llmts.server.app import LlmtsApp, create_app

__all__ = ["LlmtsApp", "create_app"]
