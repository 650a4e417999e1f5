"""Record and replay in pytest (docs/recording.md): the ``llmts_record`` marker, its options, and one
fixture file per test.

Modes (``--llmts-record``, pytest-recording's names; ini ``llmts_record_mode``):

* ``none`` (default): replay the test's file; a missing file fails the test at setup.
* ``once``: replay the file when it exists, else record it (the upstreams must be given).
* ``new_episodes``: replay what the file holds and forward what it does not; the file is rewritten with
  what this run used (replayed and newly recorded exchanges, in order).
* ``all``: record everything again, whatever the file holds.

Files live under ``--llmts-fixtures-dir`` (ini ``llmts_fixtures_dir``, default ``tests/llmts_fixtures``,
relative to the rootdir), named by the test's node id, and are sorted, indented JSON so they diff well.
Upstreams come from ``--llmts-upstream openai=https://api.openai.com`` (repeatable) and the ini line list
``llmts_upstreams``; the command line wins per provider.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from llmts.client import SessionClient

__all__ = ["MODES", "RECORD_MARKER", "RecordingPlan", "add_recording_options", "fixture_file_name"]

RECORD_MARKER = "llmts_record"
MODES = ("none", "once", "new_episodes", "all")
DEFAULT_FIXTURES_DIR = "tests/llmts_fixtures"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_NAME = 150


def add_recording_options(parser: pytest.Parser, group: Any) -> None:
    group.addoption(
        "--llmts-record",
        choices=MODES,
        default=None,
        help="record and replay of tests marked llmts_record: none (replay only, the default), once, "
        "new_episodes or all (ini llmts_record_mode)",
    )
    group.addoption(
        "--llmts-fixtures-dir",
        default=None,
        help=f"where recorded fixture files live (ini llmts_fixtures_dir, default {DEFAULT_FIXTURES_DIR})",
    )
    group.addoption(
        "--llmts-upstream",
        action="append",
        default=[],
        metavar="NAMESPACE=URL",
        help="the real API a recording forwards a provider's requests to, e.g. "
        "openai=https://api.openai.com (repeatable; ini llmts_upstreams)",
    )
    parser.addini("llmts_record_mode", "default --llmts-record mode", default="none")
    parser.addini("llmts_fixtures_dir", "default --llmts-fixtures-dir", default=DEFAULT_FIXTURES_DIR)
    parser.addini("llmts_upstreams", "NAMESPACE=URL lines: the upstreams of recordings", type="linelist")


def fixture_file_name(nodeid: str) -> str:
    """The fixture file of a test: its node id with everything but letters, digits, ``._-`` replaced
    (``tests/test_a.py::test_b[x]`` -> ``tests_test_a.py__test_b_x_.json``); long ids keep a hash."""
    name = _UNSAFE.sub("_", nodeid.replace("::", "__")).strip("_") or "test"
    if len(name) > _MAX_NAME:
        digest = hashlib.sha256(nodeid.encode()).hexdigest()[:12]
        name = f"{name[: _MAX_NAME - 13]}-{digest}"
    return name + ".json"


def _upstreams(config: pytest.Config) -> dict[str, str]:
    upstreams: dict[str, str] = {}
    for line in [*config.getini("llmts_upstreams"), *config.getoption("--llmts-upstream")]:
        namespace, sep, url = str(line).partition("=")
        if not sep or not namespace.strip() or not url.strip():
            raise pytest.UsageError(f"llmts upstreams are NAMESPACE=URL, got {line!r}")
        upstreams[namespace.strip()] = url.strip()
    return upstreams


def write_fixture_file(path: Path, configuration: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(configuration, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


class RecordingPlan:
    """What the marked test's session does: replay a file, record one, or both (``new_episodes``)."""

    def __init__(self, mode: str, path: Path, upstreams: dict[str, str]) -> None:
        self.mode = mode
        self.path = path
        self.upstreams = upstreams
        self.recording = False

    @classmethod
    def for_item(cls, request: pytest.FixtureRequest) -> RecordingPlan:
        config = request.config
        mode = config.getoption("--llmts-record") or str(config.getini("llmts_record_mode") or "none")
        if mode not in MODES:
            raise pytest.UsageError(f"llmts_record_mode must be one of {', '.join(MODES)}, got {mode!r}")
        directory = Path(config.getoption("--llmts-fixtures-dir") or config.getini("llmts_fixtures_dir"))
        if not directory.is_absolute():
            directory = Path(config.rootpath) / directory
        return cls(mode, directory / fixture_file_name(request.node.nodeid), _upstreams(config))

    def begin(self, session: SessionClient) -> None:
        exists = self.path.is_file()
        recorded: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8")) if exists else {}
        replay_only = self.mode == "none" or (self.mode == "once" and exists)
        if replay_only:
            if not exists:
                pytest.fail(
                    f"llmts: no recording {self.path} (mode none); record it with --llmts-record=once",
                    pytrace=False,
                )
            session.configure(recorded)
            return
        if not self.upstreams:
            pytest.fail(
                f"llmts: --llmts-record={self.mode} needs to record {self.path.name} but no upstream is "
                "given (--llmts-upstream NAMESPACE=URL or the llmts_upstreams ini option)",
                pytrace=False,
            )
        base = recorded if self.mode == "new_episodes" else {}
        session.configure({**base, "upstreams": self.upstreams, "record": True})
        self.recording = True

    def end(self, session: SessionClient) -> None:
        """Write the file when this run recorded (and kept anything)."""
        if not self.recording:
            return
        configuration = session.recording()
        if configuration.get("scenarios") or configuration.get("conversations"):
            write_fixture_file(self.path, configuration)
