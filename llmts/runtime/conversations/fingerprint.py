"""The replay fingerprint of a normalized request.

Excluded: the request id and previous_response_id (never in the neutral request's base fields), the
streaming flags, the operation (a Gemini stream is another operation) and prompt-cache hints (cache mode
and breakpoints change no answer). Restored history, tools, tool choice, response format and preamble
(system blocks, tool declarations) decide identity.
"""

from __future__ import annotations

import hashlib

import orjson

from llmts.schema.neutral import NeutralRequest

__all__ = ["fingerprint"]


def fingerprint(request: NeutralRequest) -> bytes:
    messages = [
        (
            message.role,
            message.text,
            [(call.id, call.name, call.arguments) for call in message.tool_calls],
            message.tool_call_id,
        )
        for message in request.messages
    ]
    choice = request.tool_choice
    payload = (
        request.provider,
        request.model,
        messages,
        request.tool_names,
        (choice.mode, choice.name),
        request.response_format,
        request.preamble,
    )
    return hashlib.sha256(orjson.dumps(payload)).digest()
