"""The request page's assembled text (docs/dashboard.md, "Request"): for each provider's stream, made with
its official SDK against a real gunicorn server, the text (and thinking, and tool-call arguments) the page
assembles from the journal's frames equals what the SDK received; and the pure functions behind the page
(``views/assemble.js``, ``views/entry_summary.js``) called in Chromium on hand-made frames.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llmts import LlmTestServer, SessionClient
from tests.dashboard.browser import configured_expect, login, open_view
from tests.dashboard.screens import capture

CHUNKS = ["Rain ", "in Paris, ", "14 degrees."]
THOUGHT = "The user wants the weather."
TOOL_MODEL = "tool-model"
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}
ARGUMENTS = {"city": "Paris"}
BEDROCK_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def _configure(session: SessionClient) -> None:
    session.configure(
        {
            "azure_deployments": {"weather-deploy": "gpt-4.1-mini"},
            "scenarios": [
                {
                    "model": TOOL_MODEL,
                    "terminal_policy": "repeat_last_response",
                    "responses": [
                        {
                            "text": "Checking.",
                            "tool_calls": [{"id": "call_7", "name": "get_weather", "arguments": ARGUMENTS}],
                        }
                    ],
                },
                {
                    "terminal_policy": "repeat_last_response",
                    "responses": [
                        {"text": "".join(CHUNKS), "chunks": CHUNKS, "reasoning": {"text": THOUGHT}}
                    ],
                },
            ],
        }
    )


class _Received:
    """What one SDK call received: its text, thinking and tool calls (name -> arguments as sent)."""

    def __init__(self, text: str = "", thinking: str = "", calls: dict[str, Any] | None = None) -> None:
        self.text, self.thinking, self.calls = text, thinking, calls or {}


def _openai_chat(session: SessionClient, model: str = "gpt-4.1-mini", azure: bool = False) -> _Received:
    client = session.azure_openai_client(max_retries=0) if azure else session.openai_client(max_retries=0)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}]
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Weather?"}], stream=True, tools=tools
    )
    got = _Received()
    arguments: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        got.text += delta.content or ""
        for call in delta.tool_calls or []:
            if call.function and call.function.name:
                names[call.index] = call.function.name
            arguments.setdefault(call.index, []).append((call.function and call.function.arguments) or "")
    got.calls = {names[i]: json.loads("".join(parts)) for i, parts in arguments.items()}
    return got


def _openai_responses(session: SessionClient) -> _Received:
    got = _Received()
    stream = session.openai_client(max_retries=0).responses.create(
        model="gpt-4.1-mini", input="Weather?", stream=True
    )
    for event in stream:
        if event.type == "response.output_text.delta":
            got.text += event.delta
        elif event.type == "response.reasoning_text.delta":
            got.thinking += event.delta
    return got


def _anthropic(session: SessionClient, model: str = "claude-test-1") -> _Received:
    got = _Received()
    tools = [{"name": "get_weather", "input_schema": PARAMETERS}]
    with session.anthropic_client(max_retries=0).messages.stream(
        model=model, max_tokens=256, messages=[{"role": "user", "content": "Weather?"}], tools=tools
    ) as stream:
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                got.text += event.delta.text
            elif event.type == "content_block_delta" and event.delta.type == "thinking_delta":
                got.thinking += event.delta.thinking
        message = stream.get_final_message()
    got.calls = {block.name: block.input for block in message.content if block.type == "tool_use"}
    return got


def _gemini(session: SessionClient) -> _Received:
    got = _Received()
    client = session.gemini_client()  # held: a client collected mid-stream closes its connection
    for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="Weather?"):
        for part in chunk.candidates[0].content.parts or []:
            if part.thought:
                got.thinking += part.text or ""
            else:
                got.text += part.text or ""
    return got


def _cohere(session: SessionClient) -> _Received:
    got = _Received()
    for event in session.cohere_client().chat_stream(
        model="command-a-03-2025", messages=[{"role": "user", "content": "Weather?"}]
    ):
        if event.type == "content-delta":
            content = event.delta.message.content
            got.text += getattr(content, "text", None) or ""
            got.thinking += getattr(content, "thinking", None) or ""
    return got


def _ollama_chat(session: SessionClient) -> _Received:
    got = _Received()
    for chunk in session.ollama_client().chat(
        model="llama3.2", messages=[{"role": "user", "content": "Weather?"}], stream=True
    ):
        got.text += chunk.message.content or ""
        got.thinking += chunk.message.thinking or ""
    return got


def _ollama_generate(session: SessionClient) -> _Received:
    got = _Received()
    for chunk in session.ollama_client().generate(model="llama3.2", prompt="Weather?", stream=True):
        got.text += chunk.response or ""
        got.thinking += chunk.thinking or ""
    return got


def _bedrock_converse(session: SessionClient) -> _Received:
    got = _Received()
    answer = session.bedrock_client().converse_stream(
        modelId=BEDROCK_MODEL, messages=[{"role": "user", "content": [{"text": "Weather?"}]}]
    )
    for event in answer["stream"]:
        delta = event.get("contentBlockDelta", {}).get("delta", {})
        got.text += delta.get("text", "")
        got.thinking += delta.get("reasoningContent", {}).get("text", "")
    return got


def _bedrock_invoke(session: SessionClient) -> _Received:
    got = _Received()
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Weather?"}],
    }
    answer = session.bedrock_client().invoke_model_with_response_stream(
        modelId=BEDROCK_MODEL, body=json.dumps(body)
    )
    for event in answer["body"]:
        data = json.loads(event["chunk"]["bytes"])
        if data["type"] == "content_block_delta" and data["delta"]["type"] == "text_delta":
            got.text += data["delta"]["text"]
        elif data["type"] == "content_block_delta" and data["delta"]["type"] == "thinking_delta":
            got.thinking += data["delta"]["thinking"]
    return got


# (name, the wire the page names, the SDK call); each call's journal entry is the next one.
STREAMS: list[tuple[str, str, Callable[[SessionClient], _Received]]] = [
    ("openai chat", "OpenAI Chat Completions", _openai_chat),
    ("openai chat, a tool call", "OpenAI Chat Completions", lambda s: _openai_chat(s, TOOL_MODEL)),
    ("azure chat", "OpenAI Chat Completions", lambda s: _openai_chat(s, "weather-deploy", azure=True)),
    ("openai responses", "OpenAI Responses", _openai_responses),
    ("anthropic", "Anthropic Messages", _anthropic),
    ("anthropic, a tool call", "Anthropic Messages", lambda s: _anthropic(s, TOOL_MODEL)),
    ("gemini", "Gemini", _gemini),
    ("cohere", "Cohere v2 chat", _cohere),
    ("ollama chat", "Ollama chat", _ollama_chat),
    ("ollama generate", "Ollama generate", _ollama_generate),
    ("bedrock converse-stream", "Bedrock ConverseStream", _bedrock_converse),
    (
        "bedrock invoke-with-response-stream",
        "Bedrock InvokeModelWithResponseStream (Anthropic body)",
        _bedrock_invoke,
    ),
]


def test_the_assembled_text_is_what_each_sdk_received(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient, tmp_path: Path
) -> None:
    expect = configured_expect()
    _configure(session)
    received = [(name, wire, call(session)) for name, wire, call in STREAMS]
    entries = session.requests(order="asc")
    assert len(entries) == len(STREAMS)
    assert received[0][2].text == "".join(CHUNKS) and received[1][2].calls == {"get_weather": ARGUMENTS}
    login(page, dashboard_server)
    for (name, wire, got), entry in zip(received, entries, strict=True):
        assert entry["streaming"] and entry["transport_outcome"] == "completed", name
        open_view(page, dashboard_server.url, f"sessions/{session.id}/requests/{entry['request_id']}")
        expect(page.locator("#assembled")).to_have_attribute("data-wire", wire)
        shown = page.locator("#assembled-text")
        expect(shown).to_be_attached()
        assert shown.text_content() == got.text, name
        thinking = page.locator("#assembled-thinking")
        if got.thinking:
            assert thinking.text_content() == got.thinking, name
        else:
            expect(thinking).to_have_count(0)
        rows = page.locator("#assembled-tool-calls tbody tr")
        expect(rows).to_have_count(len(got.calls))
        for index, (tool, arguments) in enumerate(got.calls.items()):
            row = rows.nth(index)
            expect(row.locator("td").nth(1)).to_have_text(tool)
            assert json.loads(row.locator("td pre").text_content() or "") == arguments, name
            expect(row.locator("td").first).to_have_text("call_7")
        expect(page.locator("#assembled-notes li")).to_have_count(
            1 if wire.startswith("Bedrock") else 0  # only the "best effort" note
        )
        expect(page.locator("#response-preview-frames ol.frames")).to_be_hidden()
        expect(page.locator("#status-badge")).to_have_text("200")
        if name == "anthropic":
            capture(page, tmp_path, "request-assembled-anthropic", for_docs=False)
    thoughtful = [name for name, _, got in received if got.thinking == THOUGHT]
    assert len(thoughtful) >= 7, thoughtful  # the thinking comparisons above were not all of nothing


# A Map (retryAttempts') comes back as an object.
_CALL = """async ([module, name, args]) => {
  const m = await import(`/dashboard/static/views/${module}.js`);
  const plain = (key, value) => (value instanceof Map ? Object.fromEntries(value) : value);
  return JSON.parse(JSON.stringify(m[name](...args), plain) ?? "null");
}"""


def _sse(*events: tuple[str | None, Any]) -> str:
    blocks = []
    for event, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        blocks.append((f"event: {event}\n" if event else "") + f"data: {text}\n\n")
    return "".join(blocks)


def _event_stream_message(event_type: str, payload: dict[str, Any]) -> str:
    """One AWS event-stream message as the journal's UTF-8 text shows it (prelude and CRCs stand-ins)."""
    headers = (
        f"\x0b:event-type\x07\x00{chr(len(event_type))}{event_type}"
        "\r:content-type\x07\x00\x10application/json\r:message-type\x07\x00\x05event"
    )
    return (
        "\x00\x00\x01\x00\x00\x00\x00W\ufffd\ufffd\ufffd\ufffd"
        + headers
        + json.dumps(payload)
        + "\ufffd\ufffd\x00\x00"
    )


