"""Turn raw configuration input into a ``SessionConfig`` or one ``ConfigurationInvalid`` with field paths."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from llmts.errors import ConfigurationInvalid
from llmts.schema.config import SessionConfig
from llmts.schema.control import SessionAnnotations
from llmts.schema.items import exact_fixture_numbers

__all__ = [
    "format_location",
    "parse_part",
    "parse_session_body",
    "parse_session_config",
    "parse_session_config_json",
]

# Body fields of ``POST``/``PUT /admin-api/sessions[/{id}]`` that describe the session, not configure it.
_ANNOTATION_FIELDS = frozenset(SessionAnnotations.model_fields)

# Sections of the public configuration that later work implements. Until then they are rejected, never
# silently ignored, so a test that relies on them fails loudly instead of passing by accident.
_PENDING_TOP_LEVEL: dict[str, str] = {}
_PENDING_RESPONSE_FIELDS: dict[str, str] = {}


def format_location(location: tuple[int | str, ...]) -> str:
    """``("scenarios", 0, "responses", 1)`` -> ``scenarios[0].responses[1]``."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += ("." if path else "") + str(part)
    return path


def _error_path(error: Any) -> str:
    """The error's location; a cross-field error (type ``llmts_at``) adds the path inside that model."""
    path = format_location(tuple(error["loc"]))
    at = (error.get("ctx") or {}).get("at") if error["type"] == "llmts_at" else None
    if not at:
        return path
    return f"{path}.{at}" if path and not at.startswith("[") else path + at


def _pending_sections(data: dict[str, Any]) -> list[dict[str, Any]]:
    details = [
        {"path": key, "message": f"{feature} are not supported by this server version yet"}
        for key, feature in _PENDING_TOP_LEVEL.items()
        if key in data
    ]
    scenarios = data.get("scenarios")
    if isinstance(scenarios, list):
        for s_index, scenario in enumerate(scenarios):
            responses = scenario.get("responses") if isinstance(scenario, dict) else None
            if not isinstance(responses, list):
                continue
            for r_index, response in enumerate(responses):
                if not isinstance(response, dict):
                    continue
                for key, feature in _PENDING_RESPONSE_FIELDS.items():
                    if key in response:
                        details.append(
                            {
                                "path": f"scenarios[{s_index}].responses[{r_index}].{key}",
                                "message": f"{feature} are not supported by this server version yet",
                            }
                        )
    return details


_M = TypeVar("_M", bound=BaseModel)


def _invalid(exc: ValidationError, prefix: str) -> ConfigurationInvalid:
    details = []
    for err in exc.errors(include_url=False):
        path = _error_path(err)
        details.append(
            {"path": f"{prefix}.{path}" if prefix and path else prefix or path, "message": err["msg"]}
        )
    first = details[0]
    where = f" at {first['path']}" if first["path"] else ""
    return ConfigurationInvalid(f"invalid configuration{where}: {first['message']}", details=details)


def parse_part(model: type[_M], data: Any, where: str) -> _M:
    """One part of a configuration (the builder checks a step's ``when`` as it is added), validated by
    its own model; errors name ``where`` in front of the field path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, where) from None


def parse_session_config(data: Any) -> SessionConfig:
    if isinstance(data, SessionConfig):
        return data
    if not isinstance(data, dict):
        raise ConfigurationInvalid(
            "the configuration must be a JSON object",
            details=[{"path": "", "message": f"expected an object, got {type(data).__name__}"}],
        )
    pending = _pending_sections(data)
    if pending:
        raise ConfigurationInvalid("the configuration uses unsupported sections", details=pending)
    try:
        return SessionConfig.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, "") from None


def parse_session_config_json(body: bytes) -> SessionConfig:
    try:
        data = orjson.loads(body) if body.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise ConfigurationInvalid(
            "the configuration is not valid JSON", details=[{"path": "", "message": str(exc)}]
        ) from None
    # File-search result numbers keep their exact JSON literals (filters compare decimals).
    return parse_session_config(exact_fixture_numbers(body, data))


def parse_session_body(body: bytes) -> tuple[SessionAnnotations | None, SessionConfig | None]:
    """A session-creating body: its ``label``/``test_outcome`` fields (None when it names neither) and the
    configuration the other fields form (None when there are none: an empty body, ``{}``, or annotations
    only). Everything is validated before the caller changes anything."""
    if not body.strip():
        return None, None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ConfigurationInvalid(
            "the body is not valid JSON", details=[{"path": "", "message": str(exc)}]
        ) from None
    if not isinstance(data, dict):
        return None, parse_session_config(data)  # the configuration's own "must be an object" error
    named = {key: data.pop(key) for key in list(data) if key in _ANNOTATION_FIELDS}
    annotations = parse_part(SessionAnnotations, named, "") if named else None
    config = parse_session_config(exact_fixture_numbers(body, data)) if data else None
    return annotations, config
