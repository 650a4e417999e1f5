"""Every official SDK against ``llmts serve --tls`` (docs/tls.md): the documented trust recipe and the Python
API's clients over https, strict where the SDK validates, sync and async; a client told nothing refuses
the certificate (the TLS is real); the WebSocket clients reach the server through the same trust; the
environment for Node and curl. One TLS server for the module."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import anthropic
import boto3
import botocore.exceptions
import certifi
import cohere
import httpx
import ollama
import openai
import pytest
import websockets.exceptions
from google import genai
from google.genai import types

from llmts import LlmTestServer, SessionClient
from llmts.catalog.registry import CATALOG
from llmts.client.tls import default_client_context
from tests.helpers import USER_HI

pytestmark = pytest.mark.sdk

_BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def _certificate_refused(error: BaseException) -> bool:
    """Whether ``error`` (or what it wraps) is a failed certificate verification."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


# --- the documented recipe (docs/tls.md, "Trusting it from each SDK") -----------------------------------


def test_every_sdk_trusts_the_generated_certificate_through_the_documented_recipe(
    tls_session: SessionClient,
) -> None:
    base, cert = tls_session.provider_base, tls_session.ca_file
    assert base.startswith("https://") and cert is not None
    ctx = ssl.create_default_context(cafile=cert)
    strict: dict[str, Any] = {"_strict_response_validation": True, "max_retries": 0}

    chat = openai.OpenAI(
        base_url=f"{base}/openai/v1", api_key="k", http_client=openai.DefaultHttpxClient(verify=ctx), **strict
    )
    assert (
        chat.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content
        == "Hi"
    )
    azure = openai.AzureOpenAI(
        azure_endpoint=f"{base}/azure-openai",
        api_key="k",
        api_version="2024-10-21",
        http_client=openai.DefaultHttpxClient(verify=ctx),
        **strict,
    )
    assert azure.chat.completions.create(model="gpt-4o", messages=USER_HI).choices[0].message.content == "Hi"
    claude = anthropic.Anthropic(
        base_url=f"{base}/anthropic",
        api_key="k",
        http_client=anthropic.DefaultHttpxClient(verify=ctx),
        **strict,
    )
    said = claude.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=USER_HI)
    assert said.content[0].text == "Hi"
    gemini = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            base_url=f"{base}/gemini",
            client_args={"verify": ctx},
            async_client_args={"verify": ctx, "ssl": ctx},
        ),
    )
    assert gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi").text == "Hi"
    co = cohere.ClientV2(base_url=f"{base}/cohere", api_key="k", httpx_client=httpx.Client(verify=ctx))
    assert co.chat(model="command-a-03-2025", messages=USER_HI).message.content[0].text == "Hi"
    local = ollama.Client(host=f"{base}/ollama", verify=ctx)
    assert local.chat(model="llama3.2", messages=USER_HI).message.content == "Hi"
    bedrock = boto3.client(
        "bedrock-runtime",
        endpoint_url=f"{base}/bedrock",
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        verify=cert,
    )
    answer = bedrock.converse(
        modelId=_BEDROCK_MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}]
    )
    assert answer["output"]["message"]["content"][0]["text"] == "Hi"

    async def async_clients() -> list[str]:
        said = []
        chat = openai.AsyncOpenAI(
            base_url=f"{base}/openai/v1",
            api_key="k",
            http_client=openai.DefaultAsyncHttpxClient(verify=ctx),
            **strict,
        )
        reply = await chat.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
        said.append(reply.choices[0].message.content)
        claude = anthropic.AsyncAnthropic(
            base_url=f"{base}/anthropic",
            api_key="k",
            http_client=anthropic.DefaultAsyncHttpxClient(verify=ctx),
            **strict,
        )
        message = await claude.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=USER_HI)
        said.append(message.content[0].text)
        said.append((await gemini.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")).text)
        co = cohere.AsyncClientV2(
            base_url=f"{base}/cohere", api_key="k", httpx_client=httpx.AsyncClient(verify=ctx)
        )
        said.append((await co.chat(model="command-a-03-2025", messages=USER_HI)).message.content[0].text)
        local = ollama.AsyncClient(host=f"{base}/ollama", verify=ctx)
        said.append((await local.chat(model="llama3.2", messages=USER_HI)).message.content)
        return said

    assert asyncio.run(async_clients()) == ["Hi"] * 5
    assert len(tls_session.requests()) == 12


def test_a_client_told_nothing_refuses_the_certificate(tls_session: SessionClient) -> None:
    base = tls_session.provider_base
    with pytest.raises(openai.APIConnectionError) as refused:
        openai.OpenAI(base_url=f"{base}/openai/v1", api_key="k", max_retries=0).models.list()
    assert _certificate_refused(refused.value)
    gemini = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=f"{base}/gemini"))
    with pytest.raises(Exception) as refused_too:
        gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert _certificate_refused(refused_too.value)
    bedrock = boto3.client(
        "bedrock-runtime",
        endpoint_url=f"{base}/bedrock",
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    with pytest.raises(botocore.exceptions.SSLError):
        bedrock.converse(modelId=_BEDROCK_MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}])
    with pytest.raises(urllib.error.URLError) as plain:
        urllib.request.urlopen(f"{base}/openai/v1/models", timeout=5)
    assert _certificate_refused(plain.value)
    assert tls_session.requests() == [], "nothing reached the app"


