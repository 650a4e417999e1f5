"""``items`` response fixtures: ordered OpenAI Responses output items (docs/native-tools.md).

Control data names each output item and citation by ``kind``; the Responses wire uses the provider's
``type`` values (``file_search`` -> ``file_search_call``, ``file`` -> ``file_citation``...). Nothing is
retrieved, executed or fetched: ids, results, code and outputs are scripted references.

Every collection and identifier is bounded (``NATIVE_LIMITS``, in ``LIMITS``). Cross-item rules (distinct
ids, citations that reference a result or a container file of the same group, index ranges inside the
message text) are checked once, at configure time, by ``check_items``.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator
from pydantic_core import PydanticCustomError

from llmts.schema.model_base import STRICT, without_none

__all__ = [
    "NATIVE_LIMITS",
    "AttributeValue",
    "Citation",
    "CodeInterpreterImageOutput",
    "CodeInterpreterItem",
    "CodeInterpreterLogsOutput",
    "CodeInterpreterOutput",
    "ContainerFileCitation",
    "FileCitation",
    "FileSearchItem",
    "FileSearchResult",
    "MessageItem",
    "OutputItem",
    "UrlCitation",
    "WebSearchItem",
    "check_items",
    "exact_fixture_numbers",
    "json_number",
]

# Our fixture contract's bounds (documented in docs/configuration.md with the other LIMITS).
NATIVE_LIMITS: dict[str, int] = {
    "native_items_per_response": 128,
    "native_id_chars": 128,
    # queries, results, vector stores, input/generated files, code chunks, outputs, sources, citations
    "native_entries": 128,
    "file_attributes": 16,
    "attribute_key_chars": 64,
    "attribute_value_chars": 512,
    "url_chars": 2048,
    "message_chunks": 4096,
}

_ID = NATIVE_LIMITS["native_id_chars"]
_ENTRIES = NATIVE_LIMITS["native_entries"]
_STRICT = ConfigDict(**STRICT, arbitrary_types_allowed=True)

NativeId = Annotated[str, Field(min_length=1, max_length=_ID)]
AttributeValue = str | bool | int | float | Decimal


def _at(at: str, message: str) -> PydanticCustomError:
    """An error about ``at`` inside the response (``details[].path`` gets it appended)."""
    return PydanticCustomError("llmts_at", "{message}", {"at": at, "message": message})


def _http_url(value: str, what: str) -> str:
    if len(value) > NATIVE_LIMITS["url_chars"]:
        raise ValueError(f"{what} must be at most {NATIVE_LIMITS['url_chars']} characters")
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or any(c.isspace() for c in value):
        raise ValueError(f"{what} must be an absolute http(s) URL")
    return value


def _distinct(values: list[str] | None, what: str) -> list[str] | None:
    if values is not None and len(set(values)) != len(values):
        raise ValueError(f"{what} must be distinct")
    return values


_INT_MIN, _UINT_MAX = -(2**63), 2**64 - 1


def json_number(value: int | float | Decimal) -> int | float:
    """A number as JSON shows it: integer literals (64-bit) as integers, everything else as a float."""
    if isinstance(value, Decimal):
        if value.as_tuple().exponent == 0 and _INT_MIN <= value <= _UINT_MAX:
            return int(value)
        return float(value)
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, Decimal):
        return value.is_finite()
    return not isinstance(value, float) or math.isfinite(value)


# --- citations --------------------------------------------------------------------------------------


class UrlCitation(BaseModel):
    """``url_citation``: the message text ``[start_index, end_index)`` cites a web page (non-empty range)."""

    model_config = _STRICT

    kind: Literal["url"]
    url: str
    title: str = Field(default="", max_length=NATIVE_LIMITS["attribute_value_chars"])
    start_index: int = Field(ge=0)
    end_index: int = Field(ge=0)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value, "url")

    @model_validator(mode="after")
    def _range(self) -> UrlCitation:
        if self.end_index <= self.start_index:
            raise ValueError("a url citation needs start_index < end_index")
        return self


class FileCitation(BaseModel):
    """``file_citation``: a file-search result's file, inserted at ``index`` of the message text."""

    model_config = _STRICT

    kind: Literal["file"]
    file_id: NativeId
    filename: str = Field(min_length=1, max_length=NATIVE_LIMITS["attribute_value_chars"])
    index: int = Field(ge=0)


