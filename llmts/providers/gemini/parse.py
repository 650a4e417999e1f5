"""Gemini ``generateContent`` request (camelCase JSON, the model in the path) -> ``NeutralRequest``.

Lenient where SDKs add fields (unknown keys are ignored; proto-JSON snake_case spellings are accepted like
Google does), strict where Google answers 400 (wrong types, empty ``contents``, unknown roles or modes).

* ``contents``: ``user`` turns become user messages, ``model`` turns assistant messages (text parts joined,
  ``functionCall`` parts as tool calls), ``functionResponse`` parts tool messages. Gemini ids are optional:
  a response without ``id`` is matched to the oldest unanswered ``functionCall`` of the same name.
* ``systemInstruction`` and the serialized ``tools`` form the preamble (prompt tokens, cache prefix).
* ``toolConfig.functionCallingConfig``: ``AUTO``/``VALIDATED`` -> auto, ``NONE`` -> none, ``ANY`` ->
  required (one allowed name: that function; several: only those are declared).
* ``generationConfig.responseMimeType: application/json`` -> ``json_schema`` with a schema, else
  ``json_object``.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall
from llmts.schema.neutral import (
    NeutralMessage,
    NeutralRequest,
    NeutralToolCall,
    ResponseFormat,
    ToolChoice,
    build,
    neutral_message,
    reasoning_settings,
)
from llmts.schema.wire_values import one_of

__all__ = [
    "GENERATE",
    "STREAM_JSON",
    "STREAM_SSE",
    "camel_or_snake",
    "invalid_argument",
    "parse_body",
    "parse_generate",
    "parse_stream",
]

# Journal operations: a stream is SSE with ``?alt=sse`` (what SDKs ask for), else one streamed JSON array.
GENERATE = "generate_content"
STREAM_SSE = "stream_generate_content.sse"
STREAM_JSON = "stream_generate_content"

_AUTO = ToolChoice()
_CHOICE_NONE = ToolChoice(mode="none")
_CHOICE_REQUIRED = ToolChoice(mode="required")
_MODES = frozenset({"AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"})
_SCHEMA_KEYS = ("responseSchema", "response_schema", "responseJsonSchema", "response_json_schema")


def invalid_argument(message: str, param: str) -> InvalidRequest:
    """Gemini's 400 ``INVALID_ARGUMENT`` naming ``param``."""
    return InvalidRequest(message, code="invalid_argument", param=param)


def camel_or_snake(obj: dict[str, Any], camel: str, snake: str) -> Any:
    """A field the API accepts in either spelling (camelCase first)."""
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


class _CallIds:
    """Pairs ``functionResponse`` parts with the ``functionCall`` they answer (ids are optional)."""

    def __init__(self) -> None:
        self._pending: dict[str, list[str]] = {}
        self._latest: dict[str, str] = {}

    def called(self, name: str, call_id: str) -> None:
        self._pending.setdefault(name, []).append(call_id)
        self._latest[name] = call_id

    def answered(self, name: str, call_id: str | None) -> str:
        pending = self._pending.get(name)
        if call_id:
            if pending and call_id in pending:
                pending.remove(call_id)
            return call_id
        if pending:
            return pending.pop(0)
        # No unanswered call of that name: the latest one (a repeated answer), else the name itself.
        return self._latest.get(name, name)


