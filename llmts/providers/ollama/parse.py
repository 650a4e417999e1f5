"""Ollama ``/api/chat`` and ``/api/generate`` requests -> ``NeutralRequest`` (docs/providers.md, "Ollama").

Lenient where clients add fields (``options``, ``keep_alive``, ``images``... are ignored), strict where
Ollama answers 400 (wrong types, a missing ``model``, unknown roles, a bad ``format`` or ``think``).

* ``stream`` defaults to **true** when absent, as Ollama does (the ``ollama`` client always sends it).
* ``messages``: ``system``/``user``/``assistant``/``tool``; assistant ``tool_calls`` carry ``arguments`` as
  a JSON object. Ollama has no call ids: a ``tool`` message answers a call as ``_CallIds`` pairs them;
  a call's id is its wire ``id`` if any, else its name.
* ``tools`` form the preamble (prompt tokens, cache prefix); Ollama has no ``tool_choice``.
* ``format``: ``"json"`` -> ``json_object``, a JSON schema object -> ``json_schema``, ``""`` -> text.
* ``think``: ``true``/``false`` or ``"low"``/``"medium"``/``"high"`` (accepted; the answer's ``thinking``
  comes from the fixture).
* ``/api/generate``: ``prompt`` is the user message, ``system`` the system prompt.
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

__all__ = ["CHAT", "GENERATE", "parse_chat", "parse_generate"]

CHAT = "chat"
GENERATE = "generate"

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_THINK_LEVELS = frozenset({"low", "medium", "high"})
_AUTO = ToolChoice()


def _bad(message: str) -> InvalidRequest:
    return InvalidRequest(message, code="invalid_request")


def _string(body: dict[str, Any], key: str, where: str = "") -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _bad(f"{where}{key} must be a string")
    return value


class _CallIds:
    """Pairs tool results with the calls they answer (Ollama's wire has no call ids): by id when the
    client sends one, else the oldest unanswered call of the result's ``tool_name``, else (ollama clients
    before 0.5 send no ``tool_name``) the oldest unanswered call of any name."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, str]] = []  # (name, id), oldest first

    def called(self, name: str, call_id: str) -> None:
        self._pending.append((name, call_id))

    def answered(self, name: str, call_id: str | None) -> str:
        for index, (pending_name, pending_id) in enumerate(self._pending):
            if (call_id and pending_id == call_id) or (not call_id and (not name or pending_name == name)):
                del self._pending[index]
                return pending_id
        return call_id or name


def _tool_calls(raw: Any, where: str, ids: _CallIds) -> tuple[NeutralToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _bad(f"{where}.tool_calls must be an array")
    calls = []
    for index, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise _bad(f"{where}.tool_calls[{index}].function.name is required")
        arguments = function.get("arguments", {})
        if not isinstance(arguments, dict):
            raise _bad(f"{where}.tool_calls[{index}].function.arguments must be an object")
        wire_id = call.get("id")
        call_id = wire_id if isinstance(wire_id, str) and wire_id else name
        ids.called(name, call_id)
        calls.append(
            build(
                NeutralToolCall,
                id=call_id,
                name=name,
                arguments=orjson.dumps(arguments).decode(),
                arguments_chunks=(),
            )
        )
    return tuple(calls)


def _messages(raw: Any) -> tuple[NeutralMessage, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _bad("messages must be an array")
    ids = _CallIds()
    messages = []
    for index, message in enumerate(raw):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise _bad(f"{where} must be an object")
        role = message.get("role")
        if not one_of(role, _ROLES):
            raise _bad(f"{where}.role must be one of system, user, assistant, tool (got {role!r})")
        text = _string(message, "content", where + ".")
        if role == "tool":
            name = _string(message, "tool_name", where + ".")
            raw_id = message.get("tool_call_id")
            call_id = ids.answered(name, raw_id if isinstance(raw_id, str) else None)
            messages.append(neutral_message(role="tool", text=text, tool_call_id=call_id))
        elif role == "assistant":
            calls = _tool_calls(message.get("tool_calls"), where, ids)
            messages.append(neutral_message(role="assistant", text=text, tool_calls=calls))
        else:
            messages.append(neutral_message(role=role, text=text))
    return tuple(messages)


def _tools(raw: Any) -> tuple[tuple[str, ...], str]:
    if raw is None or raw == []:
        return (), ""
    if not isinstance(raw, list):
        raise _bad("tools must be an array")
    names = []
    for index, tool in enumerate(raw):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise _bad(f"tools[{index}].function.name is required")
        names.append(name)
    return tuple(names), orjson.dumps(raw).decode()


def _format(raw: Any) -> ResponseFormat:
    if raw is None or raw == "":
        return "text"
    if raw == "json":
        return "json_object"
    if isinstance(raw, dict):
        return "json_schema"
    raise _bad(f'invalid format: {orjson.dumps(raw).decode()}; expected "json" or a JSON schema object')


def _common(body: dict[str, Any]) -> tuple[str, bool, dict[str, Any] | None]:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model is required")
    stream = body.get("stream", True)
    if not isinstance(stream, bool):
        raise _bad("stream must be a boolean")
    think = body.get("think")
    if think is not None and not isinstance(think, bool) and not one_of(think, _THINK_LEVELS):
        raise _bad(f"invalid think value: {orjson.dumps(think).decode()} (true, false, low, medium or high)")
    return model, stream, reasoning_settings({"think": think})


def chat_request(body: dict[str, Any]) -> NeutralRequest:
    model, stream, thinking = _common(body)
    tool_names, tools_text = _tools(body.get("tools"))
    return build(
        NeutralRequest,
        provider="ollama",
        operation=CHAT,
        model=model,
        messages=_messages(body.get("messages")),
        tool_names=tool_names,
        tool_choice=_AUTO,
        response_format=_format(body.get("format")),
        stream=stream,
        stream_include_usage=stream,
        preamble=tools_text,
        system="",
        cache_mode="none",
        cache_breakpoints=(),
        reasoning_settings=thinking,
    )


def generate_request(body: dict[str, Any]) -> NeutralRequest:
    model, stream, thinking = _common(body)
    prompt = _string(body, "prompt")
    system = _string(body, "system")
    messages = (neutral_message(role="user", text=prompt),) if prompt else ()
    return build(
        NeutralRequest,
        provider="ollama",
        operation=GENERATE,
        model=model,
        messages=messages,
        tool_names=(),
        tool_choice=_AUTO,
        response_format=_format(body.get("format")),
        stream=stream,
        stream_include_usage=stream,
        preamble=system,
        system=system,
        cache_mode="none",
        cache_breakpoints=(),
        reasoning_settings=thinking,
    )


def parse_chat(call: ProviderCall) -> NeutralRequest:
    return chat_request(call.request.json_object())


def parse_generate(call: ProviderCall) -> NeutralRequest:
    return generate_request(call.request.json_object())
