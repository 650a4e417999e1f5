"""``llmts session create/configure/journal/delete`` and ``llmts env --new-session`` against a real server:
the real commands in subprocesses where the process is the subject (what a shell script sees: stdout,
exit status, one stderr line and never a traceback), the in-process ``main`` for the other error paths."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from llmts import LlmTestServer
from llmts.server.cli import main
from tests.helpers import USER_HI

pytestmark = pytest.mark.sdk

ROOT = Path(__file__).resolve().parents[2]
MODEL = "gpt-4.1-mini"

SCRIPT_YAML = """\
models: [gpt-4.1-mini]
scenarios:
  - id: main
    responses:
      - text: "Hello there, friend."
        chunks: ["Hello", " there,", " friend."]
        stream_delivery: {mode: early_clean_end, after_content_frames: 1}
      - error: {status: 429, code: rate_limit_exceeded, message: Slow down, retry_after: 2}
"""


def _llmts(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m llmts ARGS`` with this checkout first on the path and no LLMTS_* settings of ours."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LLMTS_")}
    environment["PYTHONPATH"] = str(ROOT)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "llmts", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        check=False,
    )


def _server_args(server: LlmTestServer) -> list[str]:
    return ["--url", server.url] + (["--control-key", server.control_key] if server.control_key else [])


def _one_line_error(stderr: str) -> str:
    """The failure as the user sees it: exactly one line, ``llmts: ...``, no traceback."""
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("llmts: ")
    return lines[0]


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_create_configure_journal_delete_as_a_script_would(
    llmts_server: LlmTestServer, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    """Real processes where a script sees the process (the id alone on stdout, an ASCII-only terminal,
    exit 1 with one stderr line); the in-process ``main`` for what its output says."""
    config = tmp_path / "script.yaml"
    config.write_text(SCRIPT_YAML)
    created = _llmts("session", "create", "--label", "cli round trip", *_server_args(llmts_server))
    assert created.returncode == 0, created.stderr
    session_id = created.stdout.strip()
    assert created.stdout == session_id + "\n"  # ID=$(llmts session create) gets the id alone
    session = llmts_server.session(session_id)
    try:
        assert session.info()["label"] == "cli round trip"
        configured = cli("session", "configure", session_id, str(config), *_server_args(llmts_server))
        assert configured == (0, "", "")
        client = session.openai_client(max_retries=0)
        stream = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Tell me\na story"}], stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Hello"
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model=MODEL, messages=USER_HI)

        status, table, err = cli(
            "session", "journal", session_id, "--width", "160", *_server_args(llmts_server)
        )
        assert status == 0, err
        header, _, first, second = table.splitlines()
        assert header.split()[:5] == ["#", "provider/operation", "model", "status", "outcome"]
        assert first.split()[:5] == ["1", "openai/chat.completions", MODEL, "200", "early_end"]
        # The answer a cut-short stream delivered: its one content frame, not the whole scripted text.
        assert "main #0" in first and "Tell me a story" in first and first.endswith("  Hello")
        assert second.split()[:4] == ["2", "openai/chat.completions", MODEL, "429"]
        assert "rate_limit_exceeded retry 2s" in second

        # A terminal that cannot show "…" gets "?" instead, not a traceback.
        narrow = _llmts(
            "session",
            "journal",
            session_id,
            "--width",
            "70",
            *_server_args(llmts_server),
            env={"PYTHONIOENCODING": "ascii"},
        )
        assert narrow.returncode == 0 and narrow.stderr == ""
        assert "?" in narrow.stdout and narrow.stdout.isascii()

        status, as_json, _ = cli(
            "session", "journal", session_id, "--format", "json", *_server_args(llmts_server)
        )
        entries = json.loads(as_json)
        assert [(e["sequence"], e["status"]) for e in entries] == [(1, 200), (2, 429)]
        assert entries == list(reversed(session.requests()))  # the API's entries, oldest first

        assert cli("session", "delete", session_id, *_server_args(llmts_server)) == (0, "", "")
        gone = _llmts("session", "journal", session_id, *_server_args(llmts_server))
        assert gone.returncode == 1 and gone.stdout == ""
        assert "404 llm_test_server_session_not_found" in _one_line_error(gone.stderr)
    finally:
        if session_id in {s["id"] for s in llmts_server.sessions()}:
            session.delete()


def test_create_with_a_json_config_and_the_journal_of_an_empty_session(
    llmts_server: LlmTestServer, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"scenarios": [{"responses": [{"text": "Configured at creation."}]}]}))
    status, out, err = cli("session", "create", "--config", str(config), *_server_args(llmts_server))
    assert (status, err) == (0, "")
    session = llmts_server.session(out.strip())
    try:
        assert cli("session", "journal", session.id, *_server_args(llmts_server))[1] == "(no requests)\n"
        answer = session.openai_client(max_retries=0).chat.completions.create(model=MODEL, messages=USER_HI)
        assert answer.choices[0].message.content == "Configured at creation."
        status, out, _ = cli("session", "journal", session.id, "--max-rows", "5", *_server_args(llmts_server))
        assert status == 0 and "Configured at creation." in out
    finally:
        session.delete()


def test_journal_reads_past_one_page(
    llmts_server: LlmTestServer, cli: Callable[..., tuple[int, str, str]]
) -> None:
    # GET /admin-api/requests answers at most 500 entries; the command reads every page, oldest first.
    session = llmts_server.create_session(
        config={
            "journal": {"max_entries": 600},
            "scenarios": [{"responses": [{"text": "x"}], "terminal_policy": "repeat_last_response"}],
        }
    )
    try:
        client = session.openai_client(max_retries=0)
        for _ in range(503):
            client.chat.completions.create(model=MODEL, messages=USER_HI)
        status, out, _ = cli(
            "session", "journal", session.id, "--format", "json", *_server_args(llmts_server)
        )
        assert status == 0
        assert [entry["sequence"] for entry in json.loads(out)] == list(range(1, 504))
        status, out, _ = cli("session", "journal", session.id, "--max-rows", "2", *_server_args(llmts_server))
        assert out.splitlines()[2] == "(501 more not shown)"
        assert [line.split()[0] for line in out.splitlines()[3:]] == ["502", "503"]
    finally:
        session.delete()


def test_refusals_and_bad_files_are_one_line_and_exit_1(
    llmts_server: LlmTestServer, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    session = llmts_server.create_session(config={"scenarios": [{"responses": [{"text": "kept"}]}]})
    files = {
        "invalid.json": json.dumps({"scenarios": [{"responses": [{"text": "a", "chunks": ["b"]}]}]}),
        "broken.json": "{not json",
        "list.yaml": "- 1\n- 2\n",
        "broken.yml": "scenarios: [unclosed\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    server = _server_args(llmts_server)
    try:
        expected = {
            "invalid.json": "the server answered 400 invalid_configuration: ",
            "broken.json": f"{tmp_path / 'broken.json'}: not valid JSON",
            "list.yaml": f"{tmp_path / 'list.yaml'}: a configuration is a JSON object (a mapping), not an",
            "broken.yml": f"{tmp_path / 'broken.yml'}: not valid YAML: expected ',' or ']'",
            "missing.json": f"{tmp_path / 'missing.json'}: cannot read: No such file or directory",
        }
        for name, message in expected.items():
            status, out, err = cli("session", "configure", session.id, str(tmp_path / name), *server)
            assert (status, out) == (1, ""), name
            assert message in _one_line_error(err), (name, err)
        status, _, err = cli("session", "configure", session.id, str(tmp_path / "invalid.json"), *server)
        assert "scenarios[0].responses[0]" in err and "chunks must concatenate to text" in err
        # Nothing was applied: the previous configuration is still in force.
        assert session.configuration()["scenarios"][0]["responses"] == [{"text": "kept"}]

        status, out, err = cli("session", "create", "--label", "x" * 201, *server)
        assert (status, out) == (1, "") and "400" in _one_line_error(err) and "label" in err
        status, out, err = cli("session", "create", "--config", str(tmp_path / "broken.json"), *server)
        assert (status, out) == (1, "") and "not valid JSON" in _one_line_error(err)
    finally:
        session.delete()


def test_unknown_sessions_are_named(
    llmts_server: LlmTestServer, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    config = tmp_path / "c.json"
    config.write_text("{}")
    unknown = "ses_" + "0" * 32
    for args in (["configure", unknown, str(config)], ["journal", unknown], ["delete", unknown]):
        status, out, err = cli("session", *args, *_server_args(llmts_server))
        assert (status, out) == (1, ""), args
        line = _one_line_error(err)
        assert "404 llm_test_server_session_not_found" in line and unknown in line


def test_usage_errors_exit_2(cli: Callable[..., tuple[int, str, str]]) -> None:
    for args in (
        ["session", "journal", "../admin"],
        ["session", "delete", "ses x"],
        ["session", "create", "--url", "localhost:8080"],
        ["env", "--label", "needs --new-session"],
        ["env", "--session", "a/b"],
    ):
        status, out, err = cli(*args)
        assert (status, out) == (2, ""), args
        _one_line_error(err)
    with pytest.raises(SystemExit) as exited:  # argparse: the two are mutually exclusive
        main(["env", "--session", "default", "--new-session"])
    assert exited.value.code == 2


def test_an_unreachable_server_is_one_line_in_a_real_process(
    closed_port_url: str, cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One command in a real process (exit status and stderr as a shell sees them), the others through
    the in-process ``main``."""
    result = _llmts("session", "create", env={"LLMTS_URL": closed_port_url})
    assert (result.returncode, result.stdout) == (1, "")
    line = _one_line_error(result.stderr)
    assert f"cannot reach the llmts server at {closed_port_url}" in line
    assert "refused" in line.lower()
    monkeypatch.setenv("LLMTS_URL", closed_port_url)
    for args in (["session", "journal", "ses_x"], ["env", "--new-session"]):
        status, out, err = cli(*args)
        assert (status, out) == (1, ""), args
        line = _one_line_error(err)
        assert f"cannot reach the llmts server at {closed_port_url}" in line
        assert "refused" in line.lower()


