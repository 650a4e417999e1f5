"""The official ``a2a-sdk`` 1.x client against a real server (docs/a2a.md): card resolution, messages
and tasks (blocking, polling, streamed), get, list, cancel, subscribe, continuations, push-notification
configurations, scripted and protocol errors, terminal policies, delays, stream faults with their
delivery evidence, and the 1.x client speaking the 0.3 wire through its compat transport."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.peers.a2a.a2a_helpers import needs_sdk1

pytestmark = [pytest.mark.sdk, needs_sdk1]


def _run(body: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(body())


def _message(text: str, **fields: Any) -> Any:
    from a2a.types import Message, Part, Role, SendMessageRequest

    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)], **fields)
    return SendMessageRequest(message=message)


async def _collect(client: Any, text: str, **fields: Any) -> list[Any]:
    return [event async for event in client.send_message(_message(text, **fields))]


def _state(value: int) -> str:
    from a2a.types import TaskState

    return TaskState.Name(value).removeprefix("TASK_STATE_")


_REPORT = {
    "states": ["submitted", "working", "completed"],
    "artifacts": [{"name": "report", "text": "all good"}, {"name": "numbers", "data": {"k": 2}}],
    "message": "done",
}


def test_the_session_helper_connects_and_the_client_picks_the_10_wire(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().a2a_agent("helper").skill("search", "Search").text("hello back").build()
    )

    async def body() -> list[Any]:
        async with await llmts_session.a2a_client("helper") as client:
            return await _collect(client, "hi")

    (event,) = _run(body)
    assert event.WhichOneof("payload") == "message"
    assert event.message.role == 2 and [part.text for part in event.message.parts] == ["hello back"]
    assert event.message.context_id.startswith("ctx-")
    assert [e["operation"] for e in llmts_session.requests(a2a_agent="helper", order="asc")] == [
        "agent_card",
        "SendStreamingMessage",
    ]


def test_a_task_without_streaming_arrives_in_its_last_state(llmts_session: SessionClient) -> None:
    llmts_session.configure({"a2a_agents": [{"name": "helper", "responses": [{"task": _REPORT}]}]})

    async def body() -> list[Any]:
        async with await llmts_session.a2a_client("helper", streaming=False) as client:
            return await _collect(client, "report please")

    (event,) = _run(body)
    task = event.task
    assert _state(task.status.state) == "COMPLETED" and task.status.message.parts[0].text == "done"
    assert task.status.timestamp.seconds > 0 and task.id.startswith("task-")
    assert [(a.artifact_id, a.name) for a in task.artifacts] == [
        ("artifact-1", "report"),
        ("artifact-2", "numbers"),
    ]
    assert task.artifacts[0].parts[0].text == "all good"
    assert task.artifacts[1].parts[0].data.struct_value["k"] == 2
    assert [m.parts[0].text for m in task.history] == ["report please"] and task.history[0].task_id == task.id
    assert llmts_session.requests(operation="SendMessage")[0]["response_index"] == 0


def test_a_streamed_task_moves_through_its_states(llmts_session: SessionClient) -> None:
    llmts_session.configure({"a2a_agents": [{"name": "helper", "responses": [{"task": _REPORT}]}]})

    async def body() -> list[Any]:
        async with await llmts_session.a2a_client("helper") as client:
            return await _collect(client, "go")

    events = _run(body)
    assert [e.WhichOneof("payload") for e in events] == [
        "task",
        "status_update",
        "artifact_update",
        "artifact_update",
        "status_update",
    ]
    assert _state(events[0].task.status.state) == "SUBMITTED"
    assert [_state(events[i].status_update.status.state) for i in (1, 4)] == ["WORKING", "COMPLETED"]
    assert events[3].artifact_update.artifact.name == "numbers"
    task_id = events[0].task.id
    assert all(e.status_update.task_id == task_id for e in (events[1], events[4]))
    (entry,) = llmts_session.requests(operation="SendStreamingMessage")
    assert entry["streaming"] and entry["terminal_marker_observed"] and entry["emitted_content_frames"] == 4


def test_get_list_cancel_and_subscribe(llmts_session: SessionClient) -> None:
    from a2a.types import (
        CancelTaskRequest,
        GetTaskRequest,
        ListTasksRequest,
        SubscribeToTaskRequest,
        TaskState,
    )
    from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError

    llmts_session.configure(
        ConfigBuilder()
        .a2a_agent("helper")
        .task("submitted", "working")
        .task("completed", message="ok")
        .build()
    )

    async def body() -> dict[str, Any]:
        async with await llmts_session.a2a_client("helper") as client:
            (working,) = [e.task for e in await _collect(client, "long job") if e.HasField("task")]
            (done,) = await _collect(client, "quick job")
            seen: dict[str, Any] = {"working": working, "done": done.task}
            seen["got"] = await client.get_task(GetTaskRequest(id=working.id, history_length=1))
            seen["listed"] = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_WORKING))
            seen["subscribed"] = [e async for e in client.subscribe(SubscribeToTaskRequest(id=working.id))]
            seen["canceled"] = await client.cancel_task(CancelTaskRequest(id=working.id))
            for name, call in (
                ("cancel_done", client.cancel_task(CancelTaskRequest(id=done.task.id))),
                ("get_missing", client.get_task(GetTaskRequest(id="task-nope"))),
            ):
                with pytest.raises((TaskNotCancelableError, TaskNotFoundError)) as caught:
                    await call
                seen[name] = caught.value
            with pytest.raises(UnsupportedOperationError) as subscribe_done:
                async for _ in client.subscribe(SubscribeToTaskRequest(id=working.id)):
                    pass
            seen["subscribe_canceled"] = subscribe_done.value
            return seen

    seen = _run(body)
    assert _state(seen["working"].status.state) == "SUBMITTED"
    assert _state(seen["got"].status.state) == "WORKING" and len(seen["got"].history) == 1
    assert [task.id for task in seen["listed"].tasks] == [seen["working"].id] and seen[
        "listed"
    ].total_size == 1
    (snapshot,) = seen["subscribed"]
    assert snapshot.task.id == seen["working"].id and _state(snapshot.task.status.state) == "WORKING"
    assert _state(seen["canceled"].status.state) == "CANCELED"
    assert isinstance(seen["cancel_done"], TaskNotCancelableError)
    assert "TASK_STATE_COMPLETED" in seen["cancel_done"].message
    assert isinstance(seen["get_missing"], TaskNotFoundError)
    assert "terminal state: TASK_STATE_CANCELED" in seen["subscribe_canceled"].message


def test_an_input_required_task_continues_with_the_same_ids(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder()
        .a2a_agent("travel")
        .task("submitted", "input-required", message="Which city?")
        .task("working", "completed", artifacts=[{"name": "booking", "text": "Booked Paris"}])
        .build()
    )

    async def body() -> tuple[list[Any], list[Any]]:
        async with await llmts_session.a2a_client("travel") as client:
            first = await _collect(client, "book a hotel")
            task = first[0].task
            second = await _collect(client, "Paris", task_id=task.id, context_id=task.context_id)
            return first, second

    first, second = _run(body)
    question = first[-1].status_update
    assert (
        _state(question.status.state) == "INPUT_REQUIRED"
        and question.status.message.parts[0].text == "Which city?"
    )
    assert second[0].task.id == first[0].task.id and second[0].task.context_id == first[0].task.context_id
    assert [m.parts[0].text for m in second[0].task.history] == ["book a hotel", "Paris"]
    assert second[-2].artifact_update.artifact.parts[0].text == "Booked Paris"
    assert _state(second[-1].status_update.status.state) == "COMPLETED"


def test_polling_returns_the_task_as_it_started(llmts_session: SessionClient) -> None:
    from a2a.types import GetTaskRequest

    llmts_session.configure({"a2a_agents": [{"name": "helper", "responses": [{"task": _REPORT}]}]})

    async def body() -> tuple[Any, Any]:
        async with await llmts_session.a2a_client("helper", streaming=False, polling=True) as client:
            (event,) = await _collect(client, "async job")
            return event.task, await client.get_task(GetTaskRequest(id=event.task.id))

    started, later = _run(body)
    assert _state(started.status.state) == "SUBMITTED" and not started.artifacts
    assert _state(later.status.state) == "COMPLETED" and len(later.artifacts) == 2


def test_push_notification_configs(llmts_session: SessionClient) -> None:
    from a2a.types import (
        DeleteTaskPushNotificationConfigRequest,
        GetTaskPushNotificationConfigRequest,
        ListTaskPushNotificationConfigsRequest,
        TaskPushNotificationConfig,
    )

    llmts_session.configure(
        ConfigBuilder().a2a_agent("helper", push_notifications=True).task("working").build()
    )

    async def body() -> list[Any]:
        async with await llmts_session.a2a_client("helper") as client:
            (event,) = await _collect(client, "watch this")
            task_id = event.task.id
            config = TaskPushNotificationConfig(
                task_id=task_id, id="hook", url="http://127.0.0.1:9/hook", token="tok"
            )
            created = await client.create_task_push_notification_config(config)
            got = await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task_id, id="hook")
            )
            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task_id)
            )
            await client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="hook")
            )
            empty = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task_id)
            )
            return [created, got, listed, empty]

    created, got, listed, empty = _run(body)
    assert (created.id, created.url, created.token) == ("hook", "http://127.0.0.1:9/hook", "tok")
    assert got == created and list(listed.configs) == [created] and not empty.configs


def test_scripted_errors_and_an_exhausted_script(llmts_session: SessionClient) -> None:
    from a2a.client.errors import A2AClientError
    from a2a.utils.errors import InternalError, TaskNotFoundError

    llmts_session.configure(
        ConfigBuilder()
        .a2a_agent("helper")
        .error(-32001, "Task vanished")
        .error(-32050, "Agent on fire")
        .build()
    )

    async def body() -> list[BaseException]:
        caught: list[BaseException] = []
        async with await llmts_session.a2a_client("helper", streaming=False) as client:
            for _ in range(3):
                try:
                    await _collect(client, "x")
                except Exception as error:  # collected for the assertions below
                    caught.append(error)
        return caught

    known, unknown, exhausted = _run(body)
    assert isinstance(known, TaskNotFoundError) and known.message == "Task vanished"
    assert isinstance(unknown, A2AClientError) and "JSON-RPC Error -32050: Agent on fire" in str(unknown)
    assert isinstance(exhausted, InternalError) and "no scripted response left" in exhausted.message
    codes = [e["error_code"] for e in llmts_session.requests(operation="SendMessage", order="asc")]
    assert codes == ["-32001", "-32050", "llm_test_server_scenario_exhausted"]


@pytest.mark.parametrize(
    ("policy", "expected"), [("repeat_last_response", ["a", "b", "b"]), ("restart", ["a", "b", "a"])]
)
def test_terminal_policies(llmts_session: SessionClient, policy: str, expected: list[str]) -> None:
    llmts_session.configure(
        {
            "a2a_agents": [
                {"name": "helper", "terminal_policy": policy, "responses": [{"text": "a"}, {"text": "b"}]}
            ]
        }
    )

    async def body() -> list[str]:
        async with await llmts_session.a2a_client("helper") as client:
            return [(await _collect(client, "x"))[0].message.parts[0].text for _ in range(3)]

    assert _run(body) == expected


def test_a_delay_holds_the_answer(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().a2a_agent("helper").text("late", delay_ms=400).build())

    async def body() -> float:
        async with await llmts_session.a2a_client("helper") as client:
            started = time.monotonic()
            await _collect(client, "x")
            return time.monotonic() - started

    assert _run(body) >= 0.4
    (entry,) = llmts_session.requests(operation="SendStreamingMessage")
    assert entry["completed_monotonic_seconds"] - entry["started_monotonic_seconds"] >= 0.4


@pytest.mark.parametrize("streaming", [False, True])
def test_a_reset_during_a_delay_reaches_the_client_as_a_json_rpc_error(
    llmts_session: SessionClient, streaming: bool
) -> None:
    """Superseded requests used to get HTTP 409, which the SDK reports as a bare HTTP error."""
    from a2a.utils.errors import InternalError

    llmts_session.configure(ConfigBuilder().a2a_agent("helper").text("late", delay_ms=3000).build())

    async def body() -> BaseException:
        async with await llmts_session.a2a_client("helper", streaming=streaming) as client:
            call = asyncio.ensure_future(_collect(client, "x"))
            while not llmts_session.requests(provider="a2a", operation=_SEND[streaming]):
                await asyncio.sleep(0.02)
            await asyncio.to_thread(llmts_session.reset)
            with pytest.raises(InternalError) as caught:
                await asyncio.wait_for(call, timeout=10)
            return caught.value

    # The SDK maps -32603 to InternalError (it keeps the message, not the data).
    assert "reset, reconfigured or deleted" in str(_run(body))


_SEND = {False: "SendMessage", True: "SendStreamingMessage"}


def _faulted(
    session: SessionClient, plan: dict[str, Any]
) -> tuple[list[Any], BaseException | None, dict[str, Any]]:
    session.configure(
        {"a2a_agents": [{"name": "helper", "responses": [{"task": _REPORT, "stream_delivery": plan}]}]}
    )

    async def body() -> tuple[list[Any], BaseException | None]:
        events: list[Any] = []
        async with await session.a2a_client("helper") as client:
            try:
                async for event in client.send_message(_message("go")):
                    events.append(event)
            except Exception as error:  # what the client saw is the result
                return events, error
        return events, None

    events, error = _run(body)
    (entry,) = session.requests(operation="SendStreamingMessage")
    return events, error, entry


def test_an_early_clean_end_ends_the_stream_after_the_task(llmts_session: SessionClient) -> None:
    events, error, entry = _faulted(llmts_session, {"mode": "early_clean_end", "after_content_frames": 1})
    # The SDK does not notice: its stream simply ends before the task's last state.
    assert error is None and [e.WhichOneof("payload") for e in events] == ["task"]
    assert entry["stream_delivery_applied"] and entry["transport_outcome"] == "early_end"
    assert entry["emitted_content_frames"] == 1 and not entry["terminal_marker_observed"]
    assert entry["success"] is False and entry["response_index"] == 0
    verdict = llmts_session.verify(
        requests=[
            {
                "name": "complete stream",
                "query": {"a2a_agent": "helper", "operation": "SendStreamingMessage"},
                "require_streaming_terminal_marker": True,
            }
        ]
    )
    assert not verdict.passed


@pytest.mark.parametrize(
    ("plan", "outcome", "seen"),
    [
        ({"mode": "abort_connection", "after_content_frames": 2}, "aborted", 2),
        ({"mode": "malformed_frame", "after_content_frames": 1}, "completed", 1),
        ({"mode": "http_error_page", "status": 503}, "completed", 0),
    ],
)
def test_broken_streams_raise_a2a_client_errors(
    llmts_session: SessionClient, plan: dict[str, Any], outcome: str, seen: int
) -> None:
    from a2a.client.errors import A2AClientError

    events, error, entry = _faulted(llmts_session, plan)
    assert isinstance(error, A2AClientError), error
    assert len(events) == seen
    assert (
        entry["stream_delivery_applied"]
        and entry["transport_outcome"] == outcome
        and entry["success"] is False
    )


@pytest.mark.parametrize(
    "plan",
    [
        {"mode": "delay_then_continue", "after_content_frames": 2, "delay_ms": 200},
        {"mode": "slow_drip", "bytes_per_second": 8000},
    ],
)
def test_a_harmless_plan_delivers_everything_later(
    llmts_session: SessionClient, plan: dict[str, Any]
) -> None:
    started = time.monotonic()
    events, error, entry = _faulted(llmts_session, plan)
    assert error is None and len(events) == 5
    assert entry["success"] is True and entry["stream_delivery_applied"] and entry["terminal_marker_observed"]
    assert entry["completed_monotonic_seconds"] - entry["started_monotonic_seconds"] >= 0.15
    assert time.monotonic() - started >= 0.15


def test_the_1x_client_speaks_the_03_wire_through_its_compat_transport(llmts_session: SessionClient) -> None:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import CancelTaskRequest, GetTaskRequest

    llmts_session.configure(ConfigBuilder().a2a_agent("helper").task().task("working").build())

    async def body() -> tuple[list[Any], Any, Any]:
        async with httpx.AsyncClient(timeout=30) as http:
            card = await A2ACardResolver(http, llmts_session.a2a_base_url("helper")).get_agent_card()
            del card.supported_interfaces[0]  # only the 0.3 interface is left
            assert card.supported_interfaces[0].protocol_version == "0.3"
            client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
            events = await _collect(client, "go")
            got = await client.get_task(GetTaskRequest(id=events[0].task.id))
            (working,) = await _collect(client, "wait")
            canceled = await client.cancel_task(CancelTaskRequest(id=working.task.id))
            return events, got, canceled

    events, got, canceled = _run(body)
    assert [e.WhichOneof("payload") for e in events] == ["task", "status_update", "status_update"]
    assert _state(got.status.state) == "COMPLETED" and _state(canceled.status.state) == "CANCELED"
    operations = [e["operation"] for e in llmts_session.requests(order="asc")]
    assert operations == ["agent_card", "message/stream", "tasks/get", "message/stream", "tasks/cancel"]


def test_reset_restarts_the_script_and_forgets_tasks(llmts_session: SessionClient) -> None:
    from a2a.types import GetTaskRequest
    from a2a.utils.errors import TaskNotFoundError

    llmts_session.configure(ConfigBuilder().a2a_agent("helper").task("working").build())

    async def send() -> Any:
        async with await llmts_session.a2a_client("helper") as client:
            return (await _collect(client, "x"))[0].task

    first = _run(send)
    llmts_session.reset()
    second = _run(send)  # the script starts again: its only response answers once more

    async def get_old() -> None:
        async with await llmts_session.a2a_client("helper") as client:
            await client.get_task(GetTaskRequest(id=first.id))

    with pytest.raises(TaskNotFoundError):
        _run(get_old)
    assert second.id != first.id