# --- the Python API -------------------------------------------------------------------------------------


def test_every_sdk_client_of_a_tls_session_trusts_the_server(tls_session: SessionClient) -> None:
    strict: dict[str, Any] = {"_strict_response_validation": True, "max_retries": 0}
    said = [
        tls_session.openai_client(**strict).chat.completions.create(model="m", messages=USER_HI),
        tls_session.azure_openai_client(**strict).chat.completions.create(model="gpt-4o", messages=USER_HI),
        tls_session.ollama_openai_client(**strict).chat.completions.create(
            model="llama3.2", messages=USER_HI
        ),
    ]
    texts = [reply.choices[0].message.content for reply in said]
    for client in (tls_session.anthropic_client(**strict), tls_session.anthropic_bedrock_client(**strict)):
        texts.append(
            client.messages.create(model=_BEDROCK_MODEL, max_tokens=16, messages=USER_HI).content[0].text
        )
    gemini = tls_session.gemini_client()  # kept: a collected client closes its connections
    texts.append(gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi").text)
    texts.append(
        tls_session.cohere_client().chat(model="command-a-03-2025", messages=USER_HI).message.content[0].text
    )
    texts.append(tls_session.ollama_client().chat(model="llama3.2", messages=USER_HI).message.content)
    converse = tls_session.bedrock_client().converse(
        modelId=_BEDROCK_MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}]
    )
    texts.append(converse["output"]["message"]["content"][0]["text"])

    async def async_clients() -> list[str]:
        reply = await tls_session.async_openai_client(**strict).chat.completions.create(
            model="m", messages=USER_HI
        )
        message = await tls_session.async_anthropic_client(**strict).messages.create(
            model="claude-sonnet-4-6", max_tokens=16, messages=USER_HI
        )
        live = await gemini.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        co = await tls_session.async_cohere_client().chat(model="command-a-03-2025", messages=USER_HI)
        local = await tls_session.async_ollama_client().chat(model="llama3.2", messages=USER_HI)
        return [
            reply.choices[0].message.content,
            message.content[0].text,
            live.text,
            co.message.content[0].text,
            local.message.content,
        ]

    texts += asyncio.run(async_clients())
    assert texts == ["Hi"] * 14  # every SDK client the providers declare, gemini's twice (sync and aio)
    conversation = tls_session.for_conversation("c1").openai_client(**strict)
    assert (
        conversation.chat.completions.create(model="m", messages=USER_HI).choices[0].message.content == "Hi"
    )


def test_every_declared_sdk_client_says_how_it_trusts_a_certificate() -> None:
    # A provider adding a client without ``trust`` would hand out clients that refuse a --tls server.
    untrusting = [name for name in CATALOG.sdk_client_names() if CATALOG.sdk_client(name)[1].trust is None]
    assert untrusting == []


def test_a_callers_own_http_client_wins(tls_session: SessionClient) -> None:
    # The caller's client trusts nothing special: their choice, so the certificate is refused.
    client = tls_session.openai_client(http_client=openai.DefaultHttpxClient(), max_retries=0)
    with pytest.raises(openai.APIConnectionError) as refused:
        client.models.list()
    assert _certificate_refused(refused.value)


