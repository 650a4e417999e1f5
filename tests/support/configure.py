"""Session configuration the tests repeat: one scenario answering the given responses in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmts import SessionClient

__all__ = ["script"]


def script(
    session: SessionClient,
    *responses: Mapping[str, Any],
    models: Sequence[str],
    scenario: Mapping[str, Any] | None = None,
    **config: Any,
) -> dict[str, Any]:
    """Configure ``session`` to serve ``models`` with one scenario (its other fields in ``scenario``) that
    answers ``responses`` in order; ``config`` adds top-level fields (``determinism``, ``journal``...).
    Returns the effective configuration. A module binds its models once:
    ``_configure = functools.partial(script, models=[MODEL])``."""
    return session.configure(
        {
            "models": list(models),
            "scenarios": [{**(scenario or {}), "responses": [dict(r) for r in responses]}],
            **config,
        }
    )
