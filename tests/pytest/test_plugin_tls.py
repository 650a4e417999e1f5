"""The pytest plugin on https (``--llmts-tls``, ini ``llmts_tls``, ``--llmts-ca-file``; docs/tls.md): the
run's server serves TLS, the certificate reaches every xdist worker with the URL, the fixtures' clients and
``llmts_env`` trust it, and the certificate and key are gone when the run ends."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.inner_pytest import run_in_process, run_in_subprocess

INNER_TESTS = """
import json, os, pathlib
import boto3, openai, pytest
from google import genai

RECORD = pathlib.Path(os.environ["LLMTS_PLUGIN_RECORD"])
HI = [{"role": "user", "content": "Hi"}]


def _record(name, llmts_server):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    record = {"url": llmts_server.url, "ca_file": llmts_server.ca_file, "worker": worker}
    (RECORD / f"{worker}-{name}.json").write_text(json.dumps(record))


@pytest.mark.parametrize("n", range(4))
def test_the_fixtures_clients_trust_the_runs_server(llmts_server, llmts_session, llmts_openai, n):
    assert llmts_server.url.startswith("https://") and llmts_session.provider_base.startswith("https://")
    assert llmts_openai.chat.completions.create(model="m", messages=HI).choices[0].message.content == "Hi"
    gemini = llmts_session.gemini_client()
    assert gemini.models.generate_content(model="gemini-2.5-flash", contents="Yo").text == "Yo"
    _record(f"fixtures-{n}", llmts_server)


@pytest.mark.parametrize("n", range(2))
def test_code_that_builds_its_own_clients_trusts_it_through_llmts_env(
    llmts_server, llmts_session, llmts_env, n
):
    assert llmts_env["NODE_EXTRA_CA_CERTS"] == llmts_session.ca_file
    bundle = pathlib.Path(llmts_env["SSL_CERT_FILE"]).read_text()
    assert llmts_env["AWS_CA_BUNDLE"] == llmts_env["SSL_CERT_FILE"]
    assert bundle.endswith(pathlib.Path(llmts_session.ca_file).read_text())
    assert bundle.count("BEGIN CERTIFICATE") > 10, "the usual CAs are kept"
    said = openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=HI)
    assert said.choices[0].message.content == "Hi"
    gemini = genai.Client()
    assert gemini.models.generate_content(model="gemini-2.5-flash", contents="Yo").text == "Yo"
    answer = boto3.client("bedrock-runtime").converse(
        modelId="anthropic.claude-3-5-haiku-20241022-v1:0",
        messages=[{"role": "user", "content": [{"text": "Hi"}]}],
    )
    assert answer["output"]["message"]["content"][0]["text"] == "Hi"
    _record(f"env-{n}", llmts_server)
"""

_PRELOAD = ("openai", "google.genai", "boto3")


def _records(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in directory.glob("*.json")]


def _port_open(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        return True
    except OSError:
        return False


def test_xdist_workers_get_the_certificate_with_the_url(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record, temporary = tmp_path / "record", tmp_path / "tmp"
    record.mkdir()
    temporary.mkdir()
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(record))
    monkeypatch.setenv("TMPDIR", str(temporary))  # where the server's directory (certificate, key) goes
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(test_inner=INNER_TESTS)

    result = run_in_subprocess(
        pytester, "-n", "2", "-p", "no:cacheprovider", "--llmts-tls", "--llmts-servers", "1"
    )

    result.assert_outcomes(passed=6)
    records = _records(record)
    assert {r["worker"] for r in records} == {"gw0", "gw1"}, "both workers ran tests"
    (url,) = {r["url"] for r in records}
    (ca_file,) = {r["ca_file"] for r in records}
    assert url.startswith("https://") and ca_file.startswith(str(temporary))
    assert not _port_open(url), "the server stops when the run ends"
    assert not Path(ca_file).exists() and not list(temporary.glob("llmts-*")), "nothing of the server is left"


def test_the_ini_option_starts_the_server_on_https(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(tmp_path))
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makeini("[pytest]\nllmts_tls = true\n")
    pytester.makepyfile(test_inner=INNER_TESTS)

    result = run_in_process(pytester, "-p", "no:xdist", "-p", "no:cacheprovider", preload=_PRELOAD)

    result.assert_outcomes(passed=6)
    (url,) = {r["url"] for r in _records(tmp_path)}
    assert url.startswith("https://") and not _port_open(url)


def test_an_attached_https_server_is_trusted_through_the_ca_file_option(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, own_server_factory: Any
) -> None:
    server = own_server_factory(tls=True, access_log=False)
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(tmp_path))
    monkeypatch.delenv("LLMTS_URL", raising=False)
    monkeypatch.setenv("LLMTS_CA_FILE", str(server.ca_file))
    pytester.makepyfile(test_inner=INNER_TESTS)

    result = run_in_process(
        pytester, "-p", "no:xdist", "-p", "no:cacheprovider", "--llmts-url", server.url, preload=_PRELOAD
    )

    result.assert_outcomes(passed=6)
    assert {r["url"] for r in _records(tmp_path)} == {server.url}
    assert server.health(), "an attached server is left running"
