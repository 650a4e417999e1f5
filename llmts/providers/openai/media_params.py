"""Reading the parameters of OpenAI's media routes from a JSON body or a multipart form alike.

A multipart form carries every value as text (the SDK writes ``n=2``, ``stream=true``, repeated
``timestamp_granularities[]``); a JSON body carries typed values. ``Params`` answers both the same way,
with OpenAI's 400 (``param`` named) for a value of the wrong type or out of range.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from llmts.errors import InvalidRequest
from llmts.providers.base import MultipartForm, Upload
from llmts.schema.wire_values import one_of

__all__ = ["Params", "bad", "missing"]


def bad(message: str, param: str, code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def missing(param: str) -> InvalidRequest:
    return InvalidRequest(
        f"Missing required parameter: '{param}'.", code="missing_required_parameter", param=param
    )


class Params:
    """The request's parameters: a JSON object (``form`` None) or a multipart form's text fields."""

    __slots__ = ("body", "form")

    def __init__(self, body: dict[str, Any] | None = None, form: MultipartForm | None = None) -> None:
        self.body = body or {}
        self.form = form

    def raw(self, name: str) -> Any:
        if self.form is not None:
            return self.form.field(name)
        return self.body.get(name)

    def text(self, name: str, *, required: bool = False, default: str = "") -> str:
        value = self.raw(name)
        if value is None:
            if required:
                raise missing(name)
            return default
        if not isinstance(value, str):
            raise bad(f"Invalid type for '{name}': expected a string.", name, "invalid_type")
        return value

    def choice(self, name: str, names: Collection[str], default: str) -> str:
        value = self.raw(name)
        if value is None:
            return default
        if not one_of(value, names):
            supported = ", ".join(f"'{n}'" for n in names)
            raise bad(f"Invalid value for '{name}': expected one of {supported}.", name)
        return value

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        value = self.raw(name)
        if value is None:
            return default
        if isinstance(value, str) and self.form is not None:
            try:
                value = int(value.strip())
            except ValueError:
                raise bad(f"Invalid type for '{name}': expected an integer.", name, "invalid_type") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(f"Invalid type for '{name}': expected an integer.", name, "invalid_type")
        if not low <= value <= high:
            raise bad(f"Invalid value for '{name}': must be between {low} and {high}.", name)
        return value

    def number(self, name: str, default: float, low: float, high: float) -> float:
        value = self.raw(name)
        if value is None:
            return default
        if isinstance(value, str) and self.form is not None:
            try:
                value = float(value.strip())
            except ValueError:
                raise bad(f"Invalid type for '{name}': expected a number.", name, "invalid_type") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"Invalid type for '{name}': expected a number.", name, "invalid_type")
        if not low <= value <= high:
            raise bad(f"Invalid value for '{name}': must be between {low:g} and {high:g}.", name)
        return float(value)

    def flag(self, name: str) -> bool:
        value = self.raw(name)
        if value is None:
            return False
        if self.form is not None and isinstance(value, str):
            if value.lower() in ("true", "1"):
                return True
            if value.lower() in ("false", "0", ""):
                return False
        if isinstance(value, bool):
            return value
        raise bad(f"Invalid type for '{name}': expected a boolean.", name, "invalid_type")

    def texts(self, name: str) -> tuple[str, ...]:
        """A list of strings: JSON array, or the form's repeated ``name[]`` (or ``name``) fields."""
        if self.form is not None:
            return self.form.fields.get(name + "[]", ()) or self.form.fields.get(name, ())
        value = self.body.get(name)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise bad(f"Invalid type for '{name}': expected an array of strings.", name, "invalid_type")
        return tuple(value)

    def files(self, name: str) -> tuple[Upload, ...]:
        """The file parts named ``name`` or ``name[]`` (the SDK's name for a list of files)."""
        if self.form is None:
            return ()
        return self.form.files.get(name, ()) + self.form.files.get(name + "[]", ())
