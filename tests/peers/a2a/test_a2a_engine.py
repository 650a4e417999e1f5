"""The sans-IO A2A engine (llmts/peers/a2a): scripted responses under each terminal policy, the bounded
task store, ListTasks paging, tasks shared by both wires, continuations of interrupted tasks, push
configurations, and answers that never raise. No server: the HTTP side is tested in the other modules."""

from __future__ import annotations

import itertools
from collections import Counter
from random import Random
from typing import Any

import pytest

from llmts.peers.a2a import A2aAgentState, A2aCall, answer
from llmts.peers.a2a import state as state_module
from llmts.schema.a2a import A2aAgent
from tests.peers.a2a.a2a_helpers import v03_message, v1_message


def _agent(**fields: Any) -> A2aAgentState:
    return A2aAgentState(A2aAgent.model_validate({"name": "helper", **fields}))


_counter = itertools.count()
_EXHAUSTED = "llm_test_server_scenario_exhausted"


def _call(method: str, params: dict[str, Any] | None = None, size: int = 100) -> A2aCall:
    serial = next(_counter)
    return A2aCall(
        method, f"r{serial}", params or {}, lambda domain: f"{serial}-{domain}", 1_767_225_600.0, size
    )


def _result(state: A2aAgentState, method: str, params: dict[str, Any] | None = None) -> Any:
    reply = answer(state, _call(method, params))
    assert len(reply.payloads) == 1 and "error" not in reply.payloads[0], reply.payloads
    return reply.payloads[0]["result"]


def _error(
    state: A2aAgentState,
    method: str,
    params: dict[str, Any] | None = None,
    journal_code: str | None = None,
    size: int = 100,
) -> dict[str, Any]:
    """The error answered; the journal's ``error_code`` is ``journal_code``, else the JSON-RPC code."""
    reply = answer(state, _call(method, params, size))
    error: dict[str, Any] = reply.payloads[-1]["error"]
    assert reply.error_code == (journal_code or str(error["code"]))
    return error


def _sent(state: A2aAgentState, params: dict[str, Any], size: int) -> Any:
    """The result of a SendMessage whose body had ``size`` bytes."""
    reply = answer(state, _call("SendMessage", params, size))
    assert "error" not in reply.payloads[0], reply.payloads
    return reply.payloads[0]["result"]


def _texts(state: A2aAgentState, count: int) -> list[str]:
    return [
        _result(state, "SendMessage", {"message": v1_message("hi")})["message"]["parts"][0]["text"]
        for _ in range(count)
    ]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("repeat_last_response", ["a", "b", "b", "b"]), ("restart", ["a", "b", "a", "b"])],
)
def test_terminal_policies_continue_the_script(policy: str, expected: list[str]) -> None:
    state = _agent(responses=[{"text": "a"}, {"text": "b"}], terminal_policy=policy)
    assert _texts(state, 4) == expected


def test_reject_policy_and_an_empty_script_answer_an_exhausted_error() -> None:
    state = _agent(responses=[{"text": "a"}])
    assert _texts(state, 1) == ["a"]
    reply = answer(state, _call("message/send", {"message": v03_message("again")}))
    error = reply.payloads[0]["error"]
    assert error["code"] == -32603 and "no scripted response left (1 configured" in error["message"]
    assert error["data"] == {"code": "llm_test_server_scenario_exhausted"}
    assert reply.error_code == "llm_test_server_scenario_exhausted"
    assert _error(_agent(), "SendMessage", {"message": v1_message("x")}, _EXHAUSTED)["code"] == -32603


def test_refused_requests_consume_nothing() -> None:
    state = _agent(responses=[{"text": "first"}])
    assert _error(state, "SendMessage", {"message": {"role": "ROLE_USER"}})["code"] == -32602
    assert _error(state, "SendMessage", {"message": v1_message("x", taskId="nope")})["code"] == -32001
    assert _error(state, "NoSuchMethod")["code"] == -32601
    assert _texts(state, 1) == ["first"]