@pytest.fixture
def module_page(page: Any, dashboard_server: LlmTestServer) -> Callable[..., Any]:
    """Calls ``views/<module>.js``'s export ``name`` with JSON arguments in the dashboard's page."""
    page.goto(dashboard_server.url + "/dashboard")  # the modules need no login; the origin does

    def call(module: str, name: str, *args: Any) -> Any:
        return page.evaluate(_CALL, [module, name, list(args)])

    return call


def test_assembly_reads_each_wire_by_the_shape_of_its_frames(module_page: Callable[..., Any]) -> None:
    chat = _sse(
        (None, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        (None, {"choices": [{"index": 0, "delta": {"refusal": "I can't "}}]}),
        (None, {"choices": [{"index": 0, "delta": {"refusal": "help."}}]}),
        (
            None,
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a":'}}
                            ]
                        },
                    }
                ]
            },
        ),
        (
            None,
            {
                "choices": [
                    {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]}}
                ]
            },
        ),
        (None, {"choices": [{"index": 1, "delta": {"content": "other choice"}}]}),
        (None, "[DONE]"),
    )
    result = module_page("assemble", "assembleStream", chat)
    assert result["wire"] == "OpenAI Chat Completions"
    assert (result["text"], result["refusal"]) == ("", "I can't help.")
    assert result["toolCalls"] == [{"id": "c1", "name": "f", "arguments": '{"a": 1}'}]
    assert (result["frames"], result["unread"], result["otherChoices"]) == (7, 0, 1)

    gemini_array = json.dumps(
        [
            {"candidates": [{"content": {"parts": [{"text": "hm", "thought": True}]}}]},
            {"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]},
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [{"text": "lo {}"}, {"functionCall": {"name": "g", "args": {"x": 1}}}]
                        }
                    }
                ]
            },
        ],
        indent=1,
    )
    result = module_page("assemble", "assembleStream", gemini_array)
    assert (result["wire"], result["text"], result["thinking"]) == ("Gemini", "Hello {}", "hm")
    assert result["toolCalls"] == [{"id": None, "name": "g", "arguments": '{"x":1}'}]

    cohere = _sse(
        ("tool-plan-delta", {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look."}}}),
        (
            "tool-call-start",
            {
                "type": "tool-call-start",
                "index": 0,
                "delta": {"message": {"tool_calls": {"id": "k", "function": {"name": "w", "arguments": ""}}}},
            },
        ),
        (
            "tool-call-delta",
            {
                "type": "tool-call-delta",
                "index": 0,
                "delta": {"message": {"tool_calls": {"function": {"arguments": "{}"}}}},
            },
        ),
        ("message-end", {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}}),
    )
    result = module_page("assemble", "assembleStream", cohere)
    assert (result["wire"], result["toolPlan"]) == ("Cohere v2 chat", "I will look.")
    assert result["toolCalls"] == [{"id": "k", "name": "w", "arguments": "{}"}]

    nova = base64.b64encode(
        json.dumps({"contentBlockDelta": {"delta": {"text": "Nova é"}, "contentBlockIndex": 0}}).encode()
    ).decode()
    titan = base64.b64encode(json.dumps({"outputText": "!", "index": 0}).encode()).decode()
    binary = _event_stream_message("chunk", {"bytes": nova}) + _event_stream_message(
        "chunk", {"bytes": titan}
    )
    result = module_page("assemble", "assembleStream", binary)
    assert result["text"] == "Nova é!" and result["wire"].startswith("Bedrock InvokeModelWithResponseStream")
    frames = module_page("assemble", "splitFrames", binary)
    assert frames["kind"] == "eventstream" and [f["label"] for f in frames["frames"]] == ["chunk", "chunk"]

    converse = _event_stream_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "A"}})
    converse += _event_stream_message(
        "contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t", "name": "n"}}}
    )
    converse += _event_stream_message(
        "contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"q"'}}}
    )
    converse += _event_stream_message(
        "contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": ": 2}"}}}
    )
    result = module_page("assemble", "assembleStream", converse[:-30])  # the preview cut the last message
    assert (result["wire"], result["text"]) == ("Bedrock ConverseStream", "A")
    assert result["toolCalls"] == [{"id": "t", "name": "n", "arguments": '{"q"'}] and result["unread"] == 1

    # A stream cut short: reading stops after the content frames that reached the socket.
    anthropic = _sse(
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "t"}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "one "}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "two"}},
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    result = module_page("assemble", "assembleStream", anthropic, {"contentFrames": 1})
    assert (result["text"], result["thinking"], result["delivered"], result["frames"]) == ("one ", "t", 2, 4)
    result = module_page("assemble", "assembleStream", anthropic)
    assert (result["text"], result["delivered"]) == ("one two", 4)

    # A page's entry: cut where a delivery plan's count says, else (a client gone) every frame.
    entry = {
        "streaming": True,
        "completed": True,
        "status": 200,
        "provider": "anthropic",
        "response_preview": anthropic,
        "transport_outcome": "early_end",
        "stream_delivery_applied": True,
        "emitted_content_frames": 1,
    }
    assert module_page("assembled", "assembleEntry", entry)["text"] == "one "
    gone = {**entry, "transport_outcome": "client_gone", "stream_delivery_applied": False}
    assert module_page("assembled", "assembleEntry", gone)["text"] == "one two"
    assert module_page("assembled", "assembleEntry", {**entry, "status": 429}) is None
    assert module_page("assembled", "assembleEntry", {**entry, "provider": "a2a"}) is None

    # A truncated SSE frame is counted, not read; an unknown shape is not assembled.
    result = module_page("assemble", "assembleStream", anthropic[:-12])
    assert (result["text"], result["unread"]) == ("one two", 1)
    result = module_page("assemble", "assembleStream", _sse(("x", {"jsonrpc": "2.0", "result": {}})))
    assert result["assembled"] is False and "no frame has the shape" in result["reason"]
    assert module_page("assemble", "assembleStream", "")["reason"] == "nothing was written"
    error = module_page(
        "assemble", "assembleStream", _sse(("error", {"type": "error", "error": {"message": "Overloaded"}}))
    )
    assert error["errors"] == ["Overloaded"]


