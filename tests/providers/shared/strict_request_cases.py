"""The strict request contract as a table: rule -> request, sent by the official SDK -> the provider's
error type (and param and code where it has them); one row per rule and provider, run by
test_strict_requests_rejections.py. Rules: docs/realistic-answers.md, "Strict request contract"."""

from __future__ import annotations

from google.genai import types

from tests.providers.shared.strict_request_stream_and_range_cases import RANGE_CASES, STREAMED_CASES
from tests.providers.shared.strict_requests_support import (
    HI,
    THINKING,
    Case,
    fn_call,
    fn_response,
    gemini_user,
    send_azure_chat,
    send_chat,
    send_cohere,
    send_converse,
    send_gemini,
    send_invoke,
    send_messages,
    send_responses,
    text_content,
    tool_call,
    tool_result,
    tool_use,
)

__all__ = ["CASES", "IDS"]


CASES = [
    Case(
        "tool_result_without_call",
        send_chat(messages=[*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}]),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "tool_result_without_call",
        send_chat(
            messages=[
                *HI,
                {"role": "assistant", "content": None, "tool_calls": [tool_call("call_a")]},
                {"role": "tool", "tool_call_id": "call_b", "content": "sunny"},
            ]
        ),
        "openai",
        "invalid_request_error",
        "messages.[2].tool_call_id",
    ),
    Case(
        "tool_calls_unanswered",
        send_chat(
            messages=[
                *HI,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [tool_call("call_a"), tool_call("call_b")],
                },
                {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
                {"role": "user", "content": "and?"},
            ]
        ),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "tool_calls_unanswered",
        send_azure_chat(
            messages=[*HI, {"role": "assistant", "content": None, "tool_calls": [tool_call("call_a")]}]
        ),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "reasoning_model_temperature",
        send_chat(model="o3-mini", temperature=0.2),
        "openai",
        "invalid_request_error",
        "temperature",
        "unsupported_value",
    ),
    Case(
        "reasoning_model_top_p",
        send_chat(model="gpt-5-mini", top_p=0.5),
        "openai",
        "invalid_request_error",
        "top_p",
        "unsupported_value",
    ),
    Case(
        "function_call_output_without_call",
        send_responses(input=[{"type": "function_call_output", "call_id": "call_x", "output": "sunny"}]),
        "openai",
        "invalid_request_error",
        "input",
    ),
    Case(
        "function_call_unanswered",
        send_responses(
            input=[
                {"role": "user", "content": "Weather?"},
                {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{}"},
                {"role": "user", "content": "and?"},
            ]
        ),
        "openai",
        "invalid_request_error",
        "input",
    ),
    Case(
        "reasoning_model_temperature",
        send_responses(model="o3-mini", input="Hi", temperature=0.3),
        "openai",
        "invalid_request_error",
        "temperature",
        "unsupported_value",
    ),
    Case(
        "first_message_not_user",
        send_messages(messages=[{"role": "assistant", "content": "Hello"}, *HI]),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "tool_result_without_tool_use",
        send_messages(messages=[*HI, {"role": "user", "content": [tool_result("toolu_x")]}]),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "tool_use_without_tool_result",
        send_messages(
            messages=[
                *HI,
                {"role": "assistant", "content": [tool_use("toolu_a")]},
                {"role": "user", "content": "and?"},
            ]
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thinking_budget",
        send_messages(max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 512}),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thinking_budget",
        send_messages(max_tokens=1024, thinking=THINKING),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thinking_block_not_first",
        send_messages(
            max_tokens=4096,
            thinking=THINKING,
            messages=[
                *HI,
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Let me look."}, tool_use("toolu_a")],
                },
                {"role": "user", "content": [tool_result("toolu_a")]},
            ],
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "function_response_without_call",
        send_gemini(
            [gemini_user("Weather?"), types.Content(role="user", parts=[fn_response("get_weather")])]
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
    Case(
        "function_calls_unanswered",
        send_gemini(
            [
                gemini_user("Weather?"),
                types.Content(role="model", parts=[fn_call("get_weather"), fn_call("get_weather")]),
                types.Content(role="user", parts=[fn_response("get_weather")]),
            ]
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
]
# Reasoning blocks passed back must be the ones llmts issued (a forged signature, a changed text).
_FORGED = {"type": "thinking", "thinking": "I need the weather first.", "signature": "forged"}
CASES += [
    Case(
        "thinking_block_modified",
        send_messages(
            max_tokens=4096,
            thinking=THINKING,
            messages=[
                *HI,
                {"role": "assistant", "content": [_FORGED, tool_use("toolu_a")]},
                {"role": "user", "content": [tool_result("toolu_a")]},
            ],
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thought_signature_corrupted",
        send_gemini(
            [
                gemini_user("Weather?"),
                types.Content(role="model", parts=[types.Part(text="Sunny.", thought_signature=b"forged")]),
                gemini_user("Thanks"),
            ]
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
]
CASES += [
    Case(
        "encrypted_content_unverified",
        send_responses(
            input=[
                {"role": "user", "content": "Hi"},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAforged=="},
                {"role": "user", "content": "Again"},
            ]
        ),
        "openai",
        "invalid_request_error",
        code="invalid_encrypted_content",
    ),
]
# Cohere v2 chat: cohere.errors.BadRequestError.
_COHERE_CALL = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
CASES += [
    Case(
        "tool_result_without_call",
        send_cohere([*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}]),
        "cohere",
        "BadRequestError",
    ),
    Case(
        "tool_calls_unanswered",
        send_cohere([*HI, {"role": "assistant", "tool_calls": [_COHERE_CALL], "tool_plan": "Look."}, *HI]),
        "cohere",
        "BadRequestError",
    ),
]
# Bedrock Converse (and Anthropic's rules on InvokeModel): botocore's ValidationException.
_USE = {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather", "input": {"city": "Paris"}}}
_RESULT = {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "sunny"}]}}
_ON = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
_REASONING = {
    "reasoningContent": {"reasoningText": {"text": "I need the weather first.", "signature": "forged"}}
}
CASES += [
    Case(
        "first_message_not_user",
        send_converse(
            messages=[
                {"role": "assistant", "content": text_content("Hello")},
                {"role": "user", "content": text_content("Hi")},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "roles_not_alternating",
        send_converse(
            messages=[
                {"role": "user", "content": text_content("Hi")},
                {"role": "user", "content": text_content("Hi")},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "tool_result_without_tool_use",
        send_converse(
            messages=[
                {"role": "user", "content": text_content("Weather?")},
                {"role": "assistant", "content": text_content("Let me see.")},
                {"role": "user", "content": [_RESULT]},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "tool_use_without_tool_result",
        send_converse(
            messages=[
                {"role": "user", "content": text_content("Weather?")},
                {"role": "assistant", "content": [_USE]},
                {"role": "user", "content": text_content("and?")},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_budget",
        send_converse(
            messages=[{"role": "user", "content": text_content("Hi")}],
            inferenceConfig={"maxTokens": 1024},
            additionalModelRequestFields=_ON,
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_block_not_first",
        send_converse(
            stream=True,
            messages=[
                {"role": "user", "content": text_content("Weather?")},
                {"role": "assistant", "content": [_USE]},
                {"role": "user", "content": [_RESULT]},
            ],
            additionalModelRequestFields=_ON,
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_block_modified",
        send_converse(
            messages=[
                {"role": "user", "content": text_content("Weather?")},
                {"role": "assistant", "content": [_REASONING, _USE]},
                {"role": "user", "content": [_RESULT]},
            ],
            additionalModelRequestFields=_ON,
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "tool_result_without_tool_use",
        send_invoke(messages=[*HI, {"role": "user", "content": [tool_result("toolu_x")]}]),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_block_modified",
        send_invoke(
            thinking=THINKING,
            messages=[
                *HI,
                {"role": "assistant", "content": [_FORGED, tool_use("toolu_a")]},
                {"role": "user", "content": [tool_result("toolu_a")]},
            ],
        ),
        "bedrock",
        "ValidationException",
    ),
]


# The same rules on streamed requests, then the published numeric ranges
# (strict_request_stream_and_range_cases.py).
CASES += STREAMED_CASES + RANGE_CASES
IDS = [f"{case.rule}-{index}" for index, case in enumerate(CASES)]