class ContainerFileCitation(BaseModel):
    """``container_file_citation``: a container file of a code_interpreter item (empty ranges allowed)."""

    model_config = _STRICT

    kind: Literal["container_file"]
    container_id: NativeId
    file_id: NativeId
    filename: str = Field(min_length=1, max_length=NATIVE_LIMITS["attribute_value_chars"])
    start_index: int = Field(ge=0)
    end_index: int = Field(ge=0)

    @model_validator(mode="after")
    def _range(self) -> ContainerFileCitation:
        if self.end_index < self.start_index:
            raise ValueError("a container_file citation needs start_index <= end_index")
        return self


Citation = Annotated[UrlCitation | FileCitation | ContainerFileCitation, Field(discriminator="kind")]


# --- output items -----------------------------------------------------------------------------------


class MessageItem(BaseModel):
    """An assistant ``message`` with one ``output_text`` part and its ordered citations."""

    model_config = _STRICT

    kind: Literal["message"]
    id: NativeId | None = None
    content: str
    # How a stream splits ``content`` (an extension, as for ``text`` fixtures); concatenates to it.
    chunks: list[str] | None = Field(default=None, min_length=1, max_length=NATIVE_LIMITS["message_chunks"])
    citations: list[Citation] = Field(default_factory=list, max_length=_ENTRIES)

    @model_validator(mode="after")
    def _text_rules(self) -> MessageItem:
        if self.chunks is not None and "".join(self.chunks) != self.content:
            raise ValueError("chunks must concatenate to content")
        if self.citations and not self.content.isascii():
            raise _at("content", "cited message content must be ASCII (citation indexes count characters)")
        length = len(self.content)
        for position, citation in enumerate(self.citations):
            end = citation.index if isinstance(citation, FileCitation) else citation.end_index
            if end > length:
                raise _at(
                    f"citations[{position}]", f"reaches index {end}, beyond the content's {length} characters"
                )
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        return without_none(handler(self))


class FileSearchResult(BaseModel):
    """One scripted search result; every field but ``file_id`` is optional and stays absent when unset."""

    model_config = _STRICT

    file_id: NativeId
    filename: str | None = Field(
        default=None, min_length=1, max_length=NATIVE_LIMITS["attribute_value_chars"]
    )
    text: str | None = None
    score: float | Decimal | None = None
    attributes: dict[str, AttributeValue] | None = None

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)) or not _finite(value):
            raise ValueError("score must be a finite number")
        if not 0 <= value <= 1:
            raise ValueError("score must be between 0 and 1")
        return value if isinstance(value, (float, Decimal)) else float(value)

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError("attributes must be an object")
        if len(value) > NATIVE_LIMITS["file_attributes"]:
            raise ValueError(f"a result has at most {NATIVE_LIMITS['file_attributes']} attributes")
        for key, item in value.items():
            if not isinstance(key, str) or not key.strip() or len(key) > NATIVE_LIMITS["attribute_key_chars"]:
                raise ValueError(
                    f"attribute keys must be nonblank and at most {NATIVE_LIMITS['attribute_key_chars']} "
                    "characters"
                )
            if isinstance(item, str):
                if len(item) > NATIVE_LIMITS["attribute_value_chars"]:
                    raise ValueError(
                        f"attribute {key!r}: strings are at most {NATIVE_LIMITS['attribute_value_chars']} "
                        "characters"
                    )
            elif not isinstance(item, (bool, int, float, Decimal)) or not _finite(item):
                raise ValueError(f"attribute {key!r} must be a string, a finite number or a boolean")
        return value

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data = without_none(handler(self))
        if isinstance(self.score, Decimal):
            data["score"] = json_number(self.score)
        if self.attributes is not None:
            data["attributes"] = {
                key: json_number(value) if isinstance(value, Decimal) else value
                for key, value in self.attributes.items()
            }
        return data


