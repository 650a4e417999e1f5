"""The agent card (``/a2a/{name}/.well-known/agent-card.json``, docs/a2a.md "The agent card").

One card serves both SDK majors: the 1.0 fields (``supportedInterfaces``, one JSON-RPC interface per
protocol version, 1.0 first) beside the 0.3 fields (``url``, ``preferredTransport``, ``protocolVersion``),
the merged shape ``a2a-sdk`` 1.x's own server emits. A 1.x client picks the 1.0 interface; a 0.3 client
reads ``url`` (and requires ``name``, ``description``, ``url``, ``version``, ``capabilities``, the
default modes and ``skills``). Every interface points at ``url``, the agent's absolute JSON-RPC endpoint,
which the server builds from the request's Host and mount: a card fetched through ``/sessions/{id}``
sends the client back through it.
"""

from __future__ import annotations

from typing import Any

from llmts.schema.a2a import A2aAgent

__all__ = ["agent_card", "extended_card_error"]

_INPUT_MODES = ["text/plain", "application/json"]
_OUTPUT_MODES = ["text/plain", "application/json"]


def agent_card(agent: A2aAgent, url: str) -> dict[str, Any]:
    skills = [
        {
            "id": skill.id,
            "name": skill.name,
            "description": skill.description,
            "tags": list(skill.tags),
            **({"examples": list(skill.examples)} if skill.examples else {}),
        }
        for skill in agent.skills
    ]
    return {
        "name": agent.name,
        "description": agent.description,
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "version": agent.version,
        "capabilities": {"streaming": agent.streaming, "pushNotifications": agent.push_notifications},
        "defaultInputModes": list(_INPUT_MODES),
        "defaultOutputModes": list(_OUTPUT_MODES),
        "skills": skills,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "url": url,
    }


def extended_card_error() -> tuple[int, str]:
    """A scripted agent has no extended card (its card does not announce one; the SDKs ask only then)."""
    return -32007, "Extended agent card is not configured"