def test_control_key_and_the_processes_of_a_multi_process_server(
    own_server_factory: Callable[..., LlmTestServer],
    cli: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = own_server_factory(control_key="cli-key", workers=2, access_log=False)
    urls = ",".join(server.urls)

    status, out, err = cli("session", "create", "--url", urls)
    assert (status, out) == (1, "")
    assert "401 unauthorized" in _one_line_error(err) and "--control-key" in err

    created = [
        cli("session", "create", "--url", urls, "--control-key", "cli-key")[1].strip() for _ in range(16)
    ]
    # The server options may come before the action too; after it they win.
    before = cli("session", "--url", urls, "--control-key", "cli-key", "create")
    assert before[0] == 0 and before[1].strip()
    both = cli(
        "session",
        "--control-key",
        "wrong",
        "--url",
        urls,
        "delete",
        before[1].strip(),
        "--control-key",
        "cli-key",
    )
    assert both[0] == 0, both
    monkeypatch.setenv("LLMTS_CONTROL_KEY", "cli-key")  # the key from the environment
    from_environment = cli("session", "create", "--url", urls)
    assert (
        from_environment[0] == 0
        and cli("session", "delete", from_environment[1].strip(), "--url", urls)[0] == 0
    )
    monkeypatch.delenv("LLMTS_CONTROL_KEY")
    # Each session lives on the process its id names (docs/deployment.md), as with the Python API.
    owners = {session_id: server.owner(session_id).url for session_id in created}
    assert len(set(owners.values())) == 2, "16 random ids all on one process (1 in 32768)"
    for session_id, owner_url in owners.items():
        listed = LlmTestServer(owner_url, control_key="cli-key").sessions()
        assert session_id in {s["id"] for s in listed}
        status, out, _ = cli("session", "journal", session_id, "--url", urls, "--control-key", "cli-key")
        assert (status, out) == (0, "(no requests)\n")
        assert cli("session", "delete", session_id, "--url", urls, "--control-key", "cli-key")[0] == 0


# --- llmts env --new-session --------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_env_new_session_evaluated_by_sh_reaches_the_configured_session(
    llmts_server: LlmTestServer, tmp_path: Path
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("scenarios:\n  - responses:\n      - text: From the new session.\n")
    printed = _llmts(
        "env", "--new-session", "--label", "env new", "--config", str(config), *_server_args(llmts_server)
    )
    assert printed.returncode == 0, printed.stderr
    first = printed.stdout.splitlines()[0]
    assert first.startswith("export LLMTS_SESSION_ID=ses_")
    session_id = first.split("=", 1)[1]
    try:
        script = (
            printed.stdout + f'{sys.executable} -c "import os, openai; '
            "print(os.environ['LLMTS_SESSION_ID']); "
            "print(openai.OpenAI(max_retries=0).chat.completions.create(model='m', "
            "messages=[{'role': 'user', 'content': 'Hi'}]).choices[0].message.content)\""
        )
        ran = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=True)
        assert ran.stdout.splitlines() == [session_id, "From the new session."]
        assert llmts_server.session(session_id).info()["label"] == "env new"
    finally:
        llmts_server.session(session_id).delete()