class FileSearchItem(BaseModel):
    """A ``file_search_call``: the stores it searched (all must be declared by the request) and results."""

    model_config = _STRICT

    kind: Literal["file_search"]
    id: NativeId | None = None
    vector_store_ids: list[NativeId] = Field(min_length=1, max_length=_ENTRIES)
    queries: list[str] = Field(min_length=1, max_length=_ENTRIES)
    results: list[FileSearchResult] = Field(default_factory=list, max_length=_ENTRIES)

    @field_validator("vector_store_ids")
    @classmethod
    def _stores(cls, value: list[str]) -> list[str]:
        _distinct(value, "vector_store_ids")
        return value

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        return without_none(handler(self))


class CodeInterpreterLogsOutput(BaseModel):
    model_config = _STRICT

    kind: Literal["logs"]
    logs: str


class CodeInterpreterImageOutput(BaseModel):
    model_config = _STRICT

    kind: Literal["image"]
    url: str

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value, "an image url")


CodeInterpreterOutput = Annotated[
    CodeInterpreterLogsOutput | CodeInterpreterImageOutput, Field(discriminator="kind")
]


class CodeInterpreterItem(BaseModel):
    """A ``code_interpreter_call`` in a fixed container. ``code`` and ``outputs`` may be null (distinct from
    ``""`` and ``[]``); ``generated_file_ids`` are ownership metadata for container-file citations."""

    model_config = _STRICT

    kind: Literal["code_interpreter"]
    id: NativeId | None = None
    container_id: NativeId
    input_file_ids: list[NativeId] = Field(default_factory=list, max_length=_ENTRIES)
    generated_file_ids: list[NativeId] = Field(default_factory=list, max_length=_ENTRIES)
    code: str | None = None
    code_chunks: list[str] | None = Field(default=None, min_length=1, max_length=_ENTRIES)
    outputs: list[CodeInterpreterOutput] | None = Field(default=None, max_length=_ENTRIES)

    @model_validator(mode="after")
    def _rules(self) -> CodeInterpreterItem:
        _distinct(self.input_file_ids, "input_file_ids")
        _distinct(self.generated_file_ids, "generated_file_ids")
        if self.code_chunks is not None:
            if self.code is None:
                raise ValueError("code_chunks need non-null code")
            if "".join(self.code_chunks) != self.code:
                raise ValueError("code_chunks must concatenate to code")
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        return without_none(handler(self))


class WebSearchItem(BaseModel):
    """A ``web_search_call``: a ``search`` (``query``, optional ``sources``), ``open_page`` (``url``) or
    ``find_in_page`` (``url``, ``pattern``) action."""

    model_config = _STRICT

    kind: Literal["web_search"]
    id: NativeId | None = None
    action: Literal["search", "open_page", "find_in_page"] = "search"
    query: str | None = Field(default=None, min_length=1)
    sources: list[str] | None = Field(default=None, max_length=_ENTRIES)
    url: str | None = None
    pattern: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _action_fields(self) -> WebSearchItem:
        if self.action == "search":
            if self.query is None:
                raise ValueError("a search action needs query")
            if self.url is not None or self.pattern is not None:
                raise ValueError("a search action takes query and sources, not url or pattern")
        else:
            if self.url is None:
                raise ValueError(f"an {self.action} action needs url")
            if self.query is not None or self.sources is not None:
                raise ValueError(f"an {self.action} action takes no query or sources")
            if (self.pattern is not None) != (self.action == "find_in_page"):
                raise ValueError("pattern is required by find_in_page and allowed with no other action")
        if self.url is not None:
            _http_url(self.url, "url")
        for source in self.sources or ():
            _http_url(source, "sources entries")
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data = without_none(handler(self))
        if data.get("action") == "search":
            data.pop("action")
        return data


