"""Fixtures shared by the server's tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import pytest

from llmts.server.cli import main
from llmts.server.process import workers
from llmts.server.process.gunicorn_app import GunicornServer


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    """The in-process ``llmts`` ``main``: (exit status, stdout, stderr), with no LLMTS_* settings of ours.
    A command that gets as far as starting a server fails the test: started here, it would run in (and
    hang) the xdist worker, so a refusal that regressed must not get there."""
    for name in ("LLMTS_URL", "LLMTS_CONTROL_KEY", "LLMTS_CA_FILE", "LLMTS_HOST", "LLMTS_PORT"):
        monkeypatch.delenv(name, raising=False)

    def would_start(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("llmts main would have started a server in the test process")

    monkeypatch.setattr(GunicornServer, "run", would_start)
    monkeypatch.setattr(workers, "serve_workers", would_start)

    def run(*args: str) -> tuple[int, str, str]:
        status = main(list(args))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
