"""The worker's boot economies (server/process/boot.py) and the routing rules that compile their URL
builders on first use (server/http/routing.py) change nothing they touch: the same entry points, the
collector on again after the app loads (or fails to), the same matches and built URLs."""

from __future__ import annotations

import gc
import importlib.metadata
from collections.abc import Iterator

import pytest
from werkzeug.routing import Map, Rule

from llmts.server.http.routing import MatchRule
from llmts.server.process.boot import WorkerBoot, _entry_points_read_once


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """The test starts with nothing frozen (the suite's run froze its collection, tests/conftest.py) and
    leaves the collector as it found it."""
    enabled, frozen = gc.isenabled(), gc.get_freeze_count() > 0
    gc.unfreeze()
    yield
    gc.unfreeze()
    if frozen:
        gc.freeze()
    (gc.enable if enabled else gc.disable)()


def _names(group: str) -> list[str]:
    return sorted(entry.name for entry in importlib.metadata.entry_points(group=group))


def test_entry_points_read_once_select_what_entry_points_selects() -> None:
    groups = ("pytest11", "console_scripts", "gevent.plugins.monkey.will_patch_all", "no.such.group")
    expected = {group: _names(group) for group in groups}
    real = importlib.metadata.entry_points
    with _entry_points_read_once():
        assert importlib.metadata.entry_points is not real
        got = {group: _names(group) for group in groups}
    assert importlib.metadata.entry_points is real
    assert got == expected and expected["pytest11"], "the llmts plugin's own entry point is among them"


class _Loads:
    def __init__(self, fails: bool) -> None:
        self.fails = fails

    def load_wsgi(self) -> None:
        assert not gc.isenabled(), "the boot runs without the collector"
        if self.fails:
            raise RuntimeError("the app did not load")


class _Worker(WorkerBoot, _Loads):
    pass


@pytest.mark.parametrize("fails", [False, True])
def test_the_collector_is_on_again_once_the_app_loaded_or_failed(
    fails: bool, collector_restored: None
) -> None:
    gc.disable()
    worker = _Worker(fails)
    if fails:
        with pytest.raises(RuntimeError):
            worker.load_wsgi()
    else:
        worker.load_wsgi()
    assert gc.isenabled() and gc.get_freeze_count() > 0


def _rules(rule: type[Rule]) -> Map:
    return Map(
        [
            rule("/openai/v1/chat/completions", endpoint="chat", methods=["POST"]),
            rule(
                "/gemini/<version>/models/<path:model>:generateContent", endpoint="gemini", methods=["POST"]
            ),
        ]
    )


def test_match_rules_match_and_build_what_werkzeug_rules_do() -> None:
    lazy, eager = _rules(MatchRule).bind("llmts.test"), _rules(Rule).bind("llmts.test")
    path = "/gemini/v1beta/models/gemini-2.5-flash:generateContent"
    assert lazy.match(path, "POST") == eager.match(path, "POST")
    for endpoint, values in (("chat", {}), ("gemini", {"version": "v1", "model": "m/x", "extra": "1"})):
        assert lazy.build(endpoint, values) == eager.build(endpoint, values)
        assert lazy.build(endpoint, values) == eager.build(endpoint, values)  # the compiled builder, kept
