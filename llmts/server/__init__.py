"""Composition root: WSGI app, control API, gunicorn embedding, CLI."""

from __future__ import annotations

from llmts.server.app import LlmtsApp, create_app

__all__ = ["LlmtsApp", "create_app"]
