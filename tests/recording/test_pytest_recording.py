"""The pytest side of record and replay (docs/recording.md): a project records its files with ``once``,
then replays them with the upstream gone; ``none`` refuses a missing file; files are sorted JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmts import LlmTestServer
from llmts.pytest.recording import fixture_file_name
from tests.support.inner_pytest import run_in_process

pytestmark = pytest.mark.sdk

INNER_TESTS = """
import pytest

KEY = "sk-inner-real-key-0123456789"


@pytest.mark.llmts_record
def test_capital(llmts_session):
    client = llmts_session.openai_client(api_key=KEY, max_retries=0)
    answer = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Capital of France?"}]
    )
    assert answer.choices[0].message.content == "Paris"


@pytest.mark.llmts_record
@pytest.mark.parametrize("city", ["Rome"])
def test_stream(llmts_session, city):
    client = llmts_session.openai_client(api_key=KEY, max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": city}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Roma!"


def test_unmarked(llmts_session):
    assert llmts_session.configuration() == {}
"""


def _run(pytester: pytest.Pytester, server: LlmTestServer, *extra: str) -> pytest.RunResult:
    args = ["-p", "no:cacheprovider", "-p", "no:xdist", "--llmts-url", server.url, "-rA", *extra]
    if server.control_key:
        args += ["--llmts-control-key", server.control_key]
    return run_in_process(pytester, *args, preload=("openai",))


def test_once_records_then_replays_with_the_upstream_gone(
    pytester: pytest.Pytester,
    llmts_server: LlmTestServer,
    upstream_server: LlmTestServer,
) -> None:
    upstream = upstream_server.create_session()
    upstream.configure(
        {
            "scenarios": [
                {"model": "gpt-4o", "responses": [{"text": "Paris"}]},
                {"model": "gpt-4o-mini", "responses": [{"text": "Roma!", "chunks": ["Ro", "ma", "!"]}]},
            ]
        }
    )
    pytester.makepyfile(test_inner=INNER_TESTS)
    pytester.makeini("[pytest]\nllmts_fixtures_dir = recorded\n")

    first = _run(
        pytester,
        llmts_server,
        "--llmts-record=once",
        f"--llmts-upstream=openai={upstream.provider_base}/openai",
    )
    assert first.parseoutcomes().get("passed") == 3, first.stdout.str()
    directory = pytester.path / "recorded"
    files = sorted(p.name for p in directory.iterdir())
    assert files == ["test_inner.py__test_capital.json", "test_inner.py__test_stream_Rome.json"]
    text = (directory / files[0]).read_text()
    assert "sk-inner-real-key" not in text and "llmts-test-key" not in text
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"  # stable, sorted, diffable
    assert json.loads(text)["scenarios"][0]["model"] == "gpt-4o"

    upstream.delete()  # the "real provider" is gone (a request would get a 404): the files answer
    again = _run(pytester, llmts_server, "--llmts-record=once")
    assert again.parseoutcomes().get("passed") == 3, again.stdout.str()
    assert sorted(p.name for p in directory.iterdir()) == files
    assert (directory / files[0]).read_text() == text  # replaying rewrote nothing
    replayed = _run(pytester, llmts_server)  # the default mode, none, replays too
    assert replayed.parseoutcomes().get("passed") == 3, replayed.stdout.str()


def test_none_fails_a_test_without_its_file_and_recording_needs_an_upstream(
    pytester: pytest.Pytester, llmts_server: LlmTestServer
) -> None:
    pytester.makepyfile(test_inner=INNER_TESTS)
    missing = _run(pytester, llmts_server, "--llmts-record=none", "-k", "capital")
    assert missing.parseoutcomes().get("errors") == 1
    assert "llmts: no recording" in missing.stdout.str() and "--llmts-record=once" in missing.stdout.str()
    no_upstream = _run(pytester, llmts_server, "--llmts-record=all", "-k", "capital")
    assert no_upstream.parseoutcomes().get("errors") == 1
    assert "no upstream is given" in no_upstream.stdout.str()
    bad = _run(pytester, llmts_server, "--llmts-record=all", "--llmts-upstream=openai", "-k", "capital")
    assert "NAMESPACE=URL" in bad.stdout.str() + bad.stderr.str()


def test_fixture_file_names_are_sanitised_node_ids() -> None:
    assert (
        fixture_file_name("tests/test_a.py::TestX::test_b[1-x/y]")
        == "tests_test_a.py__TestX__test_b_1-x_y.json"
    )
    long = fixture_file_name("tests/test_a.py::test_" + "x" * 400)
    assert len(long) <= 160 and long.endswith(".json")
    assert long != fixture_file_name("tests/test_a.py::test_" + "x" * 399)


def test_new_episodes_keeps_what_it_replayed_and_adds_what_it_recorded(
    pytester: pytest.Pytester, llmts_server: LlmTestServer, tmp_path: Path
) -> None:
    upstream = llmts_server.create_session()
    upstream.configure(
        {"scenarios": [{"model": "gpt-4o", "responses": [{"text": "Paris"}, {"text": "Berlin"}]}]}
    )
    pytester.makepyfile(
        test_grow="""
import pytest

@pytest.mark.llmts_record
def test_grow(llmts_session):
    client = llmts_session.openai_client(api_key="sk-grow-key-000111", max_retries=0)
    said = []
    for question in ("France?", "Germany?"):
        messages = [{"role": "user", "content": question}]
        answer = client.chat.completions.create(model="gpt-4o", messages=messages)
        said.append(answer.choices[0].message.content)
    assert said == ["Paris", "Berlin"]
"""
    )
    path = pytester.path / "tests" / "llmts_fixtures" / "test_grow.py__test_grow.json"
    recorded_one = {
        "strict_requests": False,
        "scenarios": [
            {
                "id": "rec-openai-gpt-4o",
                "provider": "openai",
                "model": "gpt-4o",
                "responses": [
                    {
                        "recorded": {
                            "status": 200,
                            "headers": [["Content-Type", "application/json"]],
                            "body": json.dumps(
                                {
                                    "id": "chatcmpl-old",
                                    "object": "chat.completion",
                                    "created": 1,
                                    "model": "gpt-4o",
                                    "choices": [
                                        {
                                            "index": 0,
                                            "message": {"role": "assistant", "content": "Paris"},
                                            "finish_reason": "stop",
                                        }
                                    ],
                                }
                            ),
                            "request": {
                                "operation": "chat.completions",
                                "model": "gpt-4o",
                                "messages": [{"role": "user", "text": "France?"}],
                            },
                        }
                    }
                ],
            }
        ],
    }
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(recorded_one))
    upstream.configure({"scenarios": [{"model": "gpt-4o", "responses": [{"text": "Berlin"}]}]})
    grown = _run(
        pytester,
        llmts_server,
        "--llmts-record=new_episodes",
        f"--llmts-upstream=openai={upstream.provider_base}/openai",
    )
    assert grown.parseoutcomes().get("passed") == 1, grown.stdout.str()
    responses = json.loads(path.read_text())["scenarios"][0]["responses"]
    assert [r["recorded"]["request"]["messages"][0]["text"] for r in responses] == ["France?", "Germany?"]
    assert "chatcmpl-old" in responses[0]["recorded"]["body"]
    assert len(upstream.requests()) == 1  # only the new episode went upstream
