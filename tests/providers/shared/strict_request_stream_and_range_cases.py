"""Rows of the strict request table that strict_request_cases.py appends to its own: the same rules on
streamed requests, and the published numeric ranges in each provider's words."""

from __future__ import annotations

from google.genai import types

from tests.providers.shared.strict_requests_support import (
    HI,
    THINKING,
    Case,
    fn_response,
    gemini_user,
    send_azure_chat,
    send_chat,
    send_chat_stream,
    send_cohere,
    send_converse,
    send_gemini,
    send_gemini_config,
    send_messages,
    send_messages_stream,
    send_responses,
    text_content,
    tool_result,
    tool_use,
)

__all__ = ["RANGE_CASES", "STREAMED_CASES"]


# The same rules on streamed requests: the 400 comes before any stream starts.
STREAMED_CASES = [
    Case(
        "tool_result_without_call",
        send_chat_stream(messages=[*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}]),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "thinking_block_not_first",
        send_messages_stream(
            thinking=THINKING,
            messages=[
                *HI,
                {"role": "assistant", "content": [tool_use("toolu_a")]},
                {"role": "user", "content": [tool_result("toolu_a")]},
            ],
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "function_response_without_call",
        send_gemini(
            [gemini_user("Weather?"), types.Content(role="user", parts=[fn_response("get_weather")])],
            stream=True,
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
]
# Published numeric ranges (``parameter_out_of_range``): OpenAI's code names the side and the type.
RANGE_CASES = [
    Case(
        "parameter_out_of_range",
        send_chat(temperature=3),
        "openai",
        "invalid_request_error",
        "temperature",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        send_chat(top_p=1.5),
        "openai",
        "invalid_request_error",
        "top_p",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        send_chat(presence_penalty=-2.5),
        "openai",
        "invalid_request_error",
        "presence_penalty",
        "decimal_below_min_value",
    ),
    Case(
        "parameter_out_of_range",
        send_chat(frequency_penalty=3),
        "openai",
        "invalid_request_error",
        "frequency_penalty",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        send_chat(logprobs=True, top_logprobs=21),
        "openai",
        "invalid_request_error",
        "top_logprobs",
        "integer_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        send_azure_chat(messages=HI, temperature=-0.5),
        "openai",
        "invalid_request_error",
        "temperature",
        "decimal_below_min_value",
    ),
    Case(
        "parameter_out_of_range",
        send_responses(input="Hi", temperature=2.5),
        "openai",
        "invalid_request_error",
        "temperature",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        send_messages(extra_body={"temperature": 1.5}),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "parameter_out_of_range",
        send_messages(extra_body={"top_k": -1}),
        "anthropic",
        "invalid_request_error",
    ),
    Case("parameter_out_of_range", send_gemini_config(temperature=3), "gemini", "INVALID_ARGUMENT"),
    Case("parameter_out_of_range", send_gemini_config(top_p=1.5), "gemini", "INVALID_ARGUMENT"),
    Case("parameter_out_of_range", send_cohere(HI, p=1.5), "cohere", "BadRequestError"),
    Case(
        "parameter_out_of_range",
        send_converse(
            messages=[{"role": "user", "content": text_content("Hi")}], inferenceConfig={"temperature": 1.5}
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "native_tool_model",
        send_responses(model="gpt-4.1-nano", input="Hi", tools=[{"type": "web_search"}]),
        "openai",
        "invalid_request_error",
        "tools[0]",
        "unsupported_value",
    ),
]
