"""Shared pieces of the official ``openai`` SDK tests of the Responses API: the model they ask for and the
function tools they send (``get_weather`` strict, ``get_time`` without ``strict``)."""

from __future__ import annotations

__all__ = ["MODEL", "TIME", "WEATHER"]

MODEL = "gpt-4.1-mini"
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
TIME = {"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {}}}
