"""Record then replay for the operations beside chat (docs/recording.md, "Misses"): embeddings,
moderation, rerank, images and audio replay byte for byte through the official SDKs, and a replayed
request must send the same inputs, query, options and uploaded file, or it gets 409
``llm_test_server_no_recorded_match`` naming the first difference."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import cohere
import openai
import pytest

from llmts import LlmTestServer, SessionClient
from llmts.runtime.media.audio import speech_pcm, wav_bytes
from tests.recording.support import provider_upstream, recording_session

pytestmark = pytest.mark.sdk

_TEXTS = ["the cat sat on the mat", "stock prices rose sharply"]
_DOCUMENTS = ["Paris is the capital of France", "Berlin has many museums", "The Seine flows through Paris"]
_AUDIO = wav_bytes(speech_pcm("hello from the recording"), "hello from the recording")


def _recorded_and_replay(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer, run: Callable[[SessionClient], Any]
) -> tuple[Any, SessionClient, dict[str, Any]]:
    """What ``run`` got through a recording session, a fresh session configured with the recording, and
    the recording."""
    upstream = upstream_server.create_session()
    upstreams = {p: provider_upstream(upstream, p) for p in ("openai", "cohere", "gemini", "ollama")}
    recorder = recording_session(llmts_server, upstreams)
    recorded = run(recorder)
    recording = recorder.recording()
    replay = llmts_server.create_session()
    replay.configure(recording)
    return recorded, replay, recording


def _operations(session: SessionClient) -> list[Any]:
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    co = session.cohere_client()
    gemini = session.gemini_client()
    out: list[Any] = []
    # ``float``: the SDK's strict validation runs before it decodes its default base64.
    embedded = client.embeddings.create(
        model="text-embedding-3-small", input=_TEXTS, dimensions=64, encoding_format="float"
    )
    out.append([item.embedding for item in embedded.data])
    out.append(client.moderations.create(model="omni-moderation-latest", input=_TEXTS).model_dump())
    ranked = co.rerank(model="rerank-v3.5", query="capital of France", documents=_DOCUMENTS, top_n=2)
    out.append([(r.index, r.relevance_score) for r in ranked.results])
    vectors = gemini.models.embed_content(model="gemini-embedding-001", contents=_TEXTS)
    out.append([e.values for e in vectors.embeddings or ()])
    out.append(session.ollama_client().embed(model="nomic-embed-text", input=_TEXTS).embeddings)
    image = client.images.generate(model="gpt-image-1", prompt="a red square", size="1024x1024")
    out.append(image.data[0].b64_json if image.data else None)
    speech = client.audio.speech.create(
        model="gpt-4o-mini-tts", voice="alloy", input="Hello there", response_format="wav"
    )
    out.append(speech.content)
    heard = client.audio.transcriptions.create(model="whisper-1", file=("hello.wav", io.BytesIO(_AUDIO)))
    out.append(heard.text)
    return out


def test_operations_record_and_replay_through_the_sdks(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    recorded, replay, _ = _recorded_and_replay(llmts_server, upstream_server, _operations)
    assert len(recorded[0]) == 2 and len(recorded[0][0]) == 64 and recorded[-1]
    assert _operations(replay) == recorded
    entries = replay.requests()
    # Every answer came from the recording (llmts would otherwise have generated these operations).
    assert all(str(entry["scenario"]).startswith("rec-") for entry in entries), entries
    operations = [entry["operation"] for entry in entries]
    assert operations.count("embeddings") == 3 and "rerank" in operations and "transcription" in operations


def _embed(session: SessionClient, texts: list[str], **extra: Any) -> list[list[float]]:
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    answer = client.embeddings.create(
        model="text-embedding-3-small", input=texts, encoding_format="float", **extra
    )
    return [item.embedding for item in answer.data]


@pytest.mark.parametrize(
    ("texts", "extra", "difference"),
    [
        (
            [_TEXTS[0], "stock prices fell sharply"],
            {"dimensions": 64},
            "inputs[1] differs at character 13: recorded 'stock prices rose sharply', "
            "sent 'stock prices fell sharply'",
        ),
        (_TEXTS[:1], {"dimensions": 64}, "inputs: recorded 2, sent 1"),
        (_TEXTS, {}, "dimensions: recorded 64, sent none"),
        (_TEXTS, {"dimensions": 32}, "dimensions: recorded 64, sent 32"),
    ],
    ids=["changed-text", "fewer-inputs", "no-dimensions", "other-dimensions"],
)
def test_a_changed_embedding_request_misses_naming_the_input_or_option(
    llmts_server: LlmTestServer,
    upstream_server: LlmTestServer,
    texts: list[str],
    extra: dict[str, Any],
    difference: str,
) -> None:
    recorded, replay, _ = _recorded_and_replay(
        llmts_server, upstream_server, lambda session: _embed(session, _TEXTS, dimensions=64)
    )
    with pytest.raises(openai.APIStatusError) as missed:
        _embed(replay, texts, **extra)
    assert missed.value.status_code == 409 and missed.value.code == "llm_test_server_no_recorded_match"
    assert "scenario 'rec-openai-embeddings-text-embedding-3-small' response 0" in missed.value.message
    assert difference in missed.value.message
    # The miss changed nothing: the recorded request still replays.
    assert _embed(replay, _TEXTS, dimensions=64) == recorded


def test_a_changed_rerank_query_misses_and_is_explained(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    def rank(session: SessionClient, query: str) -> list[int]:
        answer = session.cohere_client().rerank(model="rerank-v3.5", query=query, documents=_DOCUMENTS)
        return [result.index for result in answer.results]

    recorded, replay, _ = _recorded_and_replay(
        llmts_server, upstream_server, lambda session: rank(session, "capital of France")
    )
    explained = replay.explain_wire(
        "/cohere/v2/rerank",
        {"model": "rerank-v3.5", "query": "capital of Spain", "documents": _DOCUMENTS},
    )
    with pytest.raises(cohere.core.ApiError) as missed:
        rank(replay, "capital of Spain")
    assert missed.value.status_code == 409
    message = str(missed.value.body)
    assert "query differs at character 11: recorded 'capital of France', sent 'capital of Spain'" in message
    assert explained["error_code"] == "llm_test_server_no_recorded_match"
    assert explained["error_message"] in message
    assert rank(replay, "capital of France") == recorded


def test_another_uploaded_file_misses_by_its_digest(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    def transcribe(session: SessionClient, audio: bytes) -> str:
        client = session.openai_client(max_retries=0, _strict_response_validation=True)
        heard = client.audio.transcriptions.create(model="whisper-1", file=("a.wav", io.BytesIO(audio)))
        return str(heard.text)

    recorded, replay, recording = _recorded_and_replay(
        llmts_server, upstream_server, lambda session: transcribe(session, _AUDIO)
    )
    kept = recording["scenarios"][0]["responses"][0]["recorded"]["request"]
    assert kept["upload_sha256"] == hashlib.sha256(_AUDIO).hexdigest()  # the digest, never the file
    assert base64.b64encode(_AUDIO[:64]).decode() not in json.dumps(recording)
    other = wav_bytes(speech_pcm("something else entirely"), "something else entirely")
    with pytest.raises(openai.APIStatusError) as missed:
        transcribe(replay, other)
    assert missed.value.status_code == 409
    assert "the uploaded file differs: recorded sha256 " in missed.value.message
    assert transcribe(replay, _AUDIO) == recorded
