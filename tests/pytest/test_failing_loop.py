"""The failing-test loop (docs/pytest-plugin.md, "When a test fails"), run for real: a small project of
passing and failing tests in a subprocess pytest (pytest-xdist) or an inner one, then its report sections,
its trace files (opened in Chromium with the network cut off) and the sessions kept on the server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmts import LlmTestServer
from llmts.pytest.failures import TRACE_SUFFIX, session_label, trace_file_name
from tests.support.inner_pytest import attached_to, run_in_process, run_in_subprocess

pytestmark = pytest.mark.sdk

# A small application: an agent with a tool loop, a story streamed by the model, and a client that retries.
PROJECT = """
import json

import openai
import pytest

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def agent(client, question):
    messages = [{"role": "user", "content": question}]
    first = client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=[WEATHER])
    message = first.choices[0].message
    if not message.tool_calls:
        return message.content
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps({"sky": "rain"})})
    return client.chat.completions.create(model="gpt-4.1-mini", messages=messages).choices[0].message.content


def story(client):
    stream = client.chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "Tell me a story"}], stream=True
    )
    text, finished = "", False
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.choices and chunk.choices[0].finish_reason:
            finished = True
    return text, finished


def test_agent_passes(llmts_session, llmts_openai):
    llmts_session.configure({"scenarios": [{"responses": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "Rain in Paris."},
    ]}]})
    assert agent(llmts_openai, "Weather in Paris?") == "Rain in Paris."


def test_story_fails_on_a_cut_stream(llmts_session, llmts_openai):
    llmts_session.configure({"scenarios": [{"id": "storyteller", "responses": [{
        "text": "Once upon a time a robot dreamt.",
        "chunks": ["Once ", "upon ", "a ", "time ", "a robot ", "dreamt."],
        "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 2},
    }]}]})
    text, finished = story(llmts_openai)
    assert finished, f"the story ended early: {text!r}"


def test_agent_fails_its_expectation(llmts_session, llmts_openai, llmts_expect):
    llmts_session.configure({"scenarios": [{"responses": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "Rain in Paris."},
    ]}]})
    llmts_expect.request("sunny result", provider="openai").tool("result", result={"sky": "sun"})
    agent(llmts_openai, "Weather in Paris?")


def test_retries_then_passes(llmts_session):
    llmts_session.configure({"scenarios": [{"responses": [
        {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "slow down", "retry_after": 0}},
        {"text": "finally"},
    ]}]})
    client = llmts_session.openai_client(max_retries=2)
    hi = [{"role": "user", "content": "hi"}]
    answer = client.chat.completions.create(model="gpt-4.1-mini", messages=hi)
    assert answer.choices[0].message.content == "finally"


def test_skipped(llmts_session):
    pytest.skip("not today")
"""

_NODE = "test_app.py::test_story_fails_on_a_cut_stream"
_EXPECTATION_NODE = "test_app.py::test_agent_fails_its_expectation"


def _sections(output: str) -> list[str]:
    """The bodies of the report sections titled ``llmts`` in pytest's terminal output."""
    return re.findall(r"-{3,} llmts -{3,}\n(.*?)(?=\n[-=_]{3,}|\Z)", output, flags=re.S)


def _traces(directory: Path) -> dict[str, Path]:
    return {path.name: path for path in directory.glob(f"*{TRACE_SUFFIX}")}