def test_a_task_created_over_one_wire_is_read_over_the_other() -> None:
    state = _agent(
        responses=[{"task": {"artifacts": [{"name": "r", "data": {"k": [1, 2]}}], "message": "done"}}]
    )
    task = _result(state, "SendMessage", {"message": v1_message("go")})["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    same = _result(state, "tasks/get", {"id": task["id"]})
    assert same["kind"] == "task" and same["status"]["state"] == "completed"
    assert same["artifacts"] == [
        {"artifactId": "artifact-1", "name": "r", "parts": [{"kind": "data", "data": {"k": [1, 2]}}]}
    ]
    assert same["history"][0]["parts"] == [{"kind": "text", "text": "go"}]
    assert same["status"]["message"]["role"] == "agent" and same["status"]["message"]["taskId"] == task["id"]


def test_an_interrupted_task_continues_with_the_next_response() -> None:
    state = _agent(
        responses=[
            {"task": {"states": ["submitted", "input-required"], "message": "Which city?"}},
            {"task": {"states": ["working", "completed"], "artifacts": [{"text": "Sunny"}]}},
        ]
    )
    first = _result(state, "SendMessage", {"message": v1_message("weather")})["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    follow_up = v1_message("Paris", taskId=first["id"], contextId=first["contextId"])
    second = _result(state, "SendMessage", {"message": follow_up})["task"]
    assert (second["id"], second["contextId"]) == (first["id"], first["contextId"])
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [m["parts"][0]["text"] for m in second["history"]] == ["weather", "Paris"]
    # Finished now: a further message naming it is refused, consuming nothing.
    error = _error(state, "SendMessage", {"message": v1_message("more", taskId=first["id"])})
    assert error["code"] == -32004 and "terminal state: TASK_STATE_COMPLETED" in error["message"]


def test_a_message_in_another_context_than_its_task_is_refused() -> None:
    state = _agent(responses=[{"task": {"states": ["input-required"]}}, {"text": "unused"}])
    task = _result(state, "message/send", {"message": v03_message("a")})
    error = _error(state, "message/send", {"message": v03_message("b", taskId=task["id"], contextId="other")})
    assert error["code"] == -32602


def test_streaming_events_and_non_blocking_sends() -> None:
    script = {
        "task": {"states": ["submitted", "working", "completed"], "artifacts": [{"text": "x"}, {"text": "y"}]}
    }
    state = _agent(responses=[script, script])
    events = answer(state, _call("message/stream", {"message": v03_message("s")})).payloads
    kinds = [event["result"]["kind"] for event in events]
    assert kinds == ["task", "status-update", "artifact-update", "artifact-update", "status-update"]
    assert [event["result"].get("final") for event in events] == [None, False, None, None, True]
    assert events[0]["result"]["status"]["state"] == "submitted" and "artifacts" not in events[0]["result"]
    started = _result(
        state, "SendMessage", {"message": v1_message("p"), "configuration": {"returnImmediately": True}}
    )
    assert started["task"]["status"]["state"] == "TASK_STATE_SUBMITTED" and "artifacts" not in started["task"]
    later = _result(state, "GetTask", {"id": started["task"]["id"], "historyLength": 0})
    assert later["status"]["state"] == "TASK_STATE_COMPLETED" and len(later["artifacts"]) == 2
    assert "history" not in later


def test_cancel_and_subscribe_follow_the_task_state() -> None:
    state = _agent(
        responses=[{"task": {"states": ["submitted", "working"]}}, {"task": {"states": ["completed"]}}]
    )
    working = _result(state, "SendMessage", {"message": v1_message("w")})["task"]
    done = _result(state, "SendMessage", {"message": v1_message("d")})["task"]
    snapshot = answer(state, _call("SubscribeToTask", {"id": working["id"]}))
    assert (
        snapshot.stream and snapshot.payloads[0]["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    )
    assert _error(state, "SubscribeToTask", {"id": done["id"]})["code"] == -32004
    assert _error(state, "tasks/cancel", {"id": done["id"]})["code"] == -32002
    assert _result(state, "tasks/cancel", {"id": working["id"]})["status"]["state"] == "canceled"
    assert _error(state, "CancelTask", {"id": working["id"]})["code"] == -32002
    assert _error(state, "GetTask", {"id": "missing"})["code"] == -32001


def test_streaming_methods_are_refused_when_the_agent_does_not_stream() -> None:
    state = _agent(streaming=False, responses=[{"text": "a"}])
    reply = answer(state, _call("SendStreamingMessage", {"message": v1_message("x")}))
    assert reply.stream and reply.payloads[0]["error"]["code"] == -32004
    assert _texts(state, 1) == ["a"]


def test_list_tasks_pages_newest_first_and_filters() -> None:
    state = _agent(responses=[{"task": {"states": ["working"]}}], terminal_policy="repeat_last_response")
    ids = [_result(state, "SendMessage", {"message": v1_message(str(n))})["task"]["id"] for n in range(5)]
    _result(state, "CancelTask", {"id": ids[1]})  # a change moves it to the front
    first = _result(state, "ListTasks", {"pageSize": 2})
    assert [task["id"] for task in first["tasks"]] == [ids[1], ids[4]]
    assert first["totalSize"] == 5 and first["pageSize"] == 2 and "history" in first["tasks"][0]
    second = _result(state, "ListTasks", {"pageSize": 2, "pageToken": first["nextPageToken"]})
    third = _result(state, "ListTasks", {"pageSize": 2, "pageToken": second["nextPageToken"]})
    assert [task["id"] for task in second["tasks"] + third["tasks"]] == [ids[3], ids[2], ids[0]]
    assert "nextPageToken" not in third
    canceled = _result(state, "ListTasks", {"status": "TASK_STATE_CANCELED"})
    assert [task["id"] for task in canceled["tasks"]] == [ids[1]]
    assert _error(state, "ListTasks", {"pageSize": 101})["code"] == -32602
    assert _error(state, "ListTasks", {"pageToken": "not-a-token"})["code"] == -32602
    assert _error(state, "ListTasks", {"status": "done"})["code"] == -32602


def test_the_task_store_evicts_the_oldest_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "_TASKS", 3)
    state = _agent(responses=[{"task": {"states": ["working"]}}], terminal_policy="repeat_last_response")
    ids = [_result(state, "SendMessage", {"message": v1_message(str(n))})["task"]["id"] for n in range(5)]
    assert _error(state, "GetTask", {"id": ids[1]})["code"] == -32001
    assert _result(state, "GetTask", {"id": ids[2]})["id"] == ids[2]
    assert state.evicted == 2
    # And by the bytes their messages hold: a large message pushes the older tasks out.
    monkeypatch.setattr(state_module, "TASK_BYTES", 1000)
    answer(state, _call("SendMessage", {"message": v1_message("big")}, size=950))
    assert len(state.tasks_locked()) == 1 and state.retained_bytes == 950
    # A new task that would hold more than all tasks may is refused, and nothing goes for it.
    error = _error(state, "SendMessage", {"message": v1_message("bigger")}, size=1001)
    assert "the new task would hold 1001 bytes" in error["message"]
    assert len(state.tasks_locked()) == 1 and state.retained_bytes == 950


def test_one_task_never_holds_more_than_the_task_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The task being answered used to be exempt from eviction, so one task kept 64 messages of any size:
    now a message that would take it over the limit is refused, consuming nothing."""
    monkeypatch.setattr(state_module, "TASK_BYTES", 1000)
    interrupted = {"task": {"states": ["input-required"]}}
    state = _agent(responses=[interrupted, interrupted, interrupted, {"text": "after"}])
    task = _sent(state, {"message": v1_message("a")}, 400)["task"]
    follow_up = {"message": v1_message("b", taskId=task["id"])}
    _sent(state, follow_up, 400)
    assert state.retained_bytes == 800
    error = _error(state, "SendMessage", follow_up, size=400)
    assert error["code"] == -32602
    assert error["message"].startswith(f"task {task['id']} would hold 1200 bytes")
    assert len(_result(state, "GetTask", {"id": task["id"]})["history"]) == 2
    assert state.retained_bytes == 800
    # Up to the limit exactly, with the response the refused message did not consume.
    _sent(state, follow_up, 200)
    assert state.retained_bytes == 1000 and _texts(state, 1) == ["after"]


def test_artifacts_count_toward_the_task_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task continued again and again gathers every response's artifacts: they count as well."""
    monkeypatch.setattr(state_module, "TASK_BYTES", 1000)
    script = {"task": {"states": ["input-required"], "artifacts": [{"name": "n", "text": "x" * 200}]}}
    state = _agent(responses=[script], terminal_policy="repeat_last_response")
    artifact = state_module.ITEM_BYTES + len("n") + 200
    task = _sent(state, {"message": v1_message("a")}, 100)["task"]
    follow_up = {"message": v1_message("b", taskId=task["id"])}
    _sent(state, follow_up, 100)
    assert state.retained_bytes == 2 * (100 + artifact)
    assert _error(state, "SendMessage", follow_up, size=100)["code"] == -32602  # 3 x 365 > 1000
    assert len(_result(state, "GetTask", {"id": task["id"]})["artifacts"]) == 2


def test_push_configs_count_toward_the_task_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "TASK_BYTES", 1000)
    state = _agent(
        push_notifications=True,
        responses=[{"task": {"states": ["working"]}}],
        terminal_policy="repeat_last_response",
    )
    older, newer = (_sent(state, {"message": v1_message(name)}, 100)["task"] for name in ("older", "newer"))
    url = "http://hook/" + "x" * 338  # each config: 416 bytes (64, its id, its url)

    def config(config_id: str, target: str = url) -> dict[str, Any]:
        return {"taskId": newer["id"], "id": config_id, "url": target}

    one = state_module.ITEM_BYTES + 2 + len(url)  # id, url
    _result(state, "CreateTaskPushNotificationConfig", config("c1"))
    assert state.retained_bytes == 200 + one
    # A second one takes the agent over its bytes: the older task goes, not the one being changed.
    _result(state, "CreateTaskPushNotificationConfig", config("c2"))
    assert _error(state, "GetTask", {"id": older["id"]})["code"] == -32001 and state.evicted == 1
    assert state.retained_bytes == 100 + 2 * one
    # A third would make the task itself too big: refused, nothing stored.
    assert _error(state, "CreateTaskPushNotificationConfig", config("c3"))["code"] == -32602
    listed = _result(state, "ListTaskPushNotificationConfigs", {"taskId": newer["id"]})["configs"]
    assert [item["id"] for item in listed] == ["c1", "c2"]
    # Replacing one counts the difference; deleting one gives its bytes back.
    _result(state, "CreateTaskPushNotificationConfig", config("c1", "http://short"))
    assert state.retained_bytes == 100 + one + state_module.ITEM_BYTES + 2 + len("http://short")
    _result(state, "DeleteTaskPushNotificationConfig", {"taskId": newer["id"], "id": "c2"})
    assert state.retained_bytes == 100 + state_module.ITEM_BYTES + 2 + len("http://short")


def test_the_byte_count_is_what_the_tasks_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random sends, continuations and push configurations (some refused, some evicting): the agent's
    count always equals what its tasks hold (recounted from them), within every limit."""
    monkeypatch.setattr(state_module, "TASK_BYTES", 8000)
    monkeypatch.setattr(state_module, "_TASKS", 8)
    monkeypatch.setattr(state_module, "HISTORY_PER_TASK", 5)
    script = {"task": {"states": ["input-required"], "artifacts": [{"text": "a" * 100}]}}
    state = _agent(push_notifications=True, responses=[script, {"text": "reply"}], terminal_policy="restart")
    random = Random(7)
    ids: list[str] = []
    outcomes: Counter[Any] = Counter()
    for _ in range(800):
        roll, size = random.random(), random.randint(50, 2500)
        live = [task.id for task in state.tasks_locked()]
        target = random.choice(live if live and random.random() < 0.9 else ids or ["task-none"])
        if roll < 0.3:
            method, params = "SendMessage", {"message": v1_message("new")}
        elif roll < 0.7:
            method, params = "SendMessage", {"message": v1_message("more", taskId=target)}
        elif roll < 0.9:
            config_id, url = f"c{size % 20}", "u" * random.randint(1, 900)
            method, params = (
                "CreateTaskPushNotificationConfig",
                {"taskId": target, "id": config_id, "url": url},
            )
        else:
            method, params = "DeleteTaskPushNotificationConfig", {"taskId": target, "id": f"c{size % 20}"}
        payload = answer(state, _call(method, params, size)).payloads[0]
        outcomes[payload["error"]["code"] if "error" in payload else "ok"] += 1
        result = payload.get("result")
        if isinstance(result, dict) and "task" in result:
            ids.append(result["task"]["id"])
        tasks = state.tasks_locked()
        recounted = sum(
            sum(task.history_bytes)
            + len(task.artifacts) * (state_module.ITEM_BYTES + 100)
            + sum(state_module.push_bytes(config) for config in task.push_configs.values())
            for task in tasks
        )
        assert state.retained_bytes == recounted == sum(task.retained for task in tasks)
        assert state.retained_bytes <= 8000 and len(tasks) <= 8
        assert all(len(task.history) == len(task.history_bytes) <= 5 for task in tasks)
    # Every path was taken: answers, refusals for size, unknown (evicted) tasks, evictions.
    assert outcomes["ok"] > 300 and outcomes[-32602] > 20 and outcomes[-32001] > 0 and state.evicted > 20


_UNICODE_DIGITS = ["²", "٣", "\uff11", "-²", "1²", "٣٣"]  # \uff11: a full-width 1


@pytest.mark.parametrize("digits", _UNICODE_DIGITS)
def test_only_ascii_digits_spell_a_number(digits: str) -> None:
    """``"²".isdigit()`` is true but ``int("²")`` raises (a 500 once), and ``int("٣")`` reads 3."""
    state = _agent(responses=[{"task": {"states": ["working"]}}, {"text": "unused"}])
    task = _result(state, "SendMessage", {"message": v1_message("x")})["task"]
    for method, params in [
        ("GetTask", {"id": task["id"], "historyLength": digits}),
        ("tasks/get", {"id": task["id"], "historyLength": digits}),
        ("ListTasks", {"historyLength": digits}),
        ("ListTasks", {"pageToken": digits}),
        ("ListTasks", {"pageSize": digits}),
        ("ListTasks", {"statusTimestampAfter": f"2026-01-0{digits}T00:00:00Z"}),
        ("SendMessage", {"message": v1_message("y"), "configuration": {"historyLength": digits}}),
        ("message/send", {"message": v03_message("y"), "configuration": {"historyLength": digits}}),
    ]:
        assert _error(state, method, params)["code"] == -32602, (method, params)
    assert _texts(state, 1) == ["unused"]
    # ASCII digits still spell numbers (ProtoJSON may send an integer as a string).
    assert len(_result(state, "GetTask", {"id": task["id"], "historyLength": "1"})["history"]) == 1
    assert _result(state, "ListTasks", {"pageSize": "1"})["pageSize"] == 1


def test_list_tasks_takes_a_page_size_of_1_to_100() -> None:
    state = _agent()
    for size in (0, "0", -1, 101):
        assert _error(state, "ListTasks", {"pageSize": size})["code"] == -32602, size
    assert _result(state, "ListTasks", {"pageSize": 100})["pageSize"] == 100
    assert _result(state, "ListTasks", {})["pageSize"] == 50


def test_push_configs_need_the_capability_and_are_bounded() -> None:
    refusing = _agent(responses=[{"task": {"states": ["working"]}}])
    task = _result(refusing, "SendMessage", {"message": v1_message("x")})["task"]
    assert (
        _error(refusing, "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": "http://x"})[
            "code"
        ]
        == -32003
    )
    state = _agent(push_notifications=True, responses=[{"task": {"states": ["working"]}}])
    task = _result(state, "SendMessage", {"message": v1_message("x")})["task"]
    for number in range(state_module.PUSH_CONFIGS_PER_TASK):
        params = {"taskId": task["id"], "id": f"c{number}", "url": "http://hook", "token": "t"}
        assert _result(state, "CreateTaskPushNotificationConfig", params)["id"] == f"c{number}"
    extra = {"taskId": task["id"], "id": "one-more", "url": "http://hook"}
    assert _error(state, "CreateTaskPushNotificationConfig", extra)["code"] == -32602
    listed = _result(state, "tasks/pushNotificationConfig/list", {"id": task["id"]})
    assert (
        len(listed) == state_module.PUSH_CONFIGS_PER_TASK
        and listed[0]["pushNotificationConfig"]["token"] == "t"
    )
    assert _result(state, "DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": "c0"}) is None
    missing = {"taskId": task["id"], "id": "c0"}
    assert _error(state, "GetTaskPushNotificationConfig", missing)["code"] == -32001


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"message": "hi"},
        {"message": {"messageId": "m", "parts": "text"}},
        {"message": {"messageId": "m", "parts": [{"text": 3}]}},
        {"message": {"messageId": "m", "parts": [{"nothing": True}]}},
        {"message": {"messageId": "m", "role": "ROLE_BOSS", "parts": []}},
        {"message": {"messageId": "m", "role": {}, "parts": []}},  # found by tests/fuzz: unhashable
        {"message": {"messageId": "m", "role": True, "parts": []}},
        {"message": {"parts": []}},
        {"message": v1_message("x"), "configuration": {"historyLength": -1}},
        {"message": v1_message("x"), "configuration": {"returnImmediately": "yes"}},
        {"message": v1_message("x"), "configuration": []},
    ],
)
def test_bad_send_params_are_invalid_params(params: dict[str, Any]) -> None:
    state = _agent(responses=[{"text": "unused"}])
    error = _error(state, "SendMessage", params)
    assert error["code"] == -32602 and error["message"]
    assert _texts(state, 1) == ["unused"]
