"""One Gemini Live client message (a JSON text or binary frame) -> a typed value, or ``LiveInvalid``.

Keys are read in camelCase or snake_case at every level, as protobuf JSON accepts them (google-genai sends
``client_content`` with ``turnComplete`` inside, and a ``realtimeInputConfig`` dict keeps its snake_case
keys). The top level is strict, as the service's is: exactly one of ``setup``, ``clientContent``,
``realtimeInput``, ``toolResponse``, ``contextUpdate`` and no other key. Inside, unknown fields are ignored
(SDKs add fields faster than a test server can follow) and known fields must have the right type. A
refusal is a close 1007 whose reason is worded like the service's (``Invalid JSON payload received...``,
``Invalid value at 'client_content.turns[0]'...``, ``Request contains an invalid argument...``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from llmts.providers.gemini.live.client_types import (
    ActivitySignal,
    AudioChunk,
    FunctionCall,
    FunctionResult,
    LiveClientContent,
    LiveContent,
    LiveContextUpdate,
    LiveInvalid,
    LiveMessage,
    LiveRealtimeInput,
    LiveSetup,
    LiveToolResponse,
    MediaChunk,
    RealtimeItem,
    TextInput,
    invalid_argument,
)
from llmts.providers.gemini.live.fields import (
    bool_at,
    bytes_at,
    int_at,
    invalid_value,
    list_at,
    object_at,
    shown,
    snake,
    string_at,
    struct_json,
    value_at,
)
from llmts.schema.neutral import reasoning_settings
from llmts.schema.wire_values import MAX_JSON_NESTING, nests_deeper

__all__ = ["parse_message"]

_INPUT_RATE = 16_000  # Live's input audio: PCM16 at 16 kHz unless the mime type says ``rate=``
_RATE = re.compile(r"rate=(\d{4,6})")
_MAX_MODEL_CHARS = 256
_MAX_SILENCE_MS = 60_000
_MAX_NAME_CHARS = 24  # of an unknown top-level name, in a close reason

# --- setup --------------------------------------------------------------------------------------------

_MODALITIES = frozenset({"TEXT", "AUDIO", "MODALITY_UNSPECIFIED"})
_ACTIVITY_HANDLING = frozenset(
    {"ACTIVITY_HANDLING_UNSPECIFIED", "START_OF_ACTIVITY_INTERRUPTS", "NO_INTERRUPTION"}
)


def _text_of(raw: Any, path: str) -> str:
    """A system instruction: a ``Content`` (its text parts joined) or, leniently, a plain string."""
    if isinstance(raw, str):
        return raw
    content = object_at(raw, path, "Content")
    texts = []
    for index, part in enumerate(list_at(value_at(content, "parts"), f"{path}.parts", "Part")):
        where = f"{path}.parts[{index}]"
        text = string_at(value_at(object_at(part, where, "Part"), "text"), f"{where}.text")
        if text:
            texts.append(text)
    return "".join(texts)


def _tools(raw: Any, path: str) -> tuple[str, tuple[str, ...]]:
    """(the tools as JSON text, the declared function names); googleSearch, codeExecution... declare none."""
    tools = list_at(raw, path, "Tool")
    names: list[str] = []
    for index, tool in enumerate(tools):
        where = f"{path}[{index}]"
        declarations = value_at(object_at(tool, where, "Tool"), "functionDeclarations")
        where += ".function_declarations"
        for position, declaration in enumerate(list_at(declarations, where, "FunctionDeclaration")):
            at = f"{where}[{position}]"
            declared = object_at(declaration, at, "FunctionDeclaration")
            name = string_at(value_at(declared, "name"), f"{at}.name")
            if not name:
                raise invalid_argument(f"{at}.name is required.")
            names.append(name)
    return (orjson.dumps(tools).decode() if tools else ""), tuple(names)


def _modalities(raw: Any) -> frozenset[str]:
    path = "setup.generation_config.response_modalities"
    found = set()
    for index, value in enumerate(list_at(raw, path, "Modality")):
        name = value.upper() if isinstance(value, str) else None  # an object or array is no enum value
        if name not in _MODALITIES:
            raise invalid_value(f"{path}[{index}]", "Modality", value)
        found.add(name)
    return frozenset(found)


def _setup(raw: Any) -> LiveSetup:
    setup = object_at(raw, "setup", "BidiGenerateContentSetup")
    model = string_at(value_at(setup, "model"), "setup.model")
    if not model:
        raise invalid_argument("setup.model is required (models/<model>).")
    name = model.removeprefix("models/")
    if not name or len(name) > _MAX_MODEL_CHARS:
        raise invalid_value("setup.model", "TYPE_STRING", model)
    config = object_at(value_at(setup, "generationConfig"), "setup.generation_config", "GenerationConfig")
    modalities = _modalities(value_at(config, "responseModalities"))
    tools_json, tool_names = _tools(value_at(setup, "tools"), "setup.tools")
    realtime = object_at(
        value_at(setup, "realtimeInputConfig"), "setup.realtime_input_config", "RealtimeInputConfig"
    )
    where = "setup.realtime_input_config.automatic_activity_detection"
    detection = value_at(realtime, "automaticActivityDetection")
    detection = object_at(detection, where, "AutomaticActivityDetection")
    handling = value_at(realtime, "activityHandling")
    if handling is not None and (not isinstance(handling, str) or handling not in _ACTIVITY_HANDLING):
        raise invalid_value("setup.realtime_input_config.activity_handling", "ActivityHandling", handling)
    flags = {}
    for field in ("inputAudioTranscription", "outputAudioTranscription", "sessionResumption"):
        value = value_at(setup, field)
        object_at(value, f"setup.{snake(field)}", field[0].upper() + field[1:])
        flags[field] = value is not None  # an empty object turns it on
    compression = value_at(setup, "contextWindowCompression")
    object_at(compression, "setup.context_window_compression", "ContextWindowCompressionConfig")
    return LiveSetup(
        model=name,
        audio="AUDIO" in modalities or not modalities - {"MODALITY_UNSPECIFIED"},
        system=_text_of(value_at(setup, "systemInstruction"), "setup.system_instruction"),
        tools_json=tools_json,
        tool_names=tool_names,
        input_transcription=flags["inputAudioTranscription"],
        output_transcription=flags["outputAudioTranscription"],
        automatic_activity=not bool_at(value_at(detection, "disabled"), f"{where}.disabled"),
        interrupts=handling != "NO_INTERRUPTION",
        silence_ms=int_at(
            value_at(detection, "silenceDurationMs"), f"{where}.silence_duration_ms", _MAX_SILENCE_MS
        ),
        sliding_window=compression is not None,
        resumption=flags["sessionResumption"],
        reasoning=reasoning_settings(value_at(config, "thinkingConfig")),
    )


# --- conversation content -----------------------------------------------------------------------------


def _part_call(raw: Any, path: str, kind: str) -> tuple[str | None, str, Any]:
    call = object_at(raw, path, kind)
    call_id = string_at(value_at(call, "id"), f"{path}.id") or None
    name = string_at(value_at(call, "name"), f"{path}.name")
    if not name:
        raise invalid_argument(f"{path}.name is required.")
    return call_id, name, call


def _content(raw: Any, path: str) -> LiveContent:
    content = object_at(raw, path, "Content")
    role = string_at(value_at(content, "role"), f"{path}.role") or "user"
    if role not in ("user", "model"):
        raise invalid_argument(f"Please use a valid role: user, model. ({path}.role)")
    texts: list[str] = []
    calls: list[FunctionCall] = []
    results: list[FunctionResult] = []
    for index, item in enumerate(list_at(value_at(content, "parts"), f"{path}.parts", "Part")):
        where = f"{path}.parts[{index}]"
        part = object_at(item, where, "Part")
        text = string_at(value_at(part, "text"), f"{where}.text")
        if text is not None:
            if not bool_at(value_at(part, "thought"), f"{where}.thought"):
                texts.append(text)
            continue
        raw_call = value_at(part, "functionCall")
        if raw_call is not None:
            if role != "model":
                raise invalid_argument(f"{where}.function_call is only allowed in a model turn.")
            at = f"{where}.function_call"
            call_id, name, call = _part_call(raw_call, at, "FunctionCall")
            calls.append(FunctionCall(call_id, name, struct_json(value_at(call, "args"), f"{at}.args")))
            continue
        raw_result = value_at(part, "functionResponse")
        if raw_result is not None:
            if role == "model":
                raise invalid_argument(f"{where}.function_response is not allowed in a model turn.")
            at = f"{where}.function_response"
            call_id, name, result = _part_call(raw_result, at, "FunctionResponse")
            results.append(
                FunctionResult(call_id, name, struct_json(value_at(result, "response"), f"{at}.response"))
            )
        # inlineData, fileData, executableCode...: accepted, not simulated
    return LiveContent(role, "".join(texts), tuple(calls), tuple(results))


def _client_content(raw: Any) -> LiveClientContent:
    message = object_at(raw, "client_content", "BidiGenerateContentClientContent")
    turns = list_at(value_at(message, "turns"), "client_content.turns", "Content")
    return LiveClientContent(
        turns=tuple(_content(turn, f"client_content.turns[{index}]") for index, turn in enumerate(turns)),
        turn_complete=bool_at(value_at(message, "turnComplete"), "client_content.turn_complete"),
    )


def _tool_response(raw: Any) -> LiveToolResponse:
    message = object_at(raw, "tool_response", "BidiGenerateContentToolResponse")
    path = "tool_response.function_responses"
    results = []
    for index, item in enumerate(list_at(value_at(message, "functionResponses"), path, "FunctionResponse")):
        where = f"{path}[{index}]"
        result = object_at(item, where, "FunctionResponse")
        call_id = string_at(value_at(result, "id"), f"{where}.id") or None
        name = string_at(value_at(result, "name"), f"{where}.name") or None
        if call_id is None and name is None:
            raise invalid_argument(f"{where} needs the id (or the name) of the call it answers.")
        results.append(
            FunctionResult(call_id, name, struct_json(value_at(result, "response"), f"{where}.response"))
        )
    return LiveToolResponse(tuple(results))


def _context_update(raw: Any) -> LiveContextUpdate:
    message = object_at(raw, "context_update", "BidiGenerateContentContextUpdate")
    system = value_at(message, "systemInstruction")
    tools = value_at(message, "tools")
    tools_json = names = None
    if tools is not None:
        # google-genai wraps the list (``{"tools": {"tools": [...]}}``); a bare list is taken too.
        if isinstance(tools, dict):
            tools = value_at(tools, "tools") or []
        tools_json, names = _tools(tools, "context_update.tools.tools")
    return LiveContextUpdate(
        system=None if system is None else _text_of(system, "context_update.system_instruction"),
        tools_json=tools_json,
        tool_names=names,
    )


# --- realtime input -----------------------------------------------------------------------------------


def _blob(raw: Any, path: str, default_mime: str) -> AudioChunk | MediaChunk:
    blob = object_at(raw, path, "Blob")
    mime = string_at(value_at(blob, "mimeType"), f"{path}.mime_type") or default_mime
    data = bytes_at(value_at(blob, "data") or "", f"{path}.data")
    if not mime.startswith("audio/"):
        return MediaChunk(data, mime)
    match = _RATE.search(mime)
    rate = int(match.group(1)) if match else _INPUT_RATE
    return AudioChunk(data, mime, rate if 8_000 <= rate <= 192_000 else _INPUT_RATE)


def _signal(message: dict[str, Any], field: str, items: list[RealtimeItem]) -> None:
    if value_at(message, field) is not None:
        object_at(value_at(message, field), f"realtime_input.{snake(field)}", field[0].upper() + field[1:])
        items.append(ActivitySignal(field))


def _realtime_input(raw: Any) -> LiveRealtimeInput:
    message = object_at(raw, "realtime_input", "BidiGenerateContentRealtimeInput")
    items: list[RealtimeItem] = []
    _signal(message, "activityStart", items)
    chunks = list_at(value_at(message, "mediaChunks"), "realtime_input.media_chunks", "Blob")
    for index, chunk in enumerate(chunks):
        items.append(_blob(chunk, f"realtime_input.media_chunks[{index}]", "audio/pcm"))
    for field, default in (("audio", "audio/pcm;rate=16000"), ("video", "image/jpeg")):
        value = value_at(message, field)
        if value is not None:
            items.append(_blob(value, f"realtime_input.{field}", default))
    text = string_at(value_at(message, "text"), "realtime_input.text")
    if text:
        items.append(TextInput(text))
    _signal(message, "activityEnd", items)
    if bool_at(value_at(message, "audioStreamEnd"), "realtime_input.audio_stream_end"):
        items.append(ActivitySignal("audioStreamEnd"))
    return LiveRealtimeInput(tuple(items))


# --- the message --------------------------------------------------------------------------------------

_PARSERS: dict[str, Callable[[Any], LiveMessage]] = {
    "setup": _setup,
    "clientContent": _client_content,
    "realtimeInput": _realtime_input,
    "toolResponse": _tool_response,
    "contextUpdate": _context_update,
}
_KINDS = {**{name: name for name in _PARSERS}, **{snake(name): name for name in _PARSERS}}


def parse_message(data: bytes) -> LiveMessage:
    """One client message, or ``LiveInvalid`` with the close the service would send."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise LiveInvalid("Invalid JSON payload received. The message is not a JSON object.") from None
    if not isinstance(raw, dict):
        raise LiveInvalid(f"Invalid JSON payload received. Expected an object, got {shown(raw)}")
    if nests_deeper(raw):
        raise LiveInvalid(
            f"Invalid JSON payload received. Nested deeper than {MAX_JSON_NESTING} levels (llmts limit)."
        )
    found: list[tuple[str, Any]] = []
    for key, value in raw.items():
        kind = _KINDS.get(key)
        if kind is None:
            name = key if len(key) <= _MAX_NAME_CHARS else key[:_MAX_NAME_CHARS] + "..."
            raise LiveInvalid(f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.')
        if value is not None:
            found.append((kind, value))
    if not found:
        raise invalid_argument("A message needs one of setup, clientContent, realtimeInput, toolResponse.")
    if len(found) > 1:
        raise LiveInvalid(
            f"Invalid JSON payload received. Oneof field 'message_type' is already set. "
            f"Cannot set '{found[1][0]}'"
        )
    kind, value = found[0]
    return _PARSERS[kind](value)
