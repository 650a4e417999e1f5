"""What an A2A agent's tasks are charged to the process memory budget (``A2aAgentState.resident_bytes``,
docs/journal.md "Process memory budget") against what they really hold (tracemalloc), for the shapes of
messages clients send; and the charge follows every change of the task store."""

from __future__ import annotations

import gc
import itertools
import tracemalloc
from typing import Any

import orjson
import pytest

from llmts.peers.a2a import A2aAgentState, A2aCall, answer
from llmts.peers.a2a import state as state_module
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.session_memory import MemoryShare
from llmts.schema.a2a import A2aAgent
from tests.peers.a2a.a2a_helpers import v1_message

_serials = itertools.count()
_SCRIPT = {"task": {"states": ["input-required"], "artifacts": [{"text": "a" * 300}]}}


def _state(memory: MemoryShare | None = None) -> A2aAgentState:
    agent = A2aAgent.model_validate(
        {"name": "helper", "responses": [_SCRIPT], "terminal_policy": "repeat_last_response"}
    )
    return A2aAgentState(agent, memory)


def _message(shape: str, **fields: Any) -> dict[str, Any]:
    message = v1_message("hi", **fields)
    if shape == "one long text":
        message["parts"] = [{"text": "x" * 20_000}]
    elif shape == "many short parts":
        message["parts"] = [{"text": f"part {n}"} for n in range(300)]
    elif shape == "data values":
        message["parts"] = [{"data": {"rows": [[n, True, None, {"k": n}] for n in range(200)]}}]
    return message


def _send(state: A2aAgentState, params: dict[str, Any]) -> dict[str, Any]:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
    serial = next(_serials)
    call = A2aCall(
        "SendMessage",
        f"r{serial}",
        orjson.loads(body)["params"],
        lambda domain: f"{serial}-{domain}",
        1_767_225_600.0,
        len(body),
        body,
    )
    payload: dict[str, Any] = answer(state, call).payloads[0]
    return payload


@pytest.mark.parametrize(
    ("shape", "most"),
    [("one long text", 2), ("many short parts", 2), ("data values", 2), ("a few words", 4)],
)
def test_tasks_are_charged_at_least_what_they_hold(shape: str, most: float) -> None:
    """20 tasks of 6 messages each: the charge is at least what tracemalloc sees them hold, and within
    ``most`` times it (messages of a few words cost mostly their objects, charged generously)."""
    state = _state()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20):
            task = _send(state, {"message": _message(shape)})["result"]["task"]["id"]
            for _ in range(5):
                assert "result" in _send(state, {"message": _message(shape, taskId=task)})
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= state.resident_bytes <= most * held, (held, state.resident_bytes)


def test_the_charge_follows_every_change_and_the_share_gets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sends, continuations and evictions (at most 4 tasks here): the share always holds the state's
    charge, which is the sum of its tasks' own; detaching the share gives it all back."""
    monkeypatch.setattr(state_module, "_TASKS", 4)
    budget = MemoryBudget(64 << 20)
    share = MemoryShare(budget, "peer")
    state = _state(share)
    ids: list[str] = []
    for round_ in range(30):
        if ids and round_ % 3:
            _send(state, {"message": _message("many short parts", taskId=ids[-1])})
        else:
            ids.append(_send(state, {"message": _message("one long text")})["result"]["task"]["id"])
        tasks = state.tasks_locked()
        assert len(tasks) <= 4
        assert share.charged == budget.peer_bytes == state.resident_bytes == sum(t.resident for t in tasks)
    assert state.evicted == len(ids) - 4
    share.detach()
    assert budget.peer_bytes == 0