def test_the_row_summaries(module_page: Callable[..., Any]) -> None:
    done = {"completed": True, "status": 200, "success": True, "transport_outcome": "completed"}
    badge = lambda **entry: module_page("entry_summary", "statusBadge", {**done, **entry})  # noqa: E731
    assert badge()["text"] == "200" and badge()["cls"] == "good"
    assert badge(success=False, transport_outcome="early_end")["text"] == "200 · early end"
    assert badge(success=False, transport_outcome="early_end")["cls"] == "warn"
    assert badge(success=False, transport_outcome="aborted") | {"title": ""} == {
        "text": "200 · aborted",
        "cls": "bad",
        "title": "",
    }
    assert badge(success=False, transport_outcome="client_gone")["text"] == "200 · client gone"
    assert badge(success=False, error_code="-32001")["text"] == "200 · -32001"  # an A2A error sent with 200
    assert badge(success=False, close_code=4000)["text"] == "200 · closed 4000"
    assert badge(status=429, success=False, error_code="rate_limit_exceeded")["cls"] == "bad"
    assert badge(completed=False, status=None)["cls"] == "pending"

    assert module_page("entry_summary", "shorten", "a  b\nc", 10) == "a b c"
    assert module_page("entry_summary", "shorten", "abcdefghij", 5) == "abcd…"
    assert module_page("entry_summary", "shorten", None, 5) == ""
    assert module_page("entry_summary", "retryAfterText", {"retry_after_seconds": 0.5}) == "retry after 0.5s"
    assert module_page("entry_summary", "retryAfterText", {"retry_after_seconds": None}) == ""
    markers = module_page(
        "entry_summary",
        "toolMarkers",
        {
            "response_tool_calls": [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}],
            "tool_results": [{"name": "x"}, {"name": "x"}],
        },
    )
    assert [m["text"] for m in markers] == ["⚒ a", "⚒ b", "↩ 2 results"]
    assert markers[2]["title"] == "the request sends 2 tool results back (x)"
    places = module_page(
        "entry_summary",
        "retryAttempts",
        [
            {"request_id": "r3", "sequence": 3, "retry_group": "g"},
            {"request_id": "r1", "sequence": 1, "retry_group": "g"},
            {"request_id": "r2", "sequence": 2, "retry_group": None},
            {"request_id": "r4", "sequence": 4, "retry_group": "h"},
        ],
    )
    assert places == {
        "r1": {"group": "g", "attempt": 1, "of": 2},
        "r3": {"group": "g", "attempt": 2, "of": 2},
        "r4": {"group": "h", "attempt": 1, "of": 1},
    }


