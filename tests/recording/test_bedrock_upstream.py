"""Bedrock as an upstream (docs/recording.md, "Bedrock upstreams"): the forwarded request is signed again
with SigV4 for the upstream's host and region with the llmts server's own AWS credentials, recorded, and
replayed through boto3 with the upstream gone; what cannot be signed is Bedrock's own 502."""

from __future__ import annotations

import base64
import calendar
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.config
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from llmts import LlmTestServer, ServerError, SessionClient
from llmts.providers.adapters import ADAPTERS
from llmts.providers.bedrock.adapter import BEDROCK
from llmts.providers.bedrock.info import upstream_region
from llmts.providers.bedrock.sigv4 import SigV4Signer
from llmts.providers.signing import UpstreamRequest
from tests.recording.conftest import EchoUpstream
from tests.recording.support import chunked_request, provider_upstream, recording_session
from tests.support.servers import BackgroundStops, discard

pytestmark = pytest.mark.sdk

MODEL = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
_CONVERSE = f"/bedrock/model/{MODEL}/converse"
_BODY = {"messages": [{"role": "user", "content": [{"text": "Capital of France?"}]}]}

SERVER_KEY = "AKIASERVERKEY0000001"
SERVER_SECRET = "server-secret-access-key-do-not-store"
SERVER_TOKEN = "server-session-token-do-not-store"
CLIENT_KEY = "AKIACLIENTKEY0000042"
CLIENT_TOKEN = "client-session-token-never-forwarded"
CLIENT_SHA = "f" * 64

# Nothing from the machine's own AWS set-up: no shared files, no instance metadata lookups.
_ISOLATED = {
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/llmts-credentials",
    "AWS_CONFIG_FILE": "/nonexistent/llmts-config",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
    "AWS_WEB_IDENTITY_TOKEN_FILE": "",
    "AWS_REGION": "",
    "AWS_DEFAULT_REGION": "",
}
_SERVER_CREDENTIALS = {
    **_ISOLATED,
    "AWS_ACCESS_KEY_ID": SERVER_KEY,
    "AWS_SECRET_ACCESS_KEY": SERVER_SECRET,
    "AWS_SESSION_TOKEN": SERVER_TOKEN,
}
_NO_CREDENTIALS = {**_ISOLATED, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""}
_SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/"
    r"(?P<service>[a-z0-9-]+)/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), "
    r"Signature=(?P<signature>[0-9a-f]{64})"
)


@pytest.fixture(scope="module")
def signing_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """An llmts server whose process has AWS credentials (from its environment)."""
    server = LlmTestServer.start(env=_SERVER_CREDENTIALS)
    try:
        yield server
    finally:
        background_stops.stop(server)


def _client_headers(region: str = "eu-west-3") -> dict[str, str]:
    """What a SigV4 client sends llmts: a signature for llmts's host, with its own key and token."""
    return {
        "Authorization": f"AWS4-HMAC-SHA256 Credential={CLIENT_KEY}/20260101/{region}/bedrock/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}",
        "X-Amz-Date": "20260101T000000Z",
        "X-Amz-Security-Token": CLIENT_TOKEN,
        "X-Amz-Content-Sha256": CLIENT_SHA,
    }


def _expected_signature(method: str, url: str, headers: dict[str, str], body: bytes) -> str:
    """The SigV4 signature of the request as the upstream received it, computed with the server's
    credentials for the region and service its Authorization header names."""
    fields = _SIGV4.fullmatch(headers["authorization"])
    assert fields is not None, headers["authorization"]
    signed = fields["signed"].split(";")
    request = AWSRequest(method=method, url=url, data=body, headers={name: headers[name] for name in signed})
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(SERVER_KEY, SERVER_SECRET, SERVER_TOKEN), "bedrock", fields["region"])
    return str(signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request))


