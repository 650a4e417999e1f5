"""Session configuration the tests repeat, written once: one scenario answering the given responses in
order (``script``), a delivery plan on a stream followed by a plain answer (``delivery``), and a
``ConfigBuilder`` chain's configuration (``built``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmts import ConfigBuilder, SessionClient

__all__ = ["NEXT_ANSWER", "built", "delivery", "script"]

# What ``delivery`` answers after the planned stream: the explicit next attempt a test asks for.
NEXT_ANSWER = "Explicit next attempt."


def script(
    session: SessionClient,
    *responses: Mapping[str, Any],
    models: Sequence[str] | None = None,
    scenario: Mapping[str, Any] | None = None,
    **config: Any,
) -> dict[str, Any]:
    """Configure ``session`` to serve ``models`` (the server's defaults when None) with one scenario (its
    other fields in ``scenario``) that answers ``responses`` in order; ``config`` adds top-level fields
    (``determinism``, ``provider_credentials``...). Returns the effective configuration. A module binds its
    models once: ``_configure = functools.partial(script, models=[MODEL])``."""
    body: dict[str, Any] = {} if models is None else {"models": list(models)}
    body["scenarios"] = [{**(scenario or {}), "responses": [dict(r) for r in responses]}]
    return session.configure({**body, **config})


def delivery(
    session: SessionClient,
    plan: Mapping[str, Any],
    *,
    models: Sequence[str] | None = None,
    chunks: Sequence[str] = ("First ", "second."),
    then: str = NEXT_ANSWER,
) -> dict[str, Any]:
    """A stream of ``chunks`` delivered by ``plan`` (``stream_delivery``), then the plain answer ``then``
    (what a client's next attempt gets)."""
    stream = {"text": "".join(chunks), "chunks": list(chunks), "stream_delivery": dict(plan)}
    return script(session, stream, {"text": then}, models=models)


def built(session: SessionClient, builder: Any, *, models: Sequence[str] = ()) -> dict[str, Any]:
    """Configure ``session`` from a ``ConfigBuilder`` chain (the builder, or a scenario or step builder of
    it), serving ``models`` besides the ones the chain names."""
    config: ConfigBuilder = builder if isinstance(builder, ConfigBuilder) else builder.config
    if models:
        config.models(*models)
    return session.configure(config.build())
