"""The control API's routes as the tests that hold the docs and the fuzz to them read them: from a
``ControlApi`` built for the purpose, so a new route reaches both by itself."""

from __future__ import annotations

from llmts.runtime.registry import SessionRegistry
from llmts.server.api.auth import ControlAuth
from llmts.server.api.control import ControlApi

__all__ = ["control_routes"]


def control_routes() -> frozenset[tuple[str, str]]:
    """(method, werkzeug rule) of every route ``ControlApi`` serves (``HEAD`` and ``OPTIONS`` left out)."""
    api = ControlApi(SessionRegistry(), ControlAuth(None), 1024)
    return frozenset(
        (method, rule.rule)
        for rule in api._routes.map.iter_rules()
        for method in rule.methods or ()
        if method not in {"HEAD", "OPTIONS"}
    )
