"""OpenAI's published OpenAPI specification as a validator of llmts's answers (data/README.md).

``OpenAISpec`` loads the trimmed spec once (``load_spec()`` caches it per process) and validates a JSON
value against a component schema or an operation's response schema with openapi-schema-validator's
``OAS31Validator`` (jsonschema's Draft 2020-12 with OpenAPI's formats, ``$ref`` resolved through a
``referencing`` registry holding the whole document). Validators are built once per schema and kept.

Two things the spec's dialect needs beyond plain OAS 3.1:

- ``nullable: true``. The document says ``openapi: 3.1.0`` yet keeps OAS 3.0's ``nullable`` in places
  (a streamed chunk's ``finish_reason``, ``logprobs`` and ``usage``), which 3.1 no longer defines, so a
  3.1 validator would refuse the ``null`` the real API sends. Here, as in OAS 3.0, ``nullable: true``
  admits ``null`` whatever else that schema object says.
- Discriminated unions. A stream event or an output item that fits no branch of a 100-branch ``anyOf``
  would only say "not valid under any of the given schemas"; ``describe`` follows the branch whose
  ``type`` matches the value (what the spec's ``discriminator: {propertyName: type}`` means) and reports
  that branch's own failures, each with its JSON path.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema.exceptions import ValidationError, best_match
from jsonschema.validators import extend
from openapi_schema_validator import OAS31Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = ["DEVIATIONS", "SPEC_FILE", "Deviation", "OpenAISpec", "apply_deviations", "describe", "load_spec"]

SPEC_FILE = Path(__file__).parent / "data" / "openapi.json"
_URI = "urn:openai-openapi"


@dataclass(frozen=True)
class Deviation:
    """Where the spec's schema disagrees with what the real API sends, the schema object at ``pointer``
    gets ``change`` when the spec is loaded; ``id`` is its row in data/README.md (the reason and the
    evidence are there)."""

    id: str
    pointer: str
    change: dict[str, Any]


_NULLABLE = {"nullable": True}
DEVIATIONS = (
    Deviation(
        "D6", "#/components/schemas/CreateChatCompletionResponse/properties/system_fingerprint", _NULLABLE
    ),
    Deviation(
        "D6",
        "#/components/schemas/CreateChatCompletionStreamResponse/properties/system_fingerprint",
        _NULLABLE,
    ),
    Deviation("D7", "#/components/schemas/ModelResponseProperties/properties/user", _NULLABLE),
    Deviation("D8", "#/components/schemas/Response/allOf/2/properties/usage", _NULLABLE),
)


def _nullable(keyword: Callable[..., Iterator[ValidationError]]) -> Callable[..., Iterator[ValidationError]]:
    def check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        if instance is None and isinstance(schema, dict) and schema.get("nullable") is True:
            return
        yield from keyword(validator, value, instance, schema)

    return check


_Validator: Any = extend(
    OAS31Validator,
    {name: _nullable(keyword) for name, keyword in OAS31Validator.VALIDATORS.items()},
)


class OpenAISpec:
    """The trimmed specification and the validators built from it (one per schema, built on first use)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self._registry: Registry[Any] = Registry().with_resource(
            _URI, Resource.from_contents(document, default_specification=DRAFT202012)
        )
        self._validators: dict[str, Any] = {}
        self._event_schemas: dict[str, dict[str, str]] = {}

    @property
    def source(self) -> dict[str, str]:
        return dict(self.document["x-llmts-source"])

    def schema(self, name: str) -> dict[str, Any]:
        return dict(self.document["components"]["schemas"][name])

    def operation(self, path: str, method: str) -> dict[str, Any]:
        return dict(self.document["paths"][path][method])

    def response_schema(self, path: str, method: str, status: str, content_type: str) -> str:
        """The JSON pointer (``#/paths/...``) of an operation's response schema for one status and type."""
        responses = self.operation(path, method)["responses"]
        response = responses[status]
        if "$ref" in response:
            return f"{response['$ref']}/content/{_escape(content_type)}/schema"
        if "schema" not in response.get("content", {}).get(content_type, {}):
            raise KeyError(f"{method.upper()} {path} has no {status} {content_type} answer in the spec")
        return f"#/paths/{_escape(path)}/{method}/responses/{status}/content/{_escape(content_type)}/schema"

    def validator(self, pointer: str) -> Any:
        """A validator of the schema at ``pointer`` (a component name or a ``#/...`` JSON pointer)."""
        if not pointer.startswith("#"):
            pointer = f"#/components/schemas/{pointer}"
        validator = self._validators.get(pointer)
        if validator is None:
            validator = _Validator(
                {"$ref": _URI + pointer}, registry=self._registry, format_checker=_Validator.FORMAT_CHECKER
            )
            self._validators[pointer] = validator
        return validator

    def errors(self, pointer: str, instance: Any) -> list[str]:
        """Every top-level failure of ``instance`` against the schema, each described (empty: valid)."""
        return [line for error in self.validator(pointer).iter_errors(instance) for line in describe(error)]

    def event_schema(self, union: str, event_type: str) -> str | None:
        """The component of the stream-event union ``union`` whose ``type`` is ``event_type``, or None
        when the union has no such event."""
        table = self._event_schemas.get(union)
        if table is None:
            table = {}
            for branch in self.schema(union).get("anyOf", self.schema(union).get("oneOf", [])):
                name = branch["$ref"].rsplit("/", 1)[1]
                for value in _type_values(self.schema(name)):
                    table[value] = name
            self._event_schemas[union] = table
        return table.get(event_type)