def test_a_streamed_transcript_is_assembled_whole_and_audio_or_image_streams_get_no_text(
    module_page: Callable[..., Any], dashboard_server: LlmTestServer
) -> None:
    """The openai SDK's streamed transcription (deltas, then ``transcript.text.done``) assembles to the
    text it received with no frame unread; streamed speech and partial images are no text at all."""
    session = dashboard_server.create_session()
    try:
        client = session.openai_client(max_retries=0)
        upload = ("memo.mp3", b"\x00\x01" * 16_000, "audio/mpeg")
        events = list(client.audio.transcriptions.create(model="gpt-4o-transcribe", file=upload, stream=True))
        received = "".join(e.delta for e in events if e.type == "transcript.text.delta")
        with client.audio.speech.with_streaming_response.create(
            model="gpt-4o-mini-tts", voice="alloy", input="Hi", response_format="pcm", stream_format="sse"
        ) as speech:
            speech.read()
        for _ in client.images.generate(model="gpt-image-1", prompt="a cat", stream=True, partial_images=1):
            pass
        entries = {entry["operation"]: entry for entry in session.requests()}
    finally:
        session.delete()
    transcript = module_page("assembled", "assembleEntry", entries["transcription"])
    assert received and (transcript["text"], transcript["unread"]) == (received, 0)
    assert transcript["wire"] == "OpenAI transcription"
    for operation in ("speech", "images"):
        assert entries[operation]["streaming"] is True
        assert module_page("assembled", "assembleEntry", entries[operation]) is None, operation
