"""Bedrock Runtime on the wire: the event-stream encoder against botocore's decoder (CRCs, prelude,
headers), raw HTTP for what boto3 hides (status, ``x-amzn-ErrorType``, content type, frames) and the
credential forms (SigV4 shape, Bedrock API-key bearer)."""

from __future__ import annotations

import base64
import struct
from binascii import crc32
from functools import partial
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer, InvalidPayloadLength

from llmts import SessionClient
from llmts.providers.bedrock.eventstream import (
    encode_message,
    event_message,
    exception_message,
    with_broken_crc,
)
from llmts.providers.bedrock.stream import MALFORMED_EVENT
from tests.helpers import raw_request
from tests.support.configure import script

MODEL = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
CONVERSE = f"/bedrock/model/{quote(MODEL, safe='')}/converse"
STREAM = f"/bedrock/model/{quote(MODEL, safe='')}/converse-stream"
SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date, Signature=" + "ab" * 32
)
SIGNED = {"Authorization": SIGV4, "X-Amz-Date": "20260101T000000Z"}
HI = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}


def _decode(data: bytes) -> list[Any]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return list(buffer)


# --- the encoder, in memory ------------------------------------------------------------------------


def test_encoder_round_trips_through_botocores_decoder() -> None:
    payloads = [b"", b'{"text":"h\xc3\xa9llo"}', b"x" * 70_000]
    data = b"".join(event_message(b"contentBlockDelta", p) for p in payloads)

    messages = _decode(data)

    assert [m.payload for m in messages] == payloads
    assert messages[1].headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }


def test_encoder_layout_and_crcs_are_exact() -> None:
    message = encode_message(((b":event-type", b"chunk"),), b"{}")
    total, headers_length, prelude_crc = struct.unpack(">III", message[:12])
    assert total == len(message) == 12 + headers_length + 2 + 4
    assert headers_length == 1 + 11 + 1 + 2 + 5
    assert prelude_crc == crc32(message[:8])
    assert struct.unpack(">I", message[-4:])[0] == crc32(message[:-4])
    assert message[12:13] == b"\x0b" and message[24:25] == b"\x07"  # name length, string type


def test_broken_crc_keeps_framing_and_fails_the_checksum() -> None:
    good = event_message(b"messageStop", b'{"stopReason":"end_turn"}')
    broken = with_broken_crc(good)
    assert len(broken) == len(good) and broken[:-4] == good[:-4]
    with pytest.raises(ChecksumMismatch):
        _decode(broken)
    with pytest.raises(ChecksumMismatch):
        _decode(MALFORMED_EVENT)


def test_truncated_message_is_incomplete_not_garbage() -> None:
    good = event_message(b"messageStop", b"{}")
    assert _decode(good[:-5]) == []  # the decoder waits for the rest: a truncated stream just ends
    with pytest.raises(InvalidPayloadLength):
        prelude = struct.pack(">II", 30_000_000, 0)
        _decode(prelude + struct.pack(">I", crc32(prelude)) + b"\x00" * 8)


def test_exception_message_headers() -> None:
    (message,) = _decode(exception_message(b"ModelStreamErrorException", b'{"message":"boom"}'))
    assert message.headers[":message-type"] == "exception"
    assert message.headers[":exception-type"] == "ModelStreamErrorException"


# --- raw HTTP --------------------------------------------------------------------------------------


_configure = partial(script, models=[MODEL])


def test_converse_stream_frames_have_valid_crcs(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "ab", "chunks": ["a", "b"]})

    response = raw_request(llmts_session.provider_base, "POST", STREAM, HI, SIGNED)

    assert response.status == 200
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert response.headers["x-amzn-requestid"].startswith("req_")
    messages = _decode(response.body)
    assert [m.headers[":event-type"] for m in messages] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    assert {m.headers[":message-type"] for m in messages} == {"event"}
    assert orjson.loads(messages[1].payload) == {"contentBlockIndex": 0, "delta": {"text": "a"}}


def test_invoke_stream_chunks_are_base64_json_on_the_wire(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "x"})
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    path = f"/bedrock/model/{quote(MODEL, safe='')}/invoke-with-response-stream"

    response = raw_request(llmts_session.provider_base, "POST", path, body, SIGNED)

    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    messages = _decode(response.body)
    assert {m.headers[":event-type"] for m in messages} == {"chunk"}
    events = [orjson.loads(base64.b64decode(orjson.loads(m.payload)["bytes"])) for m in messages]
    assert events[0]["type"] == "message_start"
    assert events[-1]["type"] == "message_stop"
    assert "ping" not in [e["type"] for e in events]


