"""Reading protobuf JSON as the service does: a field in camelCase or snake_case (camelCase first; ``null``
is unset), typed readers that refuse a wrong type with the service's sentence (``Invalid value at
'<path>' (TYPE_STRING), 5``), and bytes as standard or URL-safe base64 (google-genai sends images
URL-safe).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from llmts.providers.gemini.live.client_types import LiveInvalid

__all__ = [
    "bool_at",
    "bytes_at",
    "int_at",
    "invalid_value",
    "list_at",
    "object_at",
    "shown",
    "snake",
    "string_at",
    "struct_json",
    "value_at",
]

_SHOWN_CHARS = 24  # of a refused value, in a close reason (123 bytes in all)


def snake(camel: str) -> str:
    return "".join("_" + char.lower() if char.isupper() else char for char in camel)


def value_at(obj: dict[str, Any], camel: str) -> Any:
    """A field in either spelling (camelCase first; ``null`` is unset, as in protobuf JSON)."""
    value = obj.get(camel)
    return obj.get(snake(camel)) if value is None else value


def shown(value: Any) -> str:
    """A refused value as the reason quotes it (JSON, cut short)."""
    text = orjson.dumps(value[: _SHOWN_CHARS * 4] if isinstance(value, str) else value).decode()
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def invalid_value(path: str, expected: str, value: Any) -> LiveInvalid:
    return LiveInvalid(f"Invalid value at '{path}' ({expected}), {shown(value)}")


def object_at(value: Any, path: str, expected: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_value(path, expected, value)
    return value


def list_at(value: Any, path: str, expected: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid_value(path, expected, value)
    return value


def string_at(value: Any, path: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise invalid_value(path, "TYPE_STRING", value)


def bool_at(value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise invalid_value(path, "TYPE_BOOL", value)
    return value


def int_at(value: Any, path: str, limit: int) -> int | None:
    """An int32 as protobuf JSON takes it (a number or a string of digits), within ``0..limit``."""
    if value is None:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        number: Any = int(value)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        number = value
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= limit:
        raise invalid_value(path, "TYPE_INT32", value)
    return number


def struct_json(value: Any, path: str) -> str:
    """A ``google.protobuf.Struct`` field (function args, a function's response) as JSON text."""
    return orjson.dumps(object_at(value, path, "google.protobuf.Struct")).decode()


def bytes_at(value: Any, path: str) -> bytes:
    """Protobuf JSON bytes: standard or URL-safe base64, padded or not (google-genai sends images
    URL-safe)."""
    if not isinstance(value, str):
        raise invalid_value(path, "TYPE_BYTES", value)
    text = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise LiveInvalid(
            f"Invalid value at '{path}' (TYPE_BYTES), Base64 decoding failed for {shown(value)}"
        ) from None
