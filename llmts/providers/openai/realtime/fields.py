"""The checks of a Realtime session's fields (``session.update``) and of the per-response overrides
``response.create`` shares with them (modalities, tools, tool choice, output audio, token limit).

Each check takes the raw value and its ``param`` path and returns the value as the session keeps it, or
raises ``EventError`` in the service's words.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.openai.realtime.audio import FORMAT_TYPES
from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.providers.openai.realtime.wire import (
    EventError,
    check_keys,
    invalid_type,
    one_of,
    optional,
    optional_str,
    require,
    require_str,
    too_long,
)
from llmts.schema.neutral import ToolChoice, build

__all__ = [
    "FIELD_CHECKS",
    "PADDING_MS",
    "SEMANTIC_SILENCE_MS",
    "SERVER_VAD",
    "SILENCE_MS",
    "audio_settings",
    "neutral_tool_choice",
    "parse_max_output_tokens",
    "parse_modalities",
    "parse_output_audio",
    "parse_tool_choice",
    "parse_tools",
    "tool_names",
]

# semantic_vad has no silence duration: llmts ends its segments after this much silence.
SEMANTIC_SILENCE_MS = 500
SILENCE_MS = 200
PADDING_MS = 300
SERVER_VAD = {
    "type": "server_vad",
    "threshold": 0.5,
    "prefix_padding_ms": PADDING_MS,
    "silence_duration_ms": SILENCE_MS,
    "idle_timeout_ms": None,
    "create_response": True,
    "interrupt_response": True,
}
_SEMANTIC_VAD = {
    "type": "semantic_vad",
    "eagerness": "auto",
    "create_response": True,
    "interrupt_response": True,
}
_TRANSCRIPTION_KEYS = ("delay", "keywords", "language", "languages", "model", "prompt")
_CHOICE_MODES = ("none", "auto", "required")
_MODALITIES = ("text", "audio")
_ITEM_CHARS = REALTIME_LIMITS["item_chars"]
_NAME_CHARS = 128


def _instructions(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise invalid_type(param, "a string", value)
    if len(value) > _ITEM_CHARS:
        raise too_long(param, _ITEM_CHARS, len(value))
    return value


def _model(value: Any, param: str) -> str:
    if not isinstance(value, str) or not value:
        raise invalid_type(param, "a string", value)
    if len(value) > _NAME_CHARS:
        raise too_long(param, _NAME_CHARS, len(value))
    return value


def parse_modalities(value: Any, param: str) -> list[str]:
    """``["text"]`` or ``["audio"]``: the API refuses both at once."""
    if not isinstance(value, list):
        raise invalid_type(param, "an array", value)
    if len(value) != 1:
        raise EventError(
            f"Invalid '{param}': expected exactly one of 'text' or 'audio' (both at once are not supported).",
            "invalid_value",
            param,
        )
    return [one_of(value[0], _MODALITIES, f"{param}[0]")]


def parse_max_output_tokens(value: Any, param: str) -> int | str:
    if value == "inf":
        return "inf"
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_type(param, "an integer or 'inf'", value)
    if not 1 <= value <= 4096:
        raise EventError(
            f"Invalid '{param}': expected an integer between 1 and 4096, or 'inf', but got {value}.",
            "invalid_value",
            param,
        )
    return value


def parse_tools(value: Any, param: str) -> list[dict[str, Any]]:
    """Function tools (``name`` required) and MCP tools (``server_label`` required; accepted and echoed,
    never called)."""
    if not isinstance(value, list):
        raise invalid_type(param, "an array", value)
    if len(value) > REALTIME_LIMITS["tools"]:
        raise EventError(
            f"Invalid '{param}': array too long. Expected an array with maximum length "
            f"{REALTIME_LIMITS['tools']}, but got an array with length {len(value)} instead.",
            "array_above_max_length",
            param,
        )
    tools = []
    for index, tool in enumerate(value):
        where = f"{param}[{index}]"
        if not isinstance(tool, dict):
            raise invalid_type(where, "an object", tool)
        kind = tool.get("type", "function")
        one_of(kind, ("function", "mcp"), f"{where}.type")
        if kind == "function":
            check_keys(tool, ("type", "name", "description", "parameters"), where)
            require_str(tool, "name", where, _NAME_CHARS)
            optional_str(tool, "description", where, _ITEM_CHARS)
            optional(tool, "parameters", where, dict, "an object")
            tools.append({"type": "function", **{k: v for k, v in tool.items() if k != "type"}})
        else:
            require_str(tool, "server_label", where, _NAME_CHARS)
            tools.append(dict(tool))
    return tools


def tool_names(tools: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(tool["name"]) for tool in tools if tool.get("type") == "function")


def parse_tool_choice(value: Any, param: str) -> Any:
    if isinstance(value, str):
        return one_of(value, _CHOICE_MODES, param)
    if not isinstance(value, dict):
        raise invalid_type(param, "a string or an object", value)
    kind = one_of(require(value, "type", param), ("function", "mcp"), f"{param}.type")
    if kind == "function":
        check_keys(value, ("type", "name"), param)
        require_str(value, "name", param, _NAME_CHARS)
    else:
        check_keys(value, ("type", "server_label", "name"), param)
        require_str(value, "server_label", param, _NAME_CHARS)
        optional_str(value, "name", param, _NAME_CHARS)
    return dict(value)


def neutral_tool_choice(value: Any) -> ToolChoice:
    if isinstance(value, dict):
        if value.get("type") == "function":
            return build(ToolChoice, mode="function", name=str(value["name"]))
        return build(ToolChoice, mode="auto", name=None)
    mode = value if value in _CHOICE_MODES else "auto"
    return build(ToolChoice, mode=mode, name=None)


def _format(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid_type(param, "an object", value)
    check_keys(value, ("type", "rate"), param)
    kind = one_of(value.get("type", "audio/pcm"), FORMAT_TYPES, f"{param}.type")
    if kind == "audio/pcm":
        rate = value.get("rate", 24000)
        if rate != 24000 or isinstance(rate, bool):
            raise EventError(
                f"Invalid value: '{rate}'. Supported values are: '24000'.", "invalid_value", f"{param}.rate"
            )
        return {"type": kind, "rate": 24000}
    if "rate" in value:
        raise EventError(f"Unknown parameter: '{param}.rate'.", "unknown_parameter", f"{param}.rate")
    return {"type": kind}


def _turn_detection(value: Any, param: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid_type(param, "an object or null", value)
    kind = one_of(require(value, "type", param), ("server_vad", "semantic_vad"), f"{param}.type")
    defaults = SERVER_VAD if kind == "server_vad" else _SEMANTIC_VAD
    check_keys(value, tuple(defaults), param)
    for key in ("create_response", "interrupt_response"):
        optional(value, key, param, bool, "a boolean")
    if kind == "server_vad":
        for key in ("prefix_padding_ms", "silence_duration_ms", "idle_timeout_ms"):
            number = optional(value, key, param, int, "an integer")
            if number is not None and not 0 <= number <= 60_000:
                raise EventError(
                    f"Invalid '{param}.{key}': expected an integer between 0 and 60000.",
                    "invalid_value",
                    f"{param}.{key}",
                )
        threshold = optional(value, "threshold", param, (int, float), "a number")
        if threshold is not None and not 0 <= threshold <= 1:
            raise EventError(
                f"Invalid '{param}.threshold': expected a number between 0 and 1.",
                "invalid_value",
                f"{param}.threshold",
            )
    elif value.get("eagerness") is not None:
        one_of(value["eagerness"], ("low", "medium", "high", "auto"), f"{param}.eagerness")
    return {**defaults, **{k: v for k, v in value.items() if v is not None}}


def _transcription(value: Any, param: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid_type(param, "an object or null", value)
    check_keys(value, _TRANSCRIPTION_KEYS, param)
    for key in ("model", "language", "prompt", "delay"):
        optional_str(value, key, param, _ITEM_CHARS)
    return dict(value)


def _object_or_null(value: Any, param: str) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise invalid_type(param, "an object or null", value)
    return value


def _audio_input(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid_type(param, "an object", value)
    check_keys(value, ("format", "noise_reduction", "transcription", "turn_detection"), param)
    settings: dict[str, Any] = {}
    if "format" in value:
        settings["format"] = _format(value["format"], f"{param}.format")
    if "noise_reduction" in value:
        settings["noise_reduction"] = _object_or_null(value["noise_reduction"], f"{param}.noise_reduction")
    if "transcription" in value:
        settings["transcription"] = _transcription(value["transcription"], f"{param}.transcription")
    if "turn_detection" in value:
        settings["turn_detection"] = _turn_detection(value["turn_detection"], f"{param}.turn_detection")
    return settings


def _voice(value: Any, param: str) -> Any:
    if isinstance(value, dict):
        check_keys(value, ("id",), param)
        require_str(value, "id", param, _NAME_CHARS)
        return dict(value)
    if not isinstance(value, str) or not value:
        raise invalid_type(param, "a string or an object", value)
    if len(value) > _NAME_CHARS:
        raise too_long(param, _NAME_CHARS, len(value))
    return value


def parse_output_audio(value: Any, param: str, *, speed: bool) -> dict[str, Any]:
    """An ``audio.output`` object (a response's has no ``speed``)."""
    if not isinstance(value, dict):
        raise invalid_type(param, "an object", value)
    check_keys(value, ("format", "voice", "speed") if speed else ("format", "voice"), param)
    settings: dict[str, Any] = {}
    if value.get("format") is not None:
        settings["format"] = _format(value["format"], f"{param}.format")
    if value.get("voice") is not None:
        settings["voice"] = _voice(value["voice"], f"{param}.voice")
    pace = optional(value, "speed", param, (int, float), "a number")
    if pace is not None:
        if not 0.25 <= pace <= 1.5:
            raise EventError(
                f"Invalid '{param}.speed': expected a number between 0.25 and 1.5.",
                "invalid_value",
                f"{param}.speed",
            )
        settings["speed"] = pace
    return settings


def audio_settings(value: Any) -> dict[str, dict[str, Any]]:
    """A ``session.audio`` update: per side (``input``, ``output``) the keys it sets."""
    if not isinstance(value, dict):
        raise invalid_type("session.audio", "an object", value)
    check_keys(value, ("input", "output"), "session.audio")
    sides: dict[str, dict[str, Any]] = {}
    if value.get("input") is not None:
        sides["input"] = _audio_input(value["input"], "session.audio.input")
    if value.get("output") is not None:
        sides["output"] = parse_output_audio(value["output"], "session.audio.output", speed=True)
    return sides


def _include(value: Any, param: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise invalid_type(param, "an array", value)
    for index, entry in enumerate(value):
        one_of(entry, ("item.input_audio_transcription.logprobs",), f"{param}[{index}]")
    return list(value)


def _boolean(value: Any, param: str) -> bool:
    if not isinstance(value, bool):
        raise invalid_type(param, "a boolean", value)
    return value


def _prompt(value: Any, param: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid_type(param, "an object or null", value)
    require_str(value, "id", param, _NAME_CHARS)
    return dict(value)


def _tracing(value: Any, param: str) -> Any:
    if value is None or value == "auto" or isinstance(value, dict):
        return value
    raise EventError(f"Invalid '{param}': expected 'auto', an object or null.", "invalid_value", param)


def _truncation(value: Any, param: str) -> Any:
    if isinstance(value, str):
        return one_of(value, ("auto", "disabled"), param)
    if not isinstance(value, dict):
        raise invalid_type(param, "a string or an object", value)
    one_of(require(value, "type", param), ("retention_ratio",), f"{param}.type")
    ratio = require(value, "retention_ratio", param)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
        raise invalid_type(f"{param}.retention_ratio", "a number", ratio)
    return dict(value)


FIELD_CHECKS = {
    "include": _include,
    "instructions": _instructions,
    "max_output_tokens": parse_max_output_tokens,
    "model": _model,
    "output_modalities": parse_modalities,
    "parallel_tool_calls": _boolean,
    "prompt": _prompt,
    "reasoning": _object_or_null,
    "tool_choice": parse_tool_choice,
    "tools": parse_tools,
    "tracing": _tracing,
    "truncation": _truncation,
}