def test_the_upstream_sees_the_servers_signature_for_its_host_never_the_clients(
    signing_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    session = recording_session(signing_server, {"bedrock": echo_upstream.url})
    headers = {**_client_headers("eu-west-3"), "User-Agent": "Boto3/1.0", "amz-sdk-request": "attempt=1"}
    answer = chunked_request(session.provider_base, "POST", _CONVERSE, _BODY, headers)
    assert answer.status == 200, answer.body
    seen = echo_upstream.seen[-1]
    got = dict(seen["headers"])
    assert seen["path"] == f"/model/{MODEL}/converse"
    fields = _SIGV4.fullmatch(got["authorization"])
    assert fields is not None, got["authorization"]
    # The server's key, the region the client signed for (a 127.0.0.1 host names none), service bedrock.
    assert (fields["key"], fields["region"], fields["service"]) == (SERVER_KEY, "eu-west-3", "bedrock")
    signed_at = calendar.timegm(time.strptime(got["x-amz-date"], "%Y%m%dT%H%M%SZ"))
    assert got["x-amz-date"][:8] == fields["date"] and abs(signed_at - time.time()) < 600  # signed now
    signed = fields["signed"].split(";")
    assert {"host", "x-amz-date", "x-amz-security-token", "content-type"} <= set(signed)
    assert "user-agent" not in signed  # botocore never signs it (proxies rewrite it)
    assert got["host"] == echo_upstream.url.removeprefix("http://")
    assert [name for name, _ in seen["headers"]].count("host") == 1  # the signed one, not a second
    assert got["x-amz-security-token"] == SERVER_TOKEN
    assert got["amz-sdk-request"] == "attempt=1" and got["user-agent"] == "Boto3/1.0"
    # Nothing of the client's signature reaches the upstream.
    assert "x-amz-content-sha256" not in got
    sent = json.dumps(seen["headers"])
    for client_value in (CLIENT_KEY, CLIENT_TOKEN, CLIENT_SHA, "20260101T000000Z", "0" * 64):
        assert client_value not in sent
    assert SERVER_SECRET not in sent
    # The signature is valid for exactly what the upstream received.
    url = "http://" + got["host"] + seen["path"]
    assert fields["signature"] == _expected_signature("POST", url, got, seen["body"].encode())
    assert json.loads(seen["body"]) == _BODY
    # This upstream echoes the headers it got: the recording has none of the server's credentials.
    assert SERVER_TOKEN in answer.body.decode() and SERVER_KEY in answer.body.decode()
    recorded = json.dumps(session.recording())
    assert SERVER_TOKEN not in recorded and SERVER_KEY not in recorded and SERVER_SECRET not in recorded
    assert CLIENT_KEY not in recorded and "[REDACTED]" in recorded


def test_a_bedrock_api_key_passes_unchanged(
    signing_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    session = recording_session(signing_server, {"bedrock": echo_upstream.url})
    answer = chunked_request(
        session.provider_base, "POST", _CONVERSE, _BODY, {"Authorization": "Bearer bedrock-api-key-0042"}
    )
    assert answer.status == 200, answer.body
    got = dict(echo_upstream.seen[-1]["headers"])
    assert got["authorization"] == "Bearer bedrock-api-key-0042"
    assert "x-amz-date" not in got and "x-amz-security-token" not in got


def _boto(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def _anthropic_body(text: str) -> str:
    return json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": text}],
        }
    )


def _run(client: Any) -> dict[str, Any]:
    """The four Bedrock Runtime calls, each answer as boto3 parsed it (the request id included)."""
    messages = [{"role": "user", "content": [{"text": "Capital of France?"}]}]
    converse = client.converse(modelId=MODEL, messages=messages)
    streamed = client.converse_stream(modelId=MODEL, messages=messages)
    invoked = client.invoke_model(modelId=MODEL, body=_anthropic_body("Capital of Italy?"))
    invoke_streamed = client.invoke_model_with_response_stream(
        modelId=MODEL, body=_anthropic_body("Capital of Spain?")
    )
    return {
        "converse": (converse["output"], converse["usage"], converse["ResponseMetadata"]["RequestId"]),
        "converse_stream": (list(streamed["stream"]), streamed["ResponseMetadata"]["RequestId"]),
        "invoke": (json.loads(invoked["body"].read()), invoked["ResponseMetadata"]["RequestId"]),
        "invoke_stream": (
            [json.loads(event["chunk"]["bytes"]) for event in invoke_streamed["body"]],
            invoke_streamed["ResponseMetadata"]["RequestId"],
        ),
    }


def test_boto3_records_through_a_signed_upstream_and_replays_with_it_gone(
    signing_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    # The "real provider": llmts's Bedrock surface (it checks the signature's shape, not its value).
    real = upstream_server.create_session()
    try:
        answers = [{"text": t, "chunks": [t[:2], t[2:]]} for t in ("Paris", "Paris", "Rome", "Madrid")]
        real.configure({"scenarios": [{"model": MODEL, "responses": answers}]})
        recorder = recording_session(signing_server, {"bedrock": provider_upstream(real, "bedrock")})
        live = _run(_boto(recorder))
        assert live["converse"][0]["message"]["content"] == [{"text": "Paris"}]
        assert [
            e["contentBlockDelta"]["delta"]["text"]
            for e in live["converse_stream"][0]
            if "contentBlockDelta" in e
        ] == ["Pa", "ris"]
        seen = real.requests()
        assert len(seen) == 4 and all(entry["status"] == 200 for entry in seen)
        config = recorder.recording()
        text = json.dumps(config)
        for secret in (SERVER_SECRET, SERVER_TOKEN, SERVER_KEY, recorder.credential("bedrock")):
            assert secret not in text
        responses = [r["recorded"] for s in config["scenarios"] for r in s["responses"]]
        streams = [r for r in responses if "frames" in r]
        assert len(responses) == 4 and len(streams) == 2
        assert all(r["encoding"] == "base64" for r in streams)  # binary AWS event-stream frames
        for stream in streams:
            types = [value for name, value in stream["headers"] if name.lower() == "content-type"]
            assert types == ["application/vnd.amazon.eventstream"]
    finally:
        real.delete()  # gone before the replay: a request reaching it would get a 404

    replay = signing_server.create_session()
    replay.configure(config)
    assert _run(_boto(replay)) == live
    replayed = replay.requests()
    assert len(replayed) == 4 and all(e["scenario"].startswith("rec-bedrock-") for e in replayed)
    # The replayed stream is the recorded frames, byte for byte and chunk for chunk.
    stream_recording = next(
        r for r in responses if "frames" in r and r["request"]["operation"] == "converse-stream"
    )
    again = signing_server.create_session()
    again.configure(config)
    _boto(again).converse(modelId=MODEL, messages=_BODY["messages"])  # the scenario's first answer
    raw = chunked_request(
        again.provider_base,
        "POST",
        f"/bedrock/model/{MODEL}/converse-stream",
        {"messages": [{"role": "user", "content": [{"text": "Capital of France?"}]}]},
        _client_headers("us-east-1"),
    )
    assert raw.status == 200
    assert raw.chunks == [base64.b64decode(frame) for frame in stream_recording["frames"]]


def test_an_upstream_throttle_and_the_anthropic_bedrock_sdk_record_and_replay(
    signing_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    real = upstream_server.create_session()
    throttled = {
        "status": 429,
        "code": "ThrottlingException",
        "message": "Too many requests",
        "retry_after": 3,
    }
    answers = [{"error": throttled}, {"text": "Paris", "chunks": ["Pa", "ris"]}, {"text": "Rome"}]
    real.configure({"scenarios": [{"model": MODEL, "responses": answers}]})
    recorder = recording_session(signing_server, {"bedrock": provider_upstream(real, "bedrock")})

    def run(session: SessionClient) -> list[Any]:
        with pytest.raises(ClientError) as limited:
            _boto(session).converse(modelId=MODEL, messages=_BODY["messages"])
        error = limited.value.response
        claude = session.anthropic_bedrock_client(_strict_response_validation=True, max_retries=0)
        hi = [{"role": "user", "content": "Capital of France?"}]
        with claude.messages.stream(model=MODEL, max_tokens=32, messages=hi) as stream:
            streamed = [event.model_dump() for event in stream]
        whole = claude.messages.create(model=MODEL, max_tokens=32, messages=hi)
        return [
            (error["Error"], error["ResponseMetadata"]["HTTPStatusCode"]),
            error["ResponseMetadata"]["HTTPHeaders"]["retry-after"],
            streamed,
            whole.model_dump(),
        ]

    live = run(recorder)
    assert live[0] == ({"Code": "ThrottlingException", "Message": "Too many requests"}, 429)
    assert live[1] == "3" and live[3]["content"] == [{"type": "text", "text": "Rome", "citations": None}]
    replay = signing_server.create_session()
    replay.configure(recorder.recording())
    upstream_server_entries = len(real.requests())
    assert run(replay) == live
    assert len(real.requests()) == upstream_server_entries  # the replay never reached the upstream


def test_without_credentials_the_request_is_bedrocks_502_journaled(echo_upstream: EchoUpstream) -> None:
    server = LlmTestServer.start(env=_NO_CREDENTIALS)
    try:
        session = recording_session(server, {"bedrock": echo_upstream.url})
        client = _boto(session)
        with pytest.raises(ClientError) as failed:
            client.converse(modelId=MODEL, messages=_BODY["messages"])
        error = failed.value.response
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 502
        assert error["Error"]["Code"] == "llm_test_server_upstream_unsigned"
        assert "AWS_ACCESS_KEY_ID" in error["Error"]["Message"]
        assert echo_upstream.seen == []  # nothing left unsigned or signed with the client's key
        entry = session.requests()[0]
        assert (entry["status"], entry["error_code"]) == (502, "llm_test_server_upstream_unsigned")
        assert session.recording()["scenarios"] == []
        # Only what must be signed fails: a Bedrock API key still passes.
        answer = chunked_request(
            session.provider_base, "POST", _CONVERSE, _BODY, {"Authorization": "Bearer bedrock-api-key-1"}
        )
        assert answer.status == 200
    finally:
        discard(server)


def test_without_botocore_the_request_is_bedrocks_502_naming_the_extra(
    tmp_path: Path, echo_upstream: EchoUpstream
) -> None:
    shadow = tmp_path / "botocore"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('botocore hidden by the test')\n")
    pythonpath = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    server = LlmTestServer.start(env={**_SERVER_CREDENTIALS, "PYTHONPATH": pythonpath})
    try:
        session = recording_session(server, {"bedrock": echo_upstream.url})
        answer = chunked_request(session.provider_base, "POST", _CONVERSE, _BODY, _client_headers())
        assert answer.status == 502
        assert answer.headers["x-amzn-errortype"] == "llm_test_server_upstream_unsigned"
        assert "pip install 'llmts[bedrock-upstream]'" in answer.json()["message"]
        assert echo_upstream.seen == []
        assert session.requests()[0]["error_code"] == "llm_test_server_upstream_unsigned"
    finally:
        discard(server)


def test_an_aws_host_without_a_region_is_refused_at_configure_time(signing_server: LlmTestServer) -> None:
    session = signing_server.create_session()
    session.configure({"scenarios": [{"model": MODEL, "responses": [{"text": "kept"}]}]})
    for url in ("https://bedrock.amazonaws.com", "https://runtime.amazonaws.com.cn/x"):
        with pytest.raises(ServerError) as refused:
            session.configure({"upstreams": {"bedrock": url}, "record": True})
        assert refused.value.status == 400
        assert "names no region" in str(refused.value)
    # Atomic: the session kept its configuration.
    answer = _boto(session).converse(modelId=MODEL, messages=_BODY["messages"])
    assert answer["output"]["message"]["content"] == [{"text": "kept"}]
    # A host that names its region, and any non-AWS host (a proxy, a test double), are accepted.
    for url in ("https://bedrock-runtime.eu-central-1.amazonaws.com", "http://127.0.0.1:9"):
        session.configure({"upstreams": {"bedrock": url}})


# --- in memory ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "region"),
    [
        ("https://bedrock-runtime.us-east-1.amazonaws.com", "us-east-1"),
        ("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
        ("https://bedrock-runtime.cn-north-1.amazonaws.com.cn", "cn-north-1"),
        ("https://vpce-0a1b-x2y3.bedrock-runtime.ap-southeast-2.vpce.amazonaws.com", "ap-southeast-2"),
        ("https://BEDROCK-RUNTIME.EU-WEST-1.AMAZONAWS.COM:443", "eu-west-1"),
        ("https://bedrock.us-east-1.amazonaws.com", None),
        ("http://127.0.0.1:8080/bedrock", None),
        ("https://bedrock-runtime.us-east-1.amazonaws.com.evil.example", None),
    ],
)
def test_the_region_an_upstream_host_names(url: str, region: str | None) -> None:
    assert upstream_region(url) == region


def test_the_host_region_wins_and_the_default_port_is_not_signed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in _SERVER_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    url = f"https://bedrock-runtime.us-west-2.amazonaws.com:443/model/{MODEL}/converse"
    headers = {k.lower(): v for k, v in _client_headers("eu-west-3").items()} | {"date": "Thu, 01 Jan 2026"}
    request = UpstreamRequest("POST", url, {**headers, "content-type": "application/json"}, b"{}")
    answer = SigV4Signer("bedrock")(request)
    assert answer.secrets == (SERVER_KEY, SERVER_TOKEN)
    signed = dict(answer.headers)
    fields = _SIGV4.fullmatch(signed["authorization"])
    assert fields is not None
    assert (fields["key"], fields["region"], fields["service"]) == (SERVER_KEY, "us-west-2", "bedrock")
    assert signed["host"] == "bedrock-runtime.us-west-2.amazonaws.com"
    assert "date" not in signed and "x-amz-content-sha256" not in signed
    assert fields["signature"] == _expected_signature("POST", url, signed, b"{}")


def test_without_a_region_anywhere_the_request_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in _SERVER_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    signer = SigV4Signer("bedrock")
    with pytest.raises(Exception, match="names no region") as refused:
        signer(
            UpstreamRequest(
                "POST", "http://127.0.0.1:9/model/m/converse", {"content-type": "application/json"}, b"{}"
            )
        )
    assert getattr(refused.value, "code", None) == "llm_test_server_upstream_unsigned"
    for variable, region in (("AWS_REGION", "eu-north-1"), ("AWS_DEFAULT_REGION", "sa-east-1")):
        monkeypatch.setenv(variable, region)  # AWS_DEFAULT_REGION (botocore's own) wins over AWS_REGION
        signed = SigV4Signer("bedrock")(
            UpstreamRequest("POST", "http://127.0.0.1:9/model/m/converse", {}, b"")
        )
        assert f"/{region}/bedrock/aws4_request" in signed.headers["authorization"]


def test_signing_is_the_bedrock_adapters_hook_alone() -> None:
    """The server signs through ``ProviderAdapter.sign_upstream`` (docs/architecture.md, "Record and
    replay"): Bedrock declares SigV4 for service ``bedrock``; every other provider forwards the client's
    credential as sent; a bearer key passes unchanged without resolving any AWS credentials."""
    assert isinstance(BEDROCK.sign_upstream, SigV4Signer) and BEDROCK.sign_upstream.service == "bedrock"
    assert [a.namespace for a in ADAPTERS if a.sign_upstream is not None] == ["bedrock"]
    bearer = {"authorization": "Bearer bedrock-api-key-7"}
    signer = SigV4Signer("bedrock")
    assert (
        signer(UpstreamRequest("POST", "http://127.0.0.1:9/model/m/converse", bearer, b"{}")).headers
        == bearer
    )
    assert signer._resolved is False  # nothing was resolved for a key that is not host-bound