def test_a_failed_run_under_xdist_reports_traces_and_stops_its_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chromium: Any
) -> None:
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makeini("[pytest]\n")  # the project's rootdir: node ids are test_app.py::...
    pytester.makepyfile(test_app=PROJECT)
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / f"stale{TRACE_SUFFIX}").write_text("from an earlier run")
    (traces / "notes.html").write_text("the user's own file")

    result = run_in_subprocess(
        pytester, "-n", "2", "-p", "no:cacheprovider", f"--llmts-trace-dir={traces}", "-rfE"
    )

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    output = result.stdout.str()
    sections = _sections(output)
    assert len(sections) == 2, output
    story = next(section for section in sections if "storyteller" in section)
    # The journal table: the cut stream's row names its outcome and the prompt; where to look next.
    assert re.search(r"openai/chat\.completions.*200.*early_end.*storyteller", story), story
    assert "Tell me a story" in story
    assert re.search(r"usage: 1 request\(s\), \d+ input and \d+ output tokens, cost \$0\.\d{6}", story), story
    assert "the server this run started stops when the run ends" in story
    assert str(traces / trace_file_name(_NODE)) in story
    expectation = next(section for section in sections if "sunny result" in section)
    assert '"sky": "rain"' in expectation or "rain" in expectation, expectation  # what was actually sent

    # One trace per failed test, the earlier run's gone, the user's file untouched.
    assert set(_traces(traces)) == {trace_file_name(_NODE), trace_file_name(_EXPECTATION_NODE)}
    assert (traces / "notes.html").read_text() == "the user's own file"
    html = (traces / trace_file_name(_NODE)).read_text()
    assert 'id="llmts-trace-data"' in html and _NODE in html
    assert "llmts: where to look" in output and trace_file_name(_NODE) in output.split("where to look")[1]

    _open_story_trace(chromium, traces / trace_file_name(_NODE), tmp_path)
    assert _show(traces / trace_file_name(_NODE)) == (traces / trace_file_name(_NODE)).as_uri()


