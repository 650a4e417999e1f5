"""``llmts_expect.max_cost_usd`` and ``llmts_session.usage()`` in an inner pytest against this run's
server: a test under its bound passes, one over it fails with the server's report, the marker takes the
bound too, and a bad bound fails the line that gives it."""

from __future__ import annotations

import pytest

from llmts import LlmTestServer
from tests.support.inner_pytest import attached_to, run_in_process

pytestmark = pytest.mark.sdk

INNER_TESTS = """
import pytest

HI = [{"role": "user", "content": "hi"}]
# 1,000 input and 100 output tokens of gpt-4o: $0.0035 at its list price.
CONFIG = {"models": ["gpt-4o"], "scenarios": [{"responses": [
    {"text": "ok", "usage": {"input_tokens": 1000, "output_tokens": 100}}
]}]}


def _ask(session):
    session.configure(CONFIG)
    session.openai_client(max_retries=0).chat.completions.create(model="gpt-4o", messages=HI)


def test_under_the_bound_passes(llmts_session, llmts_expect):
    llmts_expect.max_cost_usd(0.01)
    _ask(llmts_session)
    usage = llmts_session.usage()
    assert usage["totals"]["cost_usd"] == pytest.approx(0.0035)
    assert [row["model"] for row in usage["models"]] == ["gpt-4o"]


def test_over_the_bound_fails(llmts_session, llmts_expect):
    llmts_expect.max_cost_usd(0.001)
    _ask(llmts_session)


@pytest.mark.llmts_verify(max_cost_usd=0.002)
def test_the_marker_takes_the_bound(llmts_session):
    _ask(llmts_session)


def test_a_negative_bound_fails_its_line(llmts_expect):
    llmts_expect.max_cost_usd(-1)
    raise AssertionError("not reached")
"""


def test_cost_helper_passes_and_fails_with_the_report(
    pytester: pytest.Pytester, llmts_server: LlmTestServer
) -> None:
    pytester.makepyfile(test_inner=INNER_TESTS)
    args = [*attached_to(llmts_server), "-rA"]

    result = run_in_process(pytester, *args, preload=("openai",))

    output = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed")) == (1, 3), output
    assert "PASSED test_inner.py::test_under_the_bound_passes" in output
    failures = output.split("= FAILURES =")[1]
    over = failures.split("_ test_over_the_bound_fails _")[1].split("\n_")[0]
    assert "llmts: verification failed: 1 problem(s)" in over
    assert "- [cost] max_cost_usd: the requests in scope cost 0.003500 USD, over max_cost_usd 0.001" in over
    marked = failures.split("_ test_the_marker_takes_the_bound _")[1].split("\n_")[0]
    assert "over max_cost_usd 0.002" in marked
    negative = failures.split("_ test_a_negative_bound_fails_its_line _")[1].split("\n_")[0]
    assert ">       llmts_expect.max_cost_usd(-1)" in negative
    assert "max_cost_usd: Input should be greater than or equal to 0" in negative
    assert "not reached" not in negative
