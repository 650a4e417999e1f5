"""Native tool declarations of a Responses create request -> ``NativeRequest`` (400 naming ``param``).

``web_search`` (and its dated/preview spellings), ``file_search`` and ``code_interpreter`` tools, a named
native ``tool_choice``, ``include`` selectors and prior native call items in ``input``. Unknown fields
of these tools are rejected, never ignored; options llmts does not implement yet (hybrid ranking,
container memory/network controls) are 400 ``unsupported_parameter``. Filters and score thresholds are
read from the body's JSON text with exact decimal numbers.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from llmts.errors import InvalidRequest
from llmts.providers.openai.native_models import check_native_models
from llmts.runtime.native.filters import parse_filter
from llmts.runtime.native.numbers import parse_exact_json
from llmts.schema.native import (
    INCLUDABLE,
    NATIVE_REQUEST_LIMITS,
    CodeInterpreterDeclaration,
    Declaration,
    FileSearchDeclaration,
    NativeFamily,
    NativeRequest,
    WebSearchDeclaration,
)
from llmts.schema.wire_values import one_of

__all__ = ["NATIVE_CHOICES", "NATIVE_INPUT_TYPES", "NATIVE_TOOL_TYPES", "NO_NATIVE", "parse_native"]

NATIVE_TOOL_TYPES: dict[str, NativeFamily] = {
    "web_search": "web_search",
    "web_search_2025_08_26": "web_search",
    "web_search_preview": "web_search",
    "web_search_preview_2025_03_11": "web_search",
    "file_search": "file_search",
    "code_interpreter": "code_interpreter",
}
# Named ``tool_choice`` types that force a native family.
NATIVE_CHOICES: dict[str, NativeFamily] = dict(NATIVE_TOOL_TYPES)
NATIVE_INPUT_TYPES: dict[str, NativeFamily] = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
}
NO_NATIVE = NativeRequest()

_IDS = NATIVE_REQUEST_LIMITS["request_native_ids"]
_ID_CHARS = NATIVE_REQUEST_LIMITS["request_native_id_chars"]
_MAX_RESULTS = NATIVE_REQUEST_LIMITS["max_num_results"]
_RANKERS = frozenset({"auto", "default-2024-11-15"})
_CONTEXT_SIZES = frozenset({"low", "medium", "high"})
_LOCATION_FIELDS = frozenset({"type", "city", "country", "region", "timezone"})
_WEB_FIELDS = frozenset({"type", "filters", "search_context_size", "user_location", "external_web_access"})
_WEB_PREVIEW_FIELDS = frozenset({"type", "search_context_size", "user_location", "search_content_types"})
_FILE_FIELDS = frozenset({"type", "vector_store_ids", "filters", "max_num_results", "ranking_options"})
_RANKING_FIELDS = frozenset({"ranker", "score_threshold"})
_CODE_FIELDS = frozenset({"type", "container"})
_AUTO_FIELDS = frozenset({"type", "file_ids"})
# Recognised but not implemented: 400 instead of being accepted and ignored.
_PENDING_RANKING = {"hybrid_search": "hybrid ranking"}
_PENDING_CONTAINER = {
    "memory_limit": "container memory limits",
    "network_policy": "container network policies",
}


def _bad(message: str, param: str, code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def _fields(raw: dict[str, Any], allowed: frozenset[str], param: str, pending: dict[str, str]) -> None:
    for key in raw:
        if key in pending:
            raise _bad(
                f"{pending[key]} ({param}.{key}) are not supported by llmts yet",
                f"{param}.{key}",
                "unsupported_parameter",
            )
        if key not in allowed:
            raise _bad(f"Unknown parameter: '{param}.{key}'.", f"{param}.{key}", "unknown_parameter")


def _ids(raw: Any, param: str, *, required: bool) -> tuple[str, ...]:
    if raw is None and not required:
        return ()
    if not isinstance(raw, list):
        code = "missing_required_parameter" if raw is None else "invalid_type"
        raise _bad(f"{param} must be an array of ids", param, code)
    if len(raw) > _IDS:
        raise _bad(f"{param} has at most {_IDS} entries", param)
    for position, value in enumerate(raw):
        if not isinstance(value, str) or not value or len(value) > _ID_CHARS:
            raise _bad(f"ids are strings of 1 to {_ID_CHARS} characters", f"{param}[{position}]")
    return tuple(raw)


def _optional_string(raw: dict[str, Any], key: str, param: str) -> None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(f"{key} must be a string", f"{param}.{key}", "invalid_type")


def _web_search(tool: dict[str, Any], index: int) -> WebSearchDeclaration:
    param = f"tools[{index}]"
    preview = tool["type"].startswith("web_search_preview")
    _fields(tool, _WEB_PREVIEW_FIELDS if preview else _WEB_FIELDS, param, {})
    size = tool.get("search_context_size")
    if size is not None and not one_of(size, _CONTEXT_SIZES):
        raise _bad("search_context_size must be low, medium or high", f"{param}.search_context_size")
    location = tool.get("user_location")
    if location is not None:
        if not isinstance(location, dict):
            raise _bad("user_location must be an object", f"{param}.user_location", "invalid_type")
        _fields(location, _LOCATION_FIELDS, f"{param}.user_location", {})
        if location.get("type", "approximate") not in ("approximate", None):
            raise _bad("user_location.type must be approximate", f"{param}.user_location.type")
        for key in ("city", "country", "region", "timezone"):
            _optional_string(location, key, f"{param}.user_location")
    access = tool.get("external_web_access")
    if access is not None and not isinstance(access, bool):
        raise _bad("external_web_access must be a boolean", f"{param}.external_web_access", "invalid_type")
    types = tool.get("search_content_types")
    if types is not None and (not isinstance(types, list) or any(t not in ("text", "image") for t in types)):
        raise _bad("search_content_types must be an array of text/image", f"{param}.search_content_types")
    domains: tuple[str, ...] | None = None
    filters = tool.get("filters")
    if filters is not None:
        if not isinstance(filters, dict):
            raise _bad("filters must be an object", f"{param}.filters", "invalid_type")
        _fields(filters, frozenset({"allowed_domains"}), f"{param}.filters", {})
        raw_domains = filters.get("allowed_domains")
        if raw_domains is not None:
            domains = _ids(raw_domains, f"{param}.filters.allowed_domains", required=True)
    return WebSearchDeclaration(index, tool["type"], domains)


def _file_search(tool: dict[str, Any], index: int, exact: Any) -> FileSearchDeclaration:
    param = f"tools[{index}]"
    _fields(tool, _FILE_FIELDS, param, {})
    stores = _ids(tool.get("vector_store_ids"), f"{param}.vector_store_ids", required=True)
    max_results: int | None = None
    if "max_num_results" in tool:
        value = tool["max_num_results"]
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad("max_num_results must be an integer", f"{param}.max_num_results", "invalid_type")
        if not 1 <= value <= _MAX_RESULTS:
            raise _bad(f"max_num_results must be between 1 and {_MAX_RESULTS}", f"{param}.max_num_results")
        max_results = value
    ranker: str | None = None
    threshold: Decimal | None = None
    if "ranking_options" in tool:
        options = tool["ranking_options"]
        where = f"{param}.ranking_options"
        if not isinstance(options, dict):
            raise _bad("ranking_options must be an object", where, "invalid_type")
        _fields(options, _RANKING_FIELDS, where, _PENDING_RANKING)
        if "ranker" in options:
            if not one_of(options["ranker"], _RANKERS):
                raise _bad("ranker must be auto or default-2024-11-15", f"{where}.ranker")
            ranker = str(options["ranker"])
        if "score_threshold" in options:
            value = exact()[index]["ranking_options"]["score_threshold"]
            if not isinstance(value, Decimal):
                raise _bad("score_threshold must be a number", f"{where}.score_threshold", "invalid_type")
            if not 0 <= value <= 1:
                raise _bad("score_threshold must be between 0 and 1", f"{where}.score_threshold")
            threshold = value
    filters = None
    if tool.get("filters") is not None:
        filters = parse_filter(exact()[index]["filters"], f"{param}.filters")
    return FileSearchDeclaration(index, stores, filters, max_results, threshold, ranker)


def _code_interpreter(tool: dict[str, Any], index: int) -> CodeInterpreterDeclaration:
    param = f"tools[{index}]"
    _fields(tool, _CODE_FIELDS, param, {})
    if "container" not in tool or tool["container"] is None:
        raise _bad(
            "code_interpreter needs a container: an id or {type: auto}",
            f"{param}.container",
            "missing_required_parameter",
        )
    container = tool["container"]
    where = f"{param}.container"
    if isinstance(container, str):
        if not container or len(container) > _ID_CHARS:
            raise _bad(f"a container id has 1 to {_ID_CHARS} characters", where)
        return CodeInterpreterDeclaration(index, container)
    if not isinstance(container, dict):
        raise _bad("container must be an id or an object", where, "invalid_type")
    _fields(container, _AUTO_FIELDS, where, _PENDING_CONTAINER)
    if container.get("type") != "auto":
        raise _bad("container.type must be auto", f"{where}.type")
    if "file_ids" in container and container["file_ids"] is None:
        raise _bad("file_ids must be an array (omit it for none)", f"{where}.file_ids", "invalid_type")
    return CodeInterpreterDeclaration(
        index, None, _ids(container.get("file_ids"), f"{where}.file_ids", required=False)
    )


class _Exact:
    """The body's ``tools`` with exact numbers, parsed on first use (only filters/thresholds need it)."""

    __slots__ = ("_body", "_tools")

    def __init__(self, body: bytes) -> None:
        self._body = body
        self._tools: Any = None

    def __call__(self) -> Any:
        if self._tools is None:
            self._tools = parse_exact_json(self._body)["tools"]
        return self._tools


