"""Configuration pieces the dashboard's browser tests share (tests/dashboard/): a weather tool and an
approval conversation graph."""

from __future__ import annotations

WEATHER_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {}}}},
}
APPROVAL_GRAPH = {
    "id": "approval",
    "start_at": "ask",
    "steps": [
        {
            "id": "ask",
            "when": {"latest_user_equals": "Start"},
            "response": {"text": "Approve or cancel?"},
            "then": ["approve", "cancel"],
        },
        {
            "id": "approve",
            "when": {"latest_user_equals": "Approve"},
            "response": {"text": "Approved"},
            "complete": True,
        },
        {
            "id": "cancel",
            "when": {"latest_user_equals": "Cancel"},
            "response": {"text": "Cancelled"},
            "complete": True,
        },
    ],
}