def test_error_envelope_on_the_wire(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session, {"error": {"status": 429, "code": "slow", "message": "Too many", "retry_after": 2}}
    )

    response = raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, SIGNED)

    assert response.status == 429
    assert response.headers["x-amzn-errortype"] == "ThrottlingException"
    assert response.headers["retry-after"] == "2"
    assert response.json() == {"message": "Too many"}


def test_bad_body_is_a_validation_exception(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "never"})
    for body in (b"{", {"messages": []}, {"messages": [{"role": "system", "content": []}]}):
        response = raw_request(llmts_session.provider_base, "POST", CONVERSE, body, SIGNED)
        assert response.status == 400, body
        assert response.headers["x-amzn-errortype"] == "ValidationException"
        assert isinstance(response.json()["message"], str)


def test_unknown_model_is_400_validation_exception_on_the_wire(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "never"})
    for route in ("converse", "converse-stream", "invoke", "invoke-with-response-stream"):
        path = f"/bedrock/model/{quote('amazon.nova-premier-v9:0', safe='')}/{route}"
        response = raw_request(llmts_session.provider_base, "POST", path, HI, SIGNED)
        assert response.status == 400, route
        assert response.headers["x-amzn-errortype"] == "ValidationException"
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {"message": "The provided model identifier is invalid."}
    assert {e["status"] for e in llmts_session.requests()} == {400}


@pytest.mark.parametrize(
    ("model", "body"),
    [
        ("us.amazon.nova-pro-v1:0", HI),
        ("amazon.titan-text-premier-v1:0", {"inputText": "Hi"}),
    ],
)
def test_amazon_invoke_stream_chunks_have_valid_crcs(
    llmts_session: SessionClient, model: str, body: dict[str, Any]
) -> None:
    llmts_session.configure(
        {"models": [model], "scenarios": [{"responses": [{"text": "ab", "chunks": ["a", "b"]}]}]}
    )
    path = f"/bedrock/model/{quote(model, safe='')}/invoke-with-response-stream"

    response = raw_request(llmts_session.provider_base, "POST", path, body, SIGNED)

    assert response.status == 200
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    messages = _decode(response.body)  # botocore's decoder checks both CRCs of every message
    assert {(m.headers[":event-type"], m.headers[":message-type"]) for m in messages} == {("chunk", "event")}
    events = [orjson.loads(base64.b64decode(orjson.loads(m.payload)["bytes"])) for m in messages]
    assert "amazon-bedrock-invocationMetrics" in events[-1]
    assert all("amazon-bedrock-invocationMetrics" not in e for e in events[:-1])


def test_unknown_route_is_in_the_bedrock_envelope(llmts_session: SessionClient) -> None:
    response = raw_request(llmts_session.provider_base, "POST", f"/bedrock/model/{MODEL}/nope", HI, SIGNED)
    assert response.status == 404
    assert response.headers["x-amzn-errortype"] == "ResourceNotFoundException"


@pytest.mark.parametrize(
    "authorization",
    [
        "AWS4-HMAC-SHA256 Credential=AKIDTEST",
        "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/bedrock/aws4_request, Signature=abc",
        SIGV4.replace("aws4_request", "aws5_request"),
    ],
)
def test_malformed_sigv4_is_refused(llmts_session: SessionClient, authorization: str) -> None:
    _configure(llmts_session, {"text": "never"})
    headers = {"Authorization": authorization, "X-Amz-Date": "20260101T000000Z"}

    response = raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, headers)

    assert response.status == 403
    assert response.headers["x-amzn-errortype"] == "UnrecognizedClientException"
    assert llmts_session.requests()[0]["status"] == 403


def test_sigv4_without_a_date_is_refused(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "never"})
    response = raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, {"Authorization": SIGV4})
    assert response.status == 403


def test_sigv4_signature_is_not_verified_but_key_id_is_the_credential(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "ok"}, provider_credentials={"bedrock": "AKIDTEST"})
    assert raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, SIGNED).status == 200
    other = {**SIGNED, "Authorization": SIGV4.replace("AKIDTEST", "AKIDOTHER")}
    assert raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, other).status == 403


def test_bedrock_api_key_bearer_form(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "ok"}, provider_credentials={"bedrock": "ABSKbedrockapikey"})
    bearer = {"Authorization": "Bearer ABSKbedrockapikey"}

    assert raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, bearer).status == 200
    wrong = raw_request(llmts_session.provider_base, "POST", CONVERSE, HI, {"Authorization": "Bearer nope"})
    assert wrong.status == 403
    assert raw_request(llmts_session.provider_base, "POST", CONVERSE, HI).status == 403
