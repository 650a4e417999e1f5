"""Fixtures shared by the server's tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from llmts.server.cli import main


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    """The in-process ``llmts`` ``main``: (exit status, stdout, stderr), with no LLMTS_* settings of ours."""
    for name in ("LLMTS_URL", "LLMTS_CONTROL_KEY", "LLMTS_CA_FILE", "LLMTS_HOST", "LLMTS_PORT"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str) -> tuple[int, str, str]:
        status = main(list(args))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