def test_the_session_hands_out_its_trust_for_other_clients(
    tls_server: LlmTestServer, tls_session: SessionClient
) -> None:
    context = tls_session.ssl_context()
    assert isinstance(context, ssl.SSLContext) and context is tls_server.ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert tls_session.websocket_connection_options() == {"ssl": context}
    with urllib.request.urlopen(f"{tls_session.provider_base}/openai/v1/models", context=context) as answer:
        assert answer.status == 200
    assert tls_session.sdk_environment()["NODE_EXTRA_CA_CERTS"] == tls_server.ca_file
    assert tls_session.sdk_environment()["OPENAI_BASE_URL"] == f"{tls_session.provider_base}/openai/v1"


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")  # verify=False asked for it
def test_attach_trusts_a_ca_file_or_nothing_on_request(tls_server: LlmTestServer) -> None:
    attached = LlmTestServer.attach(tls_server.url, ca_file=tls_server.ca_file)
    session = attached.create_session()
    try:
        assert session.openai_client().models.list().data
    finally:
        session.delete()
    unverified = LlmTestServer.attach(tls_server.url, verify=False)
    context = unverified.ssl_context()
    assert context is not None and context.verify_mode == ssl.CERT_NONE
    session = unverified.create_session()
    try:
        assert session.openai_client().models.list().data
        assert (
            session.bedrock_client().converse(
                modelId=_BEDROCK_MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}]
            )["output"]["message"]["content"][0]["text"]
            == "Hi"
        )
        assert "NODE_EXTRA_CA_CERTS" not in session.sdk_environment()
    finally:
        session.delete()
    started = time.monotonic()
    with pytest.raises(urllib.error.URLError) as refused:  # the system's CAs do not know the certificate
        LlmTestServer.attach(tls_server.url, timeout=30)
    assert _certificate_refused(refused.value)
    assert time.monotonic() - started < 10, "a refused certificate is not waited out like a server starting"


def test_a_plain_http_session_is_unchanged(llmts_session: SessionClient) -> None:
    assert llmts_session.provider_base.startswith("http://")
    assert llmts_session.ssl_context() is None and llmts_session.ca_file is None
    assert llmts_session.websocket_connection_options() == {}
    assert "NODE_EXTRA_CA_CERTS" not in llmts_session.sdk_environment()
    assert llmts_session.openai_client().models.list().data


def test_plain_http_clients_share_one_default_context_and_still_answer(
    llmts_session: SessionClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Building a CA bundle's context is ~20 ms of CPU per SDK client; on http the clients share one, built
    # as httpx builds its default, and rebuilt when the variables httpx reads change (docs/python-api.md).
    shared = default_client_context()
    assert shared is default_client_context() and shared.verify_mode == ssl.CERT_REQUIRED
    strict: dict[str, Any] = {"_strict_response_validation": True, "max_retries": 0}
    openai_client = llmts_session.openai_client(**strict)
    assert openai_client._client._transport._pool._ssl_context is shared
    gemini = llmts_session.gemini_client()
    assert gemini._api_client._http_options.client_args["verify"] is shared
    cohere_client = llmts_session.cohere_client()
    # cohere's factory would swap the SDK's own httpx client (redirects, keep-alive) for a plain one.
    assert cohere_client._client_wrapper.httpx_client.httpx_client.follow_redirects is True
    texts = [
        openai_client.chat.completions.create(model="m", messages=USER_HI).choices[0].message.content,
        llmts_session.anthropic_client(**strict)
        .messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=USER_HI)
        .content[0]
        .text,
        gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi").text,
        cohere_client.chat(model="command-a-03-2025", messages=USER_HI).message.content[0].text,
        llmts_session.ollama_client().chat(model="llama3.2", messages=USER_HI).message.content,
    ]
    assert texts == ["Hi"] * 5
    own = openai.DefaultHttpxClient()
    assert llmts_session.openai_client(http_client=own)._client is own  # the caller's client wins
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert default_client_context() is not shared


