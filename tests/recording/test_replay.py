"""Record then replay for every provider surface (docs/recording.md): the replay answers byte for byte
with the recorded chunk boundaries, branching agents replay per conversation id, misses are explained."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from llmts import LlmTestServer, SessionClient
from llmts.schema.config import SessionConfig
from tests.recording.support import chunked_request, provider_upstream, recording_session

pytestmark = pytest.mark.sdk

_TEXT = {"text": "Paris is lovely in spring", "chunks": ["Paris ", "is ", "lovely ", "in ", "spring"]}
# Spaced frames, so the upstream writes them as several chunks (a paced stream that falls behind on a busy
# machine writes the frames already due together: fewer, larger chunks, still several at 50 ms apart).
_PACED = {**_TEXT, "pacing": {"tokens_per_second": 20}}


@dataclass(frozen=True)
class Case:
    name: str
    prefix: str
    model: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    stream_path: str | None = None  # when streaming is a path of its own (Gemini)


_OPENAI = {"Authorization": "Bearer sk-client-key-123456"}
CASES = [
    Case(
        "openai-chat",
        "openai",
        "gpt-4o",
        "/openai/v1/chat/completions",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about Paris"}]},
        _OPENAI,
    ),
    Case(
        "openai-responses",
        "openai",
        "gpt-4o",
        "/openai/v1/responses",
        {"model": "gpt-4o", "input": "Tell me about Paris"},
        _OPENAI,
    ),
    Case(
        "azure-openai",
        "azure-openai",
        "my-gpt-4o",
        "/azure-openai/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21",
        {"messages": [{"role": "user", "content": "Tell me about Paris"}]},
        {"api-key": "azure-client-key-123456"},
    ),
    Case(
        "anthropic",
        "anthropic",
        "claude-test-1",
        "/anthropic/v1/messages",
        {"model": "claude-test-1", "max_tokens": 64, "messages": [{"role": "user", "content": "Paris?"}]},
        {"x-api-key": "sk-ant-client-123456", "anthropic-version": "2023-06-01"},
    ),
    Case(
        "gemini",
        "gemini",
        "gemini-test",
        "/gemini/v1beta/models/gemini-test:generateContent",
        {"contents": [{"role": "user", "parts": [{"text": "Paris?"}]}]},
        {"x-goog-api-key": "AIza-client-key-123456"},
        "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
    ),
    Case(
        "cohere",
        "cohere",
        "command-test",
        "/cohere/v2/chat",
        {"model": "command-test", "messages": [{"role": "user", "content": "Paris?"}]},
        {"Authorization": "Bearer co-client-key-123456"},
    ),
    Case(
        "ollama",
        "ollama",
        "llama-test",
        "/ollama/api/chat",
        {"model": "llama-test", "messages": [{"role": "user", "content": "Paris?"}], "stream": False},
        {},
    ),
]


def _request(case: Case, stream: bool) -> tuple[str, dict[str, Any]]:
    if case.stream_path is not None:
        return (case.stream_path if stream else case.path), case.body
    return case.path, {**case.body, "stream": stream}


_COMPARED_HEADERS = ("content-type", "x-request-id", "request-id", "x-goog-request-id", "cache-control")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_record_then_replay_is_byte_identical_with_equal_chunk_boundaries(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer, case: Case, stream: bool
) -> None:
    upstream = upstream_server.create_session()
    upstream_config: dict[str, Any] = {"scenarios": [{"model": case.model, "responses": [_PACED]}]}
    if case.prefix == "azure-openai":  # the real resource knows its deployments; the recorder does not
        upstream_config["azure_deployments"] = {case.model: case.model}
    upstream.configure(upstream_config)
    recorder = recording_session(llmts_server, {case.prefix: provider_upstream(upstream, case.prefix)})
    path, body = _request(case, stream)
    live = chunked_request(recorder.provider_base, "POST", path, body, case.headers)
    assert live.status == 200, live.body
    if stream:
        assert len(live.chunks) >= 2  # several chunks: their boundaries are what the replay must keep
    config = recorder.recording()
    SessionConfig.model_validate(config)  # what configure and --fixtures load
    for secret in case.headers.values():
        assert secret.split()[-1] not in json.dumps(config)

    replay = llmts_server.create_session()
    replay.configure(config)
    replayed = chunked_request(replay.provider_base, "POST", path, body, case.headers)
    assert replayed.status == 200
    assert replayed.chunks == live.chunks
    for name in _COMPARED_HEADERS:
        assert replayed.headers.get(name) == live.headers.get(name)
    entry = replay.requests()[0]
    assert entry["scenario"] == config["scenarios"][0]["id"] and entry["transport_outcome"] == "completed"


def test_sdks_record_and_replay_with_strict_validation(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    upstream.configure(
        {
            "scenarios": [
                {
                    "model": "gpt-4o",
                    "provider": "openai",
                    "terminal_policy": "restart",
                    "responses": [_PACED],
                },
                {"model": "claude-test-1", "terminal_policy": "restart", "responses": [_PACED]},
                {"model": "gemini-test", "terminal_policy": "restart", "responses": [_PACED]},
            ]
        }
    )
    upstreams = {p: provider_upstream(upstream, p) for p in ("openai", "anthropic", "gemini")}
    recorder = recording_session(llmts_server, upstreams)

    def run(session: SessionClient) -> list[Any]:
        chat = session.openai_client(max_retries=0, _strict_response_validation=True)
        claude = session.anthropic_client(max_retries=0, _strict_response_validation=True)
        gemini = session.gemini_client()
        messages = [{"role": "user", "content": "Paris?"}]
        out: list[Any] = []
        whole = chat.chat.completions.create(model="gpt-4o", messages=messages)
        out.append((whole.id, whole.created, whole.choices[0].message.content))
        out.append(
            [
                c.choices[0].delta.content
                for c in chat.chat.completions.create(model="gpt-4o", messages=messages, stream=True)
                if c.choices
            ]
        )
        response = chat.responses.create(model="gpt-4o", input="Paris?")
        out.append((response.id, response.output_text))
        with claude.messages.stream(model="claude-test-1", max_tokens=64, messages=messages) as events:
            out.append(list(events.text_stream))
        message = claude.messages.create(model="claude-test-1", max_tokens=64, messages=messages)
        out.append((message.id, message.content[0].text))  # type: ignore[union-attr]
        out.append(gemini.models.generate_content(model="gemini-test", contents="Paris?").text)
        out.append(
            [c.text for c in gemini.models.generate_content_stream(model="gemini-test", contents="Paris?")]
        )
        return out

    recorded = run(recorder)
    assert recorded[0][2] == _TEXT["text"] and [c for c in recorded[1] if c] == _TEXT["chunks"]
    replay = llmts_server.create_session()
    replay.configure(recorder.recording())
    assert run(replay) == recorded  # ids and timestamps too


def _tool_call(city: str, call_id: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "get_weather", "arguments": {"city": city}}]}


_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _agent(session: SessionClient, conversation: str, weather: str) -> list[Any]:
    """A two-step tool loop; what it saw of the model."""
    client = session.for_conversation(conversation).openai_client(
        max_retries=0, _strict_response_validation=True
    )
    messages: list[Any] = [{"role": "user", "content": "What is the weather where I am going?"}]
    first = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[_WEATHER])
    call = first.choices[0].message.tool_calls[0]
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": weather})
    second = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[_WEATHER])
    return [call.id, call.function.arguments, second.id, second.choices[0].message.content]


def test_a_branching_agent_recorded_under_two_conversations_replays_in_the_other_order(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    upstream.configure(
        {
            "scenarios": [
                {
                    "model": "gpt-4o",
                    "responses": [
                        _tool_call("Paris", "call_paris"),
                        {"text": "Sunny in Paris"},
                        _tool_call("Rome", "call_rome"),
                        {"text": "Rainy in Rome"},
                    ],
                }
            ]
        }
    )
    recorder = recording_session(llmts_server, {"openai": provider_upstream(upstream, "openai")})
    paris = _agent(recorder, "trip-a", "sunny")
    rome = _agent(recorder, "trip-b", "rainy")
    assert paris[0] == "call_paris" and rome[3] == "Rainy in Rome"
    config = recorder.recording()
    graphs = config["conversations"]
    assert [(g["conversation_id"], len(g["steps"])) for g in graphs] == [("trip-a", 2), ("trip-b", 2)]
    assert graphs[0]["steps"][1]["when"]["tool_result"] == {"name": "get_weather", "call_id": "call_paris"}
    assert config["scenarios"] == []

    replay = llmts_server.create_session()
    replay.configure(config)
    assert _agent(replay, "trip-b", "rainy") == rome
    assert _agent(replay, "trip-a", "sunny") == paris
    states = {s["conversation_id"]: s["state"] for s in replay.conversations()}
    assert states == {"trip-a": "completed", "trip-b": "completed"}

    # A third run that changes the tool's result misses, naming the recorded request and the field.
    again = llmts_server.create_session()
    again.configure(config)
    with pytest.raises(openai.APIStatusError) as missed:
        _agent(again, "trip-a", "snowing")
    error = missed.value
    assert error.status_code == 409 and error.code == "llm_test_server_no_recorded_match"
    assert "conversation graph 'rec-openai-trip-a' step 's2'" in error.message
    assert "messages[2].text differs at character 1: recorded 'sunny', sent 'snowing'" in error.message


def test_a_miss_names_the_closest_recorded_request_also_in_match_explain(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    upstream.configure({"scenarios": [{"model": "gpt-4o", "responses": [{"text": "four"}, {"text": "six"}]}]})
    recorder = recording_session(llmts_server, {"openai": provider_upstream(upstream, "openai")})
    client = recorder.openai_client(max_retries=0)
    for question in ("What is 2+2?", "What is 3+3?"):
        client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}],
        )
    replay = llmts_server.create_session()
    replay.configure(recorder.recording())
    replayed = replay.openai_client(max_retries=0, _strict_response_validation=True)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 3+4?"}]
    explained = replay.explain({"model": "gpt-4o", "operation": "chat.completions", "messages": messages})
    with pytest.raises(openai.APIStatusError) as missed:
        replayed.chat.completions.create(model="gpt-4o", messages=messages)
    message = missed.value.message
    assert missed.value.status_code == 409 and missed.value.code == "llm_test_server_no_recorded_match"
    assert "the closest recorded request is scenario 'rec-openai-gpt-4o' response 1" in message
    assert "messages[1].text differs at character 10: recorded 'What is 3+3?', sent 'What is 3+4?'" in message
    assert explained["error_code"] == "llm_test_server_no_recorded_match"
    assert explained["error_message"] in message
    # Another model: nothing recorded for it, still explained against the closest request.
    with pytest.raises(openai.APIStatusError) as other:
        replayed.chat.completions.create(model="gpt-4o-mini", messages=messages[:1])
    assert "model: recorded 'gpt-4o', sent 'gpt-4o-mini'" in other.value.message


def test_measured_timing_comes_along_as_pacing_when_asked(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    slow = {**_TEXT, "pacing": {"ttft_ms": 300, "tokens_per_second": 20}}
    upstream.configure(
        {"scenarios": [{"model": "gpt-4o", "terminal_policy": "repeat_last_response", "responses": [slow]}]}
    )
    recorder = recording_session(llmts_server, {"openai": provider_upstream(upstream, "openai")})
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    live = chunked_request(recorder.provider_base, "POST", "/openai/v1/chat/completions", body, _OPENAI)
    plain = recorder.recording()["scenarios"][0]["responses"][0]
    assert "pacing" not in plain
    timed = recorder.recording(pacing=True)
    pacing = timed["scenarios"][0]["responses"][0]["pacing"]
    assert 250 <= pacing["ttft_ms"] <= 2000 and pacing["tokens_per_second"] > 0
    replay = llmts_server.create_session()
    replay.configure(timed)
    started = time.monotonic()
    replayed = chunked_request(replay.provider_base, "POST", "/openai/v1/chat/completions", body, _OPENAI)
    took = time.monotonic() - started
    assert replayed.chunks == live.chunks
    assert took >= 0.8 * live.arrivals[-1]
    assert replayed.arrivals[0] >= 0.2
