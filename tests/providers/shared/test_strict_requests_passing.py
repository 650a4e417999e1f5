"""What the strict request contract lets through: well-formed tool loops for each SDK (every call answered,
thinking passed back first) and Gemini's documented dummy thought signatures. Rules:
docs/realistic-answers.md, "Strict request contract"."""

from __future__ import annotations

import pytest
from google.genai import errors as genai_errors
from google.genai import types

from llmts import SessionClient
from tests.providers.shared.strict_requests_support import (
    HI,
    THINKING,
    fn_call,
    fn_response,
    gemini_user,
    send_chat,
    send_gemini,
    send_messages,
    send_responses,
    strict_config,
    tool_call,
    tool_result,
    tool_use,
)

pytestmark = pytest.mark.sdk


def test_valid_tool_loops_pass_every_rule(llmts_session: SessionClient) -> None:
    """Well-formed loops (every call answered, thinking passed back first) are not touched."""
    # The thinking block passed back below is one the configuration issues (its second scenario scripts it).
    signed = {"reasoning": {"text": "Look it up.", "signature": "sig"}, "text": "never"}
    scenarios = [{"responses": [{"text": "ok"}] * 4}, {"responses": [signed]}]
    llmts_session.configure({**strict_config(None), "scenarios": scenarios})
    chat = send_chat(
        messages=[
            *HI,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("call_a"), tool_call("call_b", "get_time")],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_b", "content": "noon"},
        ],
        model="o3-mini",
        temperature=1,
    )
    responses = send_responses(
        input=[
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
        ]
    )
    thinking = {"type": "thinking", "thinking": "Look it up.", "signature": "sig"}
    messages = send_messages(
        max_tokens=4096,
        thinking=THINKING,
        messages=[
            *HI,
            {"role": "assistant", "content": [thinking, tool_use("toolu_a")]},
            {"role": "user", "content": [tool_result("toolu_a")]},
        ],
    )
    gemini = send_gemini(
        [
            gemini_user("Weather?"),
            types.Content(role="model", parts=[fn_call("get_weather")]),
            types.Content(role="user", parts=[fn_response("get_weather")]),
        ]
    )
    assert [send(llmts_session) for send in (chat, responses, messages, gemini)] == ["ok"] * 4


@pytest.mark.parametrize(
    "dummy", [b"skip_thought_signature_validator", b"context_engineering_is_the_way_to_go"]
)
def test_gemini_documented_dummy_thought_signature_passes(app_session: SessionClient, dummy: bytes) -> None:
    """The thought signatures guide's dummy values pass the real API, so they pass here (pydantic-ai's
    GoogleModel sends the first on every function call it passes back without a signature)."""
    app_session.configure(strict_config(None))
    signed = fn_call("get_weather")
    signed.thought_signature = dummy
    contents = [
        gemini_user("Weather?"),
        types.Content(role="model", parts=[signed]),
        types.Content(role="user", parts=[fn_response("get_weather")]),
    ]
    assert send_gemini(contents)(app_session) == "first"
    forged = fn_call("get_weather")
    forged.thought_signature = dummy + b"!"
    with pytest.raises(genai_errors.ClientError) as error:
        send_gemini([contents[0], types.Content(role="model", parts=[forged]), contents[2]])(app_session)
    assert error.value.code == 400