# --- WebSockets: the clients that always dial wss ----------------------------------------------------------


def _reached_the_server(error: BaseException | None) -> bool:
    """The handshake got past TLS: it either opened, or the server answered the upgrade with an HTTP status
    (a server without the realtime routes: 400 ``websocket_not_supported``)."""
    return error is None or isinstance(error, websockets.exceptions.InvalidStatus)


def test_the_realtime_and_live_clients_reach_the_server_through_the_same_trust(
    tls_session: SessionClient,
) -> None:
    base = tls_session.provider_base

    async def realtime(options: dict[str, Any]) -> BaseException | None:
        client = openai.AsyncOpenAI(base_url=f"{base}/openai/v1", api_key="k")
        assert client.websocket_base_url is None
        try:
            async with client.realtime.connect(model="gpt-realtime", websocket_connection_options=options):
                return None
        except Exception as error:
            return error

    async def live(client: genai.Client) -> BaseException | None:
        try:
            async with client.aio.live.connect(model="gemini-live-2.5-flash", config={}):
                return None
        except Exception as error:
            return error

    trusted = asyncio.run(realtime(tls_session.websocket_connection_options()))
    refused = asyncio.run(realtime({}))
    assert _reached_the_server(trusted), trusted
    assert refused is not None and _certificate_refused(refused), refused
    gemini = tls_session.gemini_client()
    trusted_live = asyncio.run(live(gemini))
    untrusted = genai.Client(api_key="k", http_options={"base_url": f"{base}/gemini"})
    refused_live = asyncio.run(live(untrusted))
    assert _reached_the_server(trusted_live), trusted_live
    assert refused_live is not None and _certificate_refused(refused_live), refused_live


# --- the environment: llmts env, Node, curl --------------------------------------------------------------


def test_llmts_env_prints_the_node_trust_and_reads_the_session_over_tls(tls_session: SessionClient) -> None:
    tls_session.configure({"provider_credentials": {"openai": "sk-over-tls"}})
    command = [sys.executable, "-m", "llmts", "env", "--url", tls_session.server.url, "--shell", "dotenv"]
    command += ["--session", tls_session.id, "--ca-file", str(tls_session.ca_file)]
    printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    environment = dict(line.split("=", 1) for line in printed.splitlines())
    assert environment["NODE_EXTRA_CA_CERTS"] == tls_session.ca_file
    assert environment["OPENAI_API_KEY"] == "sk-over-tls", "the control call trusted the server"
    assert environment["OPENAI_BASE_URL"].startswith("https://")
    assert "SSL_CERT_FILE" not in environment, "it would replace the process's CA bundle"


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")
def test_node_trusts_the_certificate_through_node_extra_ca_certs(tls_session: SessionClient) -> None:
    script = (
        "fetch(process.argv[1]).then(r => r.json()).then(b => console.log(JSON.stringify(b)), "
        "e => { console.log('ERROR ' + (e.cause && e.cause.code)); process.exit(3) })"
    )
    url = f"{tls_session.provider_base}/openai/v1/models"
    env = {"PATH": "/usr/bin:/bin", "NODE_EXTRA_CA_CERTS": str(tls_session.ca_file)}
    trusted = subprocess.run(["node", "-e", script, url], capture_output=True, text=True, env=env, timeout=30)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    assert json.loads(trusted.stdout)["data"]
    env.pop("NODE_EXTRA_CA_CERTS")
    refused = subprocess.run(["node", "-e", script, url], capture_output=True, text=True, env=env, timeout=30)
    assert refused.returncode == 3 and "SELF_SIGNED" in refused.stdout, refused.stdout + refused.stderr


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl on PATH")
def test_curl_trusts_the_certificate_with_cacert(tls_server: LlmTestServer) -> None:
    ok = subprocess.run(
        ["curl", "-sS", "--cacert", str(tls_server.ca_file), f"{tls_server.url}/health"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ok.returncode == 0 and json.loads(ok.stdout) == {"status": "ok"}, ok.stderr
    refused = subprocess.run(
        ["curl", "-sS", f"{tls_server.url}/health"], capture_output=True, text=True, timeout=30
    )
    assert refused.returncode == 60, refused.stderr  # curl: peer certificate cannot be authenticated
