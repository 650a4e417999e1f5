"""The pytest plugin when the run's server loses its gunicorn worker (docs/deployment.md, "When a worker
dies"): the run fails with the reason, and a test whose session was lost errors at teardown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.inner_pytest import run_in_process, run_in_subprocess

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="the inner test kills the gunicorn worker"
)

KILL_AND_WAIT = """
import os, signal, time

def kill_worker(server):
    worker = server.process_stats()["pid"]
    os.kill(worker, signal.SIGKILL)
    deadline = time.monotonic() + 90
    while True:  # until gunicorn's replacement answers
        try:
            if server.process_stats()["pid"] != worker:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline
        time.sleep(0.05)

def answer(session):
    reply = session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
    )
    return reply.choices[0].message.content
"""


def test_a_worker_restart_fails_the_run_even_when_no_test_touches_a_lost_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(
        test_inner=KILL_AND_WAIT
        + """
def test_kills_the_worker(llmts_server):
    kill_worker(llmts_server)

def test_a_later_session_works(llmts_session):
    assert answer(llmts_session) == "hi"
"""
    )
    result = run_in_process(
        pytester, "-p", "no:xdist", "-p", "no:cacheprovider", "--llmts-servers", "1", preload=("openai",)
    )

    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*llmts: the test run's server lost its sessions*", "*was killed by SIGKILL*restarted it as pid*"]
    )


def test_a_test_whose_session_was_lost_errors_at_teardown(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(
        test_inner=KILL_AND_WAIT
        + """
def test_loses_its_session(llmts_server, llmts_session):
    assert answer(llmts_session) == "hi"
    kill_worker(llmts_server)
"""
    )
    result = run_in_subprocess(pytester, "-n", "1", "-p", "no:cacheprovider", "--llmts-servers", "1")

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_loses_its_session*"])
    result.stdout.fnmatch_lines(["*500 llm_test_server_worker_restarted: no session*"])
    result.stdout.fnmatch_lines(["*llmts: the test run's server lost its sessions*"])
