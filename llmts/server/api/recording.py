"""``GET /admin-api/recording``: what a recording session kept, as a configuration (docs/recording.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

import orjson

from llmts.catalog.registry import CATALOG
from llmts.errors import InvalidRequest
from llmts.runtime import Session
from llmts.runtime.recording import Exchange
from llmts.runtime.recording.export import recording_configuration
from llmts.schema.config import SessionConfig

__all__ = ["RECORDED_HEADER", "RECORDING_DROPPED_HEADER", "recording_payload"]

RECORDED_HEADER = "X-Llm-Test-Server-Recorded"
RECORDING_DROPPED_HEADER = "X-Llm-Test-Server-Recording-Dropped"
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def recording_payload(session: Session, environ: Mapping[str, Any]) -> tuple[bytes, list[tuple[str, str]]]:
    """The recording as sorted JSON that ``configure`` and ``--fixtures`` load unchanged, and the headers
    saying how many exchanges it holds and how many were dropped (over ``recording.max_bytes``, the
    memory budget, or a graph's or scenario's size limit)."""
    query = parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
    unknown = sorted(set(query) - {"pacing"})
    if unknown:
        raise InvalidRequest(
            f"unknown query parameter {unknown[0]!r}; GET /admin-api/recording takes pacing=true|false",
            code="invalid_query",
            details=[{"path": unknown[0], "message": "unknown parameter"}],
        )
    raw = query.get("pacing", ["false"])[-1].lower()
    if raw not in _BOOLEANS:
        raise InvalidRequest(
            "pacing must be true or false",
            code="invalid_query",
            details=[{"path": "pacing", "message": "expected true or false"}],
        )
    exchanges, dropped = session.recorder.recorded()
    config, omitted = recording_configuration(exchanges, pacing=_BOOLEANS[raw])
    _add_replay_config(config, exchanges)
    # Validated here, so what is served is what configure accepts.
    payload = SessionConfig.model_validate(config).model_dump(mode="json")
    body = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    kept = len(exchanges) - omitted
    return body, [(RECORDED_HEADER, str(kept)), (RECORDING_DROPPED_HEADER, str(dropped + omitted))]


def _add_replay_config(config: dict[str, Any], exchanges: list[Exchange]) -> None:
    """What each provider's replay needs beside the scenarios (``ProviderInfo.replay_config``)."""
    for info in CATALOG.providers:
        if info.replay_config is None:
            continue
        models = sorted({e.request.model for e in exchanges if e.provider == info.namespace})
        if models:
            config.update(info.replay_config(models))
