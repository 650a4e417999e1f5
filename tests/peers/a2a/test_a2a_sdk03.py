"""The official ``a2a-sdk`` 0.3 client against a real server (docs/a2a.md): it reads the card's ``url``
and speaks the 0.3 wire (``message/send``, ``tasks/get``...), validating every result with its pydantic
models. Runs in the tox factor ``a2a03`` (a2a-sdk 0.3.x cannot be installed beside 1.x); the default
suite checks the same shapes over raw HTTP (test_a2a_wire.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.peers.a2a.a2a_helpers import needs_sdk0

pytestmark = [pytest.mark.sdk, needs_sdk0]

_REPORT = {
    "states": ["submitted", "working", "completed"],
    "artifacts": [{"name": "report", "text": "all good"}, {"name": "numbers", "data": {"k": 2}}],
    "message": "done",
}


def _run(body: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(body())


async def _collect(client: Any, text: str) -> list[Any]:
    from a2a.client import create_text_message_object

    return [event async for event in client.send_message(create_text_message_object(content=text))]


async def _states(client: Any, text: str) -> list[tuple[str, type]]:
    """(task state, update type) as each event arrives: the client updates one aggregated task in place."""
    from a2a.client import create_text_message_object

    return [
        (task.status.state, type(update))
        async for task, update in client.send_message(create_text_message_object(content=text))
    ]


def test_the_03_client_reads_the_card_url_and_gets_a_message(llmts_session: SessionClient) -> None:
    from a2a.types import Message

    llmts_session.configure(ConfigBuilder().a2a_agent("helper").skill("search").text("hello back").build())

    async def body() -> tuple[Any, list[Any]]:
        client = await llmts_session.a2a_client("helper")
        try:
            return await client.get_card(), await _collect(client, "hi")
        finally:
            await client.close()

    card, (event,) = _run(body)
    assert card.url == llmts_session.a2a_base_url("helper") and card.skills[0].id == "search"
    assert isinstance(event, Message) and event.parts[0].root.text == "hello back"
    operations = [e["operation"] for e in llmts_session.requests(a2a_agent="helper", order="asc")]
    assert operations == ["agent_card", "message/stream"]


def test_tasks_blocking_and_streamed(llmts_session: SessionClient) -> None:
    from a2a.types import TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent

    llmts_session.configure(
        {"a2a_agents": [{"name": "helper", "responses": [{"task": _REPORT}, {"task": _REPORT}]}]}
    )

    async def body() -> tuple[list[Any], list[Any]]:
        blocking = await llmts_session.a2a_client("helper", streaming=False)
        streaming = await llmts_session.a2a_client("helper")
        try:
            return await _collect(blocking, "one"), await _states(streaming, "two")
        finally:
            await blocking.close()
            await streaming.close()

    (whole,), streamed = _run(body)
    task, update = whole
    assert update is None and task.status.state == TaskState.completed
    assert task.status.message.parts[0].root.text == "done"
    assert [a.parts[0].root for a in task.artifacts][1].data == {"k": 2}
    assert streamed == [
        (TaskState.submitted, type(None)),
        (TaskState.working, TaskStatusUpdateEvent),
        (TaskState.working, TaskArtifactUpdateEvent),
        (TaskState.working, TaskArtifactUpdateEvent),
        (TaskState.completed, TaskStatusUpdateEvent),
    ]
    (entry,) = llmts_session.requests(operation="message/stream")
    assert entry["terminal_marker_observed"] and entry["emitted_content_frames"] == 4


def test_get_cancel_resubscribe_and_push_configs(llmts_session: SessionClient) -> None:
    from a2a.client.errors import A2AClientJSONRPCError
    from a2a.types import (
        GetTaskPushNotificationConfigParams,
        PushNotificationConfig,
        TaskIdParams,
        TaskPushNotificationConfig,
        TaskQueryParams,
        TaskState,
    )

    llmts_session.configure(
        ConfigBuilder()
        .a2a_agent("helper", push_notifications=True)
        .task("submitted", "working")
        .task("completed")
        .build()
    )

    async def body() -> dict[str, Any]:
        client = await llmts_session.a2a_client("helper")
        seen: dict[str, Any] = {}
        try:
            working = (await _collect(client, "long"))[-1][0]
            done = (await _collect(client, "short"))[-1][0]
            seen["got"] = await client.get_task(TaskQueryParams(id=working.id, history_length=1))
            seen["resubscribed"] = [event async for event in client.resubscribe(TaskIdParams(id=working.id))]
            config = PushNotificationConfig(url="http://127.0.0.1:9/hook", id="hook", token="tok")
            seen["set"] = await client.set_task_callback(
                TaskPushNotificationConfig(task_id=working.id, push_notification_config=config)
            )
            seen["get"] = await client.get_task_callback(
                GetTaskPushNotificationConfigParams(id=working.id, push_notification_config_id="hook")
            )
            seen["canceled"] = await client.cancel_task(TaskIdParams(id=working.id))
            with pytest.raises(A2AClientJSONRPCError) as refused:
                await client.cancel_task(TaskIdParams(id=done.id))
            seen["refused"] = refused.value
        finally:
            await client.close()
        return seen

    seen = _run(body)
    assert seen["got"].status.state == TaskState.working and len(seen["got"].history) == 1
    ((snapshot, update),) = seen["resubscribed"]
    assert snapshot.status.state == TaskState.working and update is None
    assert (
        seen["set"].push_notification_config.id == "hook"
        and seen["get"].push_notification_config.token == "tok"
    )
    assert seen["canceled"].status.state == TaskState.canceled
    assert seen["refused"].error.code == -32002 and "completed" in seen["refused"].error.message


def test_errors_and_a_stream_cut_short(llmts_session: SessionClient) -> None:
    from a2a.client.errors import A2AClientJSONRPCError

    llmts_session.configure(
        ConfigBuilder()
        .a2a_agent("helper")
        .error(-32050, "Agent on fire")
        .task(
            "submitted",
            "working",
            "completed",
            stream_delivery={"mode": "early_clean_end", "after_content_frames": 1},
        )
        .build()
    )

    async def body() -> tuple[BaseException, list[Any]]:
        client = await llmts_session.a2a_client("helper")
        try:
            with pytest.raises(A2AClientJSONRPCError) as caught:
                await _collect(client, "x")
            return caught.value, await _collect(client, "y")
        finally:
            await client.close()

    error, cut = _run(body)
    assert error.error.code == -32050 and error.error.message == "Agent on fire"
    assert len(cut) == 1 and cut[0][0].status.state == "submitted"  # the stream ended after the task
    entries = llmts_session.requests(operation="message/stream", order="asc")
    assert [(e["error_code"], e["transport_outcome"]) for e in entries] == [
        ("-32050", "completed"),
        (None, "early_end"),
    ]


@pytest.mark.parametrize("streaming", [False, True])
def test_a_reset_during_a_delay_reaches_the_client_as_a_json_rpc_error(
    llmts_session: SessionClient, streaming: bool
) -> None:
    """Superseded requests used to get HTTP 409, which the 0.3 client reports as an HTTP error."""
    from a2a.client.errors import A2AClientJSONRPCError

    llmts_session.configure(ConfigBuilder().a2a_agent("helper").text("late", delay_ms=3000).build())
    operation = "message/stream" if streaming else "message/send"

    async def body() -> A2AClientJSONRPCError:
        client = await llmts_session.a2a_client("helper", streaming=streaming)
        try:
            call = asyncio.ensure_future(_collect(client, "x"))
            while not llmts_session.requests(provider="a2a", operation=operation):
                await asyncio.sleep(0.02)
            await asyncio.to_thread(llmts_session.reset)
            with pytest.raises(A2AClientJSONRPCError) as caught:
                await asyncio.wait_for(call, timeout=10)
            return caught.value
        finally:
            await client.close()

    error = _run(body).error
    assert error.code == -32603 and "reset, reconfigured or deleted" in error.message
    assert error.data == {"code": "llm_test_server_request_superseded"}


@pytest.mark.parametrize(
    ("plan", "error_name", "seen", "outcome"),
    [
        ({"mode": "abort_connection", "after_content_frames": 2}, "A2AClientHTTPError", 2, "aborted"),
        ({"mode": "malformed_frame", "after_content_frames": 1}, "A2AClientJSONError", 1, "completed"),
        ({"mode": "http_error_page", "status": 503}, "A2AClientHTTPError", 0, "completed"),
    ],
)
def test_broken_streams_raise_client_errors(
    llmts_session: SessionClient, plan: dict[str, Any], error_name: str, seen: int, outcome: str
) -> None:
    from a2a.client import create_text_message_object, errors

    llmts_session.configure(
        {"a2a_agents": [{"name": "helper", "responses": [{"task": _REPORT, "stream_delivery": plan}]}]}
    )

    async def body() -> tuple[int, BaseException | None]:
        client = await llmts_session.a2a_client("helper")
        events = 0
        try:
            async for _ in client.send_message(create_text_message_object(content="x")):
                events += 1
        except errors.A2AClientError as error:
            return events, error
        finally:
            await client.close()
        return events, None

    events, error = _run(body)
    assert type(error).__name__ == error_name and events == seen
    if isinstance(error, errors.A2AClientHTTPError):
        assert error.status_code == 503  # httpx's network error is reported as 503 too
    (entry,) = llmts_session.requests(operation="message/stream")
    assert (
        entry["stream_delivery_applied"]
        and entry["transport_outcome"] == outcome
        and entry["success"] is False
    )