def _object(value: Any, param: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_argument(f"{param} must be a JSON object", param)
    return value


def _name(raw: dict[str, Any], param: str) -> str:
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise invalid_argument(f"{param}.name is required", f"{param}.name")
    return name


def _optional_id(raw: dict[str, Any], param: str) -> str | None:
    value = raw.get("id")
    if value is not None and not isinstance(value, str):
        raise invalid_argument(f"{param}.id must be a string", f"{param}.id")
    return value or None


def _content(content: Any, index: int, ids: _CallIds, out: list[NeutralMessage]) -> None:
    param = f"contents[{index}]"
    if not isinstance(content, dict):
        raise invalid_argument(f"{param} must be a Content object", param)
    role = content.get("role") or "user"  # single-turn requests may omit it
    if role not in ("user", "model", "function"):
        raise invalid_argument(f"Please use a valid role: user, model. (got {role!r})", f"{param}.role")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise invalid_argument(f"{param}.parts must not be empty", f"{param}.parts")
    texts: list[str] = []
    calls: list[NeutralToolCall] = []
    answers = 0
    for part_index, part in enumerate(parts):
        where = f"{param}.parts[{part_index}]"
        if not isinstance(part, dict):
            raise invalid_argument(f"{where} must be a Part object", where)
        text = part.get("text")
        if text is not None:
            if not isinstance(text, str):
                raise invalid_argument(f"{where}.text must be a string", f"{where}.text")
            if not part.get("thought"):  # thought summaries are not part of the answer text
                texts.append(text)
            continue
        call = camel_or_snake(part, "functionCall", "function_call")
        if call is not None:
            where += ".functionCall"
            if role != "model":
                raise invalid_argument(f"{where} is only allowed in a model turn", where)
            call = _object(call, where)
            name = _name(call, where)
            call_id = _optional_id(call, where) or f"call_{index}_{part_index}"
            ids.called(name, call_id)
            arguments = orjson.dumps(_object(call.get("args"), f"{where}.args")).decode()
            calls.append(
                build(NeutralToolCall, id=call_id, name=name, arguments=arguments, arguments_chunks=())
            )
            continue
        result = camel_or_snake(part, "functionResponse", "function_response")
        if result is not None:
            where += ".functionResponse"
            if role == "model":
                raise invalid_argument(f"{where} is not allowed in a model turn", where)
            result = _object(result, where)
            name = _name(result, where)
            call_id = ids.answered(name, _optional_id(result, where))
            payload = orjson.dumps(_object(result.get("response"), f"{where}.response")).decode()
            out.append(neutral_message(role="tool", text=payload, tool_calls=(), tool_call_id=call_id))
            answers += 1
        # inlineData, fileData, executableCode...: accepted, not simulated
    if role == "model":
        out.append(
            neutral_message(
                role="assistant",
                text="".join(texts),
                tool_calls=tuple(calls),
                tool_call_id=None,
            )
        )
    elif texts or not answers:
        out.append(neutral_message(role="user", text="".join(texts), tool_calls=(), tool_call_id=None))


def _messages(raw: Any) -> tuple[NeutralMessage, ...]:
    if not isinstance(raw, list) or not raw:
        raise invalid_argument(
            "contents is not specified: it must be a non-empty array of Content", "contents"
        )
    ids = _CallIds()
    out: list[NeutralMessage] = []
    for index, content in enumerate(raw):
        _content(content, index, ids, out)
    return tuple(out)


def _system_text(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict) or not isinstance(raw.get("parts"), list):
        raise invalid_argument("systemInstruction must be a Content object with parts", "systemInstruction")
    texts = []
    for index, part in enumerate(raw["parts"]):
        text = part.get("text") if isinstance(part, dict) else None
        if text is not None and not isinstance(text, str):
            raise invalid_argument(
                "a text part needs a string text", f"systemInstruction.parts[{index}].text"
            )
        texts.append(text or "")
    return "".join(texts)


def _tool_names(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise invalid_argument("tools must be an array of Tool objects", "tools")
    names: list[str] = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise invalid_argument(f"tools[{index}] must be a Tool object", f"tools[{index}]")
        declarations = camel_or_snake(tool, "functionDeclarations", "function_declarations")
        if declarations is None:
            continue  # googleSearch, codeExecution, urlContext...: no function names
        param = f"tools[{index}].functionDeclarations"
        if not isinstance(declarations, list):
            raise invalid_argument(f"{param} must be an array", param)
        for position, declaration in enumerate(declarations):
            where = f"{param}[{position}]"
            if not isinstance(declaration, dict):
                raise invalid_argument(f"{where} must be a FunctionDeclaration object", where)
            names.append(_name(declaration, where))
    return tuple(names)


def _tool_choice(raw: Any, declared: tuple[str, ...]) -> tuple[ToolChoice, tuple[str, ...]]:
    if raw is None:
        return _AUTO, declared
    config = camel_or_snake(_object(raw, "toolConfig"), "functionCallingConfig", "function_calling_config")
    if config is None:
        return _AUTO, declared
    param = "toolConfig.functionCallingConfig"
    config = _object(config, param)
    mode = config.get("mode", "AUTO")
    if not one_of(mode, _MODES):
        raise invalid_argument(
            f"{param}.mode must be one of AUTO, ANY, NONE, VALIDATED (got {mode!r})", f"{param}.mode"
        )
    if mode == "NONE":
        return _CHOICE_NONE, declared
    if mode != "ANY":
        return _AUTO, declared
    allowed = camel_or_snake(config, "allowedFunctionNames", "allowed_function_names")
    if not allowed:
        return _CHOICE_REQUIRED, declared
    where = f"{param}.allowedFunctionNames"
    if not isinstance(allowed, list) or not all(isinstance(name, str) for name in allowed):
        raise invalid_argument(f"{where} must be an array of strings", where)
    unknown = [name for name in allowed if name not in declared]
    if unknown:
        raise invalid_argument(
            f"{where} names functions the request does not declare: {', '.join(unknown)}", where
        )
    if len(allowed) == 1:
        return build(ToolChoice, mode="function", name=allowed[0]), declared
    return _CHOICE_REQUIRED, tuple(allowed)


def _thinking_config(body: dict[str, Any]) -> dict[str, Any] | None:
    config = camel_or_snake(body, "generationConfig", "generation_config")
    if not isinstance(config, dict):
        return None
    return reasoning_settings(camel_or_snake(config, "thinkingConfig", "thinking_config"))


def _response_format(raw: Any) -> ResponseFormat:
    if raw is None:
        return "text"
    config = _object(raw, "generationConfig")
    count = camel_or_snake(config, "candidateCount", "candidate_count")
    if count is not None and count != 1:
        raise invalid_argument(
            "llmts answers one candidate per request; candidateCount must be 1",
            "generationConfig.candidateCount",
        )
    mime = camel_or_snake(config, "responseMimeType", "response_mime_type")
    if mime is None:
        return "text"
    if not isinstance(mime, str):
        raise invalid_argument("responseMimeType must be a string", "generationConfig.responseMimeType")
    if mime != "application/json":
        return "text"  # text/plain, text/x.enum: plain text answers
    return "json_schema" if any(config.get(key) is not None for key in _SCHEMA_KEYS) else "json_object"


def parse_body(body: dict[str, Any], model: str, operation: str) -> NeutralRequest:
    """A ``GenerateContentRequest`` body for ``model`` (also what ``countTokens`` wraps)."""
    tools = body.get("tools")
    declared = _tool_names(tools)
    tool_choice, tool_names = _tool_choice(camel_or_snake(body, "toolConfig", "tool_config"), declared)
    system = _system_text(camel_or_snake(body, "systemInstruction", "system_instruction"))
    preamble = system
    if tools:
        preamble = f"{system}\n{orjson.dumps(tools).decode()}" if system else orjson.dumps(tools).decode()
    return build(
        NeutralRequest,
        provider="gemini",
        operation=operation,
        model=model,
        messages=_messages(body.get("contents")),
        tool_names=tool_names,
        tool_choice=tool_choice,
        response_format=_response_format(camel_or_snake(body, "generationConfig", "generation_config")),
        stream=operation != GENERATE,
        stream_include_usage=operation != GENERATE,
        preamble=preamble,
        system=system,
        cache_mode="implicit",
        cache_breakpoints=(),
        choices=1,
        reasoning_settings=_thinking_config(body),
        exact_tokens=None,
    )


def parse_generate(call: ProviderCall) -> NeutralRequest:
    return parse_body(call.request.json_object(), call.request.args["model"], GENERATE)


def parse_stream(call: ProviderCall) -> NeutralRequest:
    operation = STREAM_SSE if call.request.query("alt") == "sse" else STREAM_JSON
    return parse_body(call.request.json_object(), call.request.args["model"], operation)