def _node(document: Any, pointer: str) -> Any:
    node = document
    for part in pointer[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def apply_deviations(document: dict[str, Any]) -> None:
    """Apply ``DEVIATIONS`` in place; one the refreshed spec already agrees with is an error, so the list
    shrinks when OpenAI fixes the spec."""
    for deviation in DEVIATIONS:
        node = _node(document, deviation.pointer)
        if all(node.get(key) == value for key, value in deviation.change.items()):
            raise ValueError(
                f"{deviation.id}: the spec already says {deviation.change} at {deviation.pointer}"
            )
        node.update(deviation.change)


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _type_values(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("properties", {}).get("type", {})
    if "const" in kind:
        return [kind["const"]]
    return [value for value in kind.get("enum", []) if isinstance(value, str)]


def _branch(error: ValidationError) -> int:
    return int(error.relative_schema_path[0])


def _mismatched(error: ValidationError) -> bool:
    """The branch this error belongs to is for another kind of value: another JSON type, or an object
    whose ``type`` property names another kind."""
    path = list(error.relative_path)
    return (path == [] and error.validator == "type") or (
        path == ["type"] and error.validator in ("const", "enum")
    )


def _discriminated(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the one ``anyOf``/``oneOf`` branch meant for this kind of value, if exactly one is."""
    if error.validator not in ("anyOf", "oneOf"):
        return None
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context or []:
        branches.setdefault(_branch(sub), []).append(sub)
    survivors = [errors for errors in branches.values() if not any(_mismatched(sub) for sub in errors)]
    return survivors[0] if len(survivors) == 1 else None


def describe(error: ValidationError) -> list[str]:
    """``$.path: message`` for each failure, following discriminated branches down to the failures that
    matter (else jsonschema's ``best_match``)."""
    chosen = _discriminated(error)
    if chosen is not None:
        return [line for sub in chosen for line in describe(sub)]
    if error.context:
        error = best_match([error])
    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    return [f"{error.json_path}: {message}"]


@functools.lru_cache(maxsize=1)
def load_spec() -> OpenAISpec:
    """The spec with ``DEVIATIONS`` applied, parsed once per process."""
    document = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    apply_deviations(document)
    return OpenAISpec(document)