def test_env_new_session_in_every_shell_records_the_id_first(
    llmts_server: LlmTestServer, cli: Callable[..., tuple[int, str, str]]
) -> None:
    first_lines = {
        "sh": "export LLMTS_SESSION_ID={}",
        "fish": "set -gx LLMTS_SESSION_ID '{}';",
        "powershell": "$env:LLMTS_SESSION_ID = '{}'",
        "dotenv": "LLMTS_SESSION_ID={}",
    }
    for shell, expected in first_lines.items():
        status, out, err = cli("env", "--new-session", "--shell", shell, *_server_args(llmts_server))
        assert (status, err) == (0, "")
        first, *rest = out.splitlines()
        session_id = first.split("LLMTS_SESSION_ID", 1)[1].strip(" ='\";")
        try:
            assert first == expected.format(session_id)
            # The rest is exactly what ``llmts env --session ID`` prints for that session.
            status, same, _ = cli(
                "env", "--session", session_id, "--shell", shell, *_server_args(llmts_server)
            )
            assert rest == same.splitlines()
            assert any(session_id in line and "OPENAI_BASE_URL" in line for line in rest)
        finally:
            llmts_server.session(session_id).delete()
    status, out, _ = cli("env", "--new-session", "--shell", "dotenv", *_server_args(llmts_server))
    values: dict[str, Any] = dict(line.split("=", 1) for line in out.splitlines())
    try:
        assert (
            values["OPENAI_BASE_URL"] == f"{llmts_server.url}/sessions/{values['LLMTS_SESSION_ID']}/openai/v1"
        )
    finally:
        llmts_server.session(values["LLMTS_SESSION_ID"]).delete()