OutputItem = Annotated[
    MessageItem | FileSearchItem | CodeInterpreterItem | WebSearchItem, Field(discriminator="kind")
]


# --- group rules ------------------------------------------------------------------------------------


def check_items(items: list[Any]) -> None:
    """Rules across one response's items: distinct ids; each citation resolves inside the group."""
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.id is not None:
            if item.id in seen:
                raise _at(f"items[{index}].id", f"output item id {item.id!r} is used twice in this response")
            seen.add(item.id)
    results: dict[str, set[str | None]] = {}
    containers: dict[str, set[str]] = {}
    for item in items:
        if isinstance(item, FileSearchItem):
            for result in item.results:
                results.setdefault(result.file_id, set()).add(result.filename)
        elif isinstance(item, CodeInterpreterItem):
            owned = containers.setdefault(item.container_id, set())
            owned.update(item.input_file_ids, item.generated_file_ids)
    for index, item in enumerate(items):
        if not isinstance(item, MessageItem):
            continue
        for position, citation in enumerate(item.citations):
            where = f"items[{index}].citations[{position}]"
            if isinstance(citation, FileCitation):
                names = results.get(citation.file_id)
                if names is None:
                    raise _at(
                        where,
                        f"cites file {citation.file_id!r}, which no file_search result of this response has",
                    )
                if None not in names and citation.filename not in names:
                    raise _at(
                        where,
                        f"names file {citation.filename!r} but the result for {citation.file_id!r} is "
                        + ", ".join(repr(name) for name in sorted(n for n in names if n)),
                    )
            elif isinstance(citation, ContainerFileCitation):
                files = containers.get(citation.container_id)
                if files is None:
                    raise _at(
                        where,
                        f"cites container {citation.container_id!r}, which no code_interpreter item of this "
                        "response uses",
                    )
                if citation.file_id not in files:
                    raise _at(
                        where,
                        f"cites file {citation.file_id!r}, which is neither an input nor a generated file of "
                        f"container {citation.container_id!r}",
                    )


# --- exact numbers at configure time ----------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _splice(plain: Any, exact: Any) -> None:
    """Replace, in place, the scores and numeric attributes of every file_search result in ``plain`` with
    the exact ``Decimal`` literals of the same positions in ``exact``."""
    if isinstance(plain, dict) and isinstance(exact, dict):
        if plain.get("kind") == "file_search" and isinstance(plain.get("results"), list):
            for result, exact_result in zip(plain["results"], exact.get("results") or [], strict=False):
                if not isinstance(result, dict) or not isinstance(exact_result, dict):
                    continue
                if isinstance(exact_result.get("score"), Decimal):
                    result["score"] = exact_result["score"]
                attributes, exact_attributes = result.get("attributes"), exact_result.get("attributes")
                if isinstance(attributes, dict) and isinstance(exact_attributes, dict):
                    for key, value in exact_attributes.items():
                        if isinstance(value, Decimal) and key in attributes:
                            attributes[key] = value
            return
        for key, value in plain.items():
            _splice(value, exact.get(key))
    elif isinstance(plain, list) and isinstance(exact, list):
        for value, exact_value in zip(plain, exact, strict=False):
            _splice(value, exact_value)


def exact_fixture_numbers(body: bytes, data: Any) -> Any:
    """Give file-search result numbers their exact JSON literals (``Decimal``), which orjson's binary
    floats cannot keep (``0.10000000000000000001`` is not ``0.1`` to a filter). Only when there is one."""
    if b'"file_search"' not in body:
        return data
    try:
        exact = json.loads(body, parse_float=Decimal, parse_int=Decimal, parse_constant=_reject_constant)
    except ValueError:
        return data
    _splice(data, exact)
    return data