def _include(raw: Any) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list):
        raise _bad("include must be an array", "include", "invalid_type")
    for position, value in enumerate(raw):
        if not one_of(value, INCLUDABLE):
            raise _bad(
                "include entries must be one of " + ", ".join(sorted(INCLUDABLE)), f"include[{position}]"
            )
    return frozenset(raw)


def _prior_items(raw: Any) -> tuple[NativeFamily, ...]:
    if not isinstance(raw, list):
        return ()
    kinds: list[NativeFamily] = []
    for position, item in enumerate(raw):
        if isinstance(item, dict) and one_of(item.get("type"), NATIVE_INPUT_TYPES):
            item_id = item.get("id")
            if not isinstance(item_id, str) or not item_id or len(item_id) > _ID_CHARS:
                raise _bad(
                    f"a {item['type']} input item needs an id of 1 to {_ID_CHARS} characters",
                    f"input[{position}].id",
                    "missing_required_parameter",
                )
            kinds.append(NATIVE_INPUT_TYPES[item["type"]])
    return tuple(kinds)


def parse_native(body: dict[str, Any], raw_body: bytes, model: str, strict: bool) -> NativeRequest:
    """The request's native view (``NO_NATIVE`` when it has none); ``model`` is the resolved model,
    ``strict`` the session's ``strict_requests`` (which turns the models' documented refusals on)."""
    tools = body.get("tools")
    choice_raw = body.get("tool_choice")
    choice_type = choice_raw.get("type") if isinstance(choice_raw, dict) else None
    has_native_tool = isinstance(tools, list) and any(
        isinstance(tool, dict) and one_of(tool.get("type"), NATIVE_TOOL_TYPES) for tool in tools
    )
    prior = _prior_items(body.get("input"))
    include = _include(body.get("include"))
    if not has_native_tool and not one_of(choice_type, NATIVE_CHOICES) and not prior and not include:
        return NO_NATIVE
    declarations: list[Declaration] = []
    uses: list[tuple[NativeFamily, str]] = []
    exact = _Exact(raw_body)
    for index, tool in enumerate(tools if isinstance(tools, list) else ()):
        kind = tool.get("type") if isinstance(tool, dict) else None
        family = NATIVE_TOOL_TYPES.get(kind) if isinstance(kind, str) else None
        if family is None:
            continue
        declaration: Declaration
        if family == "web_search":
            declaration = _web_search(tool, index)
        elif family == "file_search":
            declaration = _file_search(tool, index, exact)
        else:
            declaration = _code_interpreter(tool, index)
        declarations.append(declaration)
        uses.append((family, f"tools[{index}]"))
    choice: NativeFamily | None = None
    if isinstance(choice_type, str) and choice_type in NATIVE_CHOICES:
        choice = NATIVE_CHOICES[choice_type]
        if not any(declaration.family == choice for declaration in declarations):
            raise _bad(f"tool_choice forces {choice_type} but tools declares no {choice} tool", "tool_choice")
        uses.append((choice, "tool_choice"))
    if strict:
        check_native_models(model, body.get("reasoning"), uses)
    return NativeRequest(tuple(declarations), choice, include, prior)