def _show(path: Path) -> str:
    """What ``llmts show FILE --print`` prints for a trace the plugin wrote."""
    shown = subprocess.run(
        [sys.executable, "-m", "llmts", "show", str(path), "--print"],
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout.strip()


def _open_story_trace(chromium: Any, path: Path, tmp_path: Path) -> None:
    """The cut-short story's trace, in Chromium with every request but the file's refused."""
    from tests.dashboard.browser import configured_expect, offline_page

    with offline_page(chromium) as (page, attempted, problems):
        expect = configured_expect()
        page.goto(path.as_uri())
        expect(page.locator("#trace-banner")).to_have_attribute("data-outcome", "failed")
        expect(page.locator("#trace-test")).to_have_text(_NODE)
        row = page.locator("#journal-body tr[data-sequence='1']")
        expect(row).to_contain_text("early_end")
        expect(row).to_contain_text("storyteller")
        page.screenshot(path=str(tmp_path / "story-journal.png"), full_page=True)
        row.locator("a").first.click()
        expect(page.locator("#timeline")).to_contain_text("early_clean_end after 2 content frame(s)")
        expect(page.locator("#timeline")).to_contain_text("no terminal marker")
        page.screenshot(path=str(tmp_path / "story-request.png"), full_page=True)
    assert set(attempted) == {path.as_uri()}, attempted
    assert problems == []


def test_an_attached_server_keeps_the_failed_tests_sessions_for_the_dashboard(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, llmts_server: LlmTestServer, tmp_path: Path
) -> None:
    monkeypatch.delenv("LLMTS_URL", raising=False)
    # A module name of its own: other tests' projects keep sessions on the same server meanwhile.
    pytester.makeini("[pytest]\n")  # the project's rootdir: node ids are test_attached.py::...
    pytester.makepyfile(test_attached=PROJECT)
    story_node, expectation_node = (
        node.replace("test_app.py", "test_attached.py") for node in (_NODE, _EXPECTATION_NODE)
    )

    result = run_in_process(
        pytester,
        *attached_to(llmts_server), "--llmts-trace", "off",
        preload=("openai",),
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    kept = {info["label"]: info for info in llmts_server.sessions(label_contains="test_attached.py::")}
    try:
        assert set(kept) == {story_node, expectation_node}, "passed and skipped tests' sessions are deleted"
        assert {info["test_outcome"] for info in kept.values()} == {"failed"}
        assert kept[story_node]["request_count"] == 1
        story = next(section for section in _sections(result.stdout.str()) if "storyteller" in section)
        assert f"dashboard: {llmts_server.url}/dashboard#/sessions/{kept[story_node]['id']}/journal" in story
        assert "no trace file" in story
    finally:
        for info in kept.values():
            llmts_server.session(info["id"]).delete()


@pytest.mark.parametrize(("keep", "trace"), [("all", "on"), ("none", "off")])
def test_keep_and_trace_choices(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    llmts_server: LlmTestServer,
    tmp_path: Path,
    keep: str,
    trace: str,
) -> None:
    monkeypatch.delenv("LLMTS_URL", raising=False)
    module = f"test_keep_{keep}"  # a module name of its own (see above)
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(**{module: PROJECT})
    traces = tmp_path / "traces"

    result = run_in_process(
        pytester,
        *attached_to(llmts_server),
        "--llmts-keep", keep, "--llmts-trace", trace, f"--llmts-trace-dir={traces}",
        preload=("openai",),
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    kept = llmts_server.sessions(label_contains=f"{module}.py::")
    try:
        outcomes = sorted(info["test_outcome"] for info in kept)
        if keep == "all":
            assert outcomes == ["failed", "failed", "passed", "passed", "skipped"]
            assert len(_traces(traces)) == 5
        else:
            assert outcomes == []
            assert not traces.exists()
    finally:
        for info in kept:
            llmts_server.session(info["id"]).delete()


def test_labels_are_node_ids_cut_to_the_servers_limit() -> None:
    assert session_label("t.py::test_a[x]") == "t.py::test_a[x]"
    long = "t.py::test_" + "x" * 300
    assert len(session_label(long)) == 200 and session_label(long).endswith("…")
    names = {trace_file_name(f"t.py::test[{index}/{'y' * 200}]") for index in range(50)}
    assert len(names) == 50, "node ids that share a long prefix still get files of their own"
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", name) for name in names)


def test_every_sdk_fixture_is_bound_to_the_session(
    pytester: pytest.Pytester, llmts_server: LlmTestServer
) -> None:
    pytester.makepyfile(
        test_sdks="""
def test_clients(llmts_session, llmts_anthropic, llmts_gemini, llmts_azure_openai, llmts_bedrock,
                 llmts_cohere, llmts_ollama):
    claude = llmts_anthropic.messages.create(
        model="claude-sonnet-4-6", max_tokens=16, messages=[{"role": "user", "content": "one"}]
    )
    gemini = llmts_gemini.models.generate_content(model="gemini-2.5-flash", contents="two")
    azure = llmts_azure_openai.chat.completions.create(
        model="my-deployment", messages=[{"role": "user", "content": "three"}]
    )
    bedrock = llmts_bedrock.converse(
        modelId="anthropic.claude-3-haiku-20240307-v1:0",
        messages=[{"role": "user", "content": [{"text": "four"}]}],
    )
    cohere = llmts_cohere.chat(model="command-a-03-2025", messages=[{"role": "user", "content": "five"}])
    ollama = llmts_ollama.chat(model="llama3.2", messages=[{"role": "user", "content": "six"}])
    answers = [
        claude.content[0].text, gemini.text, azure.choices[0].message.content,
        bedrock["output"]["message"]["content"][0]["text"], cohere.message.content[0].text,
        ollama.message.content,
    ]
    assert answers == ["one", "two", "three", "four", "five", "six"]
    providers = [entry["provider"] for entry in llmts_session.requests(order="asc")]
    assert providers == ["anthropic", "gemini", "azure-openai", "bedrock", "cohere", "ollama"]
"""
    )
    result = run_in_process(
        pytester,
        *attached_to(llmts_server),
        preload=("anthropic", "google.genai", "openai", "boto3", "cohere", "ollama"),
    )  # fmt: skip
    result.assert_outcomes(passed=1)
