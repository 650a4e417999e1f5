"""What a scripted A2A agent answers to one JSON-RPC request (docs/a2a.md): sans-IO, the server
(``llmts/server/peers/a2a_http.py``) reads the body, waits the delay and writes the answer.

The wire is chosen by the method's name (the two sets do not overlap): ``SendMessage``... speak 1.0,
``message/send``... speak 0.3; both reach the same tasks. A send consumes the agent's next scripted
response: ``text`` answers with a message, ``task`` creates (or, for a message naming an interrupted
task, continues) a task that moves through its ``states`` with its ``artifacts``, ``error`` is the
JSON-RPC error. A send answers with the task in its last state (or, non-blocking, as it started); a
streaming send with the task as it started, a status update per state and an artifact update per
artifact, the last status update ending the stream. Everything is decided and rendered under the agent's
lock; a request the agent refuses (unknown task, bad params, streaming disabled, a task that would hold
more than the agent's task bytes) consumes nothing and changes nothing.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmts.errors import MemoryBudgetExceeded
from llmts.peers.a2a.card import extended_card_error
from llmts.peers.a2a.model import Artifact, Msg, Part, PushConfig, Status, TaskRecord
from llmts.peers.a2a.state import (
    MESSAGE_RESIDENT_BYTES,
    PUSH_CONFIGS_PER_TASK,
    A2aAgentState,
    message_resident,
)
from llmts.peers.a2a.wire import (
    SendOptions,
    Wire,
    bad_params,
    optional_bool,
    optional_int,
    optional_str,
    parse_digits,
    required_str,
)
from llmts.peers.a2a.wire_v03 import WIRE_V03
from llmts.peers.a2a.wire_v1 import WIRE_V1
from llmts.peers.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    JsonRpcError,
    RequestId,
    error_response,
    result_response,
)
from llmts.schema.a2a import A2aArtifact, A2aResponse
from llmts.schema.faults import StreamDelivery

__all__ = [
    "TASK_NOT_CANCELABLE",
    "TASK_NOT_FOUND",
    "UNSUPPORTED_OPERATION",
    "A2aAnswer",
    "A2aCall",
    "answer",
    "is_method",
]

# The A2A error codes (the same in both wires).
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004

# ListTasks paging, as the 1.x SDK's server does it.
_PAGE_SIZE = 50
_MAX_PAGE_SIZE = 100
_EXHAUSTED = "llm_test_server_scenario_exhausted"
_MEMORY_EXHAUSTED = MemoryBudgetExceeded.code


@dataclass(frozen=True, slots=True)
class A2aCall:
    """One JSON-RPC request to an agent: ``ids(domain)`` makes this request's wire ids (seeded under
    ``determinism``), ``epoch`` is its time (the fixed instant under ``fixed_utc``), ``size`` the bytes of
    its body (what a stored message may hold) and ``body`` the body itself, from which a stored message's
    charge to the memory budget is estimated (``message_resident``; none given: ``size``)."""

    method: str
    id: RequestId
    params: dict[str, Any]
    ids: Callable[[str], str]
    epoch: float
    size: int = 0
    body: bytes = b""

    def received_sizes(self) -> tuple[int, int]:
        """The counted and the resident size of the message this request brings (computed when a message
        is to be stored, not for every request)."""
        return self.size, message_resident(self.body) if self.body else self.size


@dataclass(slots=True)
class A2aAnswer:
    """The JSON-RPC responses to write: one JSON body, or the events of an SSE stream (``stream``). An
    error answer names its ``error_code`` for the journal; a scripted answer its ``response_index``."""

    payloads: list[dict[str, Any]]
    stream: bool
    delay_ms: int = 0
    plan: StreamDelivery | None = None
    error_code: str | None = None
    response_index: int | None = None


class _Refused(JsonRpcError):
    """An error answer with its own journal ``error_code`` (else the JSON-RPC code)."""

    def __init__(self, code: int, message: str, data: Any = None, journal_code: str | None = None) -> None:
        super().__init__(code, message, data)
        self.journal_code = journal_code


Handler = Callable[[A2aAgentState, Wire, A2aCall, bool], A2aAnswer]


def is_method(method: str) -> bool:
    return method in _METHODS


def answer(state: A2aAgentState, call: A2aCall) -> A2aAnswer:
    """The answer to ``call``: never raises for anything a client sends."""
    entry = _METHODS.get(call.method)
    if entry is None:
        shown = call.method if len(call.method) <= 64 else call.method[:64] + "..."
        return _error(call, False, JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {shown}"))
    wire, handler, streaming = entry
    try:
        if streaming and not state.agent.streaming:
            raise JsonRpcError(UNSUPPORTED_OPERATION, "Streaming is not supported by the agent")
        with state.lock:
            return handler(state, wire, call, streaming)
    except JsonRpcError as error:
        return _error(call, streaming, error)


def _error(call: A2aCall, stream: bool, error: JsonRpcError) -> A2aAnswer:
    journal_code = error.journal_code if isinstance(error, _Refused) else None
    payload = error_response(call.id, error.code, error.message, error.data)
    return A2aAnswer([payload], stream, error_code=journal_code or str(error.code))


def _timestamp(epoch: float) -> str:
    # RFC 3339 in UTC with a ``Z``: the 1.x SDK's protobuf Timestamp needs the ``T`` and the zone.
    moment = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _parse_time(value: str) -> float:
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise bad_params("statusTimestampAfter must be an RFC 3339 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def _task_or_fail(state: A2aAgentState, task_id: str) -> TaskRecord:
    task = state.task_locked(task_id)
    if task is None:
        raise JsonRpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
    return task


def _artifact(index: int, scripted: A2aArtifact) -> Artifact:
    part = Part("text", text=scripted.text) if scripted.text is not None else Part("data", data=scripted.data)
    return Artifact(f"artifact-{index}", (part,), scripted.name, scripted.description)


# --- send ------------------------------------------------------------------------------------------------


def _send(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    message, options = wire.send_params(call.params)
    agent = state.agent
    task: TaskRecord | None = None
    if message.task_id is not None:
        task = state.task_locked(message.task_id)
        if task is None:
            raise JsonRpcError(TASK_NOT_FOUND, f"Task {message.task_id} was specified but does not exist")
        if task.terminal:
            state_name = wire.state_name(task.status.state)
            raise JsonRpcError(UNSUPPORTED_OPERATION, f"Task {task.id} is in terminal state: {state_name}")
        if message.context_id is not None and message.context_id != task.context_id:
            raise bad_params(f"message.contextId {message.context_id} is not the context of task {task.id}")
    if options.push is not None:
        _push_allowed(state)
        if task is not None:
            _check_push_room(task, options.push.id or task.id)
    picked = state.peek_response_locked()
    if picked is None:
        count = len(agent.responses)
        raise _Refused(
            INTERNAL_ERROR,
            f"llmts: A2A agent {agent.name!r} has no scripted response left "
            f"({count} configured, terminal_policy {agent.terminal_policy})",
            {"code": _EXHAUSTED},
            _EXHAUSTED,
        )
    index, response = picked
    if response.error is not None:
        state.consume_locked(index)
        error = JsonRpcError(response.error.code, response.error.message, response.error.data)
        return _scripted(_error(call, streaming, error), response, index)
    context_id = task.context_id if task is not None else message.context_id or "ctx-" + call.ids("context")
    if response.text is not None:
        received = None
        if task is not None:  # both messages join the task's history
            received = call.received_sizes()
            reply = (len(response.text), len(response.text) + MESSAGE_RESIDENT_BYTES)
            _check_room(state, task, False, (received, reply))
        state.consume_locked(index)
        result = _reply_message(state, wire, call, received, message, task, context_id, response.text)
        payloads = [result_response(call.id, wire.send_result(result, False))]
        return _scripted(A2aAnswer(payloads, streaming), response, index)
    script = response.task
    assert script is not None
    created = task is None
    if task is None:
        start = Status(script.states[0], _timestamp(call.epoch))
        task = TaskRecord("task-" + call.ids("task"), context_id, start, updated=call.epoch)
    push = options.push
    if push is not None:
        push = dataclasses.replace(push, id=push.id or task.id)
    received = call.received_sizes()
    _check_room(state, task, created, (received,), state.artifact_bytes_locked(index), push)
    state.consume_locked(index)
    events = _run_task(state, wire, call, received, message, task, created, index, options, push, streaming)
    payloads = [result_response(call.id, event) for event in events]
    return _scripted(A2aAnswer(payloads, streaming), response, index)


def _check_room(
    state: A2aAgentState,
    task: TaskRecord,
    created: bool,
    messages: tuple[tuple[int, int], ...] = (),
    artifacts: int = 0,
    push: PushConfig | None = None,
) -> None:
    """Refuse, before anything changes, a request that would make one task hold more than the agent's
    tasks may hold in all (its history, artifacts and push configurations; docs/a2a.md "Limits"), or
    grow by more resident bytes than the process memory budget has room for
    (``A2aAgentState.task_change_locked``)."""
    size, growth = state.task_change_locked(task, messages, artifacts, push)
    limit = state.task_byte_limit
    which = "the new task" if created else f"task {task.id}"
    if size > limit:
        raise bad_params(
            f"{which} would hold {size} bytes of messages, artifacts and push notification configs; a "
            f"task holds at most {limit}"
        )
    if not state.fits_locked(growth):
        raise _Refused(
            INTERNAL_ERROR,
            f"llmts: {which} would grow by about {growth} bytes in memory, more than the server's memory "
            "budget (--max-memory) has room for; delete or reset sessions",
            {"code": _MEMORY_EXHAUSTED},
            _MEMORY_EXHAUSTED,
        )


def _scripted(answer: A2aAnswer, response: A2aResponse, index: int) -> A2aAnswer:
    answer.delay_ms = response.delay_ms
    answer.plan = response.stream_delivery
    answer.response_index = index
    return answer


def _reply_message(
    state: A2aAgentState,
    wire: Wire,
    call: A2aCall,
    received_sizes: tuple[int, int] | None,
    message: Msg,
    task: TaskRecord | None,
    context_id: str,
    text: str,
) -> dict[str, Any]:
    """The agent's reply; within a task (``received_sizes``: the sizes of the message received) both
    messages join its history."""
    task_id = task.id if task is not None else None
    reply = Msg("msg-" + call.ids("message"), "agent", (Part("text", text=text),), context_id, task_id)
    if task is not None and received_sizes is not None:  # a reply within an interrupted task
        received = dataclasses.replace(message, context_id=context_id, task_id=task.id)
        state.remember_locked(task, received, *received_sizes)
        state.remember_locked(task, reply, len(text), len(text) + MESSAGE_RESIDENT_BYTES)
        state.touch_locked(task)
    return wire.message(reply)


def _run_task(
    state: A2aAgentState,
    wire: Wire,
    call: A2aCall,
    received_sizes: tuple[int, int],
    message: Msg,
    task: TaskRecord,
    created: bool,
    index: int,
    options: SendOptions,
    push: PushConfig | None,
    streaming: bool,
) -> list[dict[str, Any]]:
    script = state.agent.responses[index].task
    assert script is not None
    timestamp = _timestamp(call.epoch)
    states = script.states
    start = Status(states[0], timestamp)
    context_id = task.context_id
    final_message = None
    if script.message is not None:
        parts = (Part("text", text=script.message),)
        final_message = Msg("msg-" + call.ids("status"), "agent", parts, context_id, task.id)
    final = Status(states[-1], timestamp, final_message)
    before = len(task.artifacts)
    added = [_artifact(before + number, item) for number, item in enumerate(script.artifacts, 1)]
    # Commit first: what the client then sees of the answer (a fault may cut it) never changes the task.
    state.add_artifacts_locked(task, added, state.artifact_bytes_locked(index))
    task.status = final
    task.updated = call.epoch
    received = dataclasses.replace(message, context_id=context_id, task_id=task.id)
    state.remember_locked(task, received, *received_sizes)
    if push is not None:
        state.set_push_locked(task, push)
    if created:
        state.add_locked(task)
    else:
        state.touch_locked(task)
    history = options.history_length
    if len(states) == 1 or (not streaming and options.blocking):
        return [wire.send_result(wire.task(task.view(history_length=history)), True)]
    started = wire.send_result(
        wire.task(task.view(history_length=history, status=start, artifact_count=before)), True
    )
    if not streaming:  # non-blocking: the task as it started; get shows where it went
        return [started]
    events = [started]
    events.extend(wire.status_event(task.id, context_id, Status(s, timestamp), False) for s in states[1:-1])
    events.extend(wire.artifact_event(task.id, context_id, artifact) for artifact in added)
    events.append(wire.status_event(task.id, context_id, final, True))
    return events


# --- tasks -----------------------------------------------------------------------------------------------


def _get(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    params = call.params
    task_id = required_str(params, "id", "")
    history = optional_int(params, "historyLength", "")
    task = _task_or_fail(state, task_id)
    return A2aAnswer([result_response(call.id, wire.task(task.view(history_length=history)))], False)


def _list(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    params = call.params
    context_id = optional_str(params, "contextId", "")
    status = params.get("status")
    wanted = wire.parse_state(status) if status not in (None, "", "TASK_STATE_UNSPECIFIED") else None
    page_size = optional_int(params, "pageSize", "", minimum=1)
    if page_size is None:
        page_size = _PAGE_SIZE
    elif page_size > _MAX_PAGE_SIZE:
        raise bad_params(f"maximum page size is {_MAX_PAGE_SIZE}")
    token = optional_str(params, "pageToken", "")
    history = optional_int(params, "historyLength", "")
    include_artifacts = optional_bool(params, "includeArtifacts", "") is True
    after = optional_str(params, "statusTimestampAfter", "")
    since = _parse_time(after) if after else None
    tasks = [
        task
        for task in state.tasks_locked()
        if (context_id is None or task.context_id == context_id)
        and (wanted is None or task.status.state == wanted)
        and (since is None or task.updated >= since)
    ]
    tasks.sort(key=lambda task: task.order, reverse=True)
    total = len(tasks)
    if token:
        position = parse_digits(token)
        if position is None:
            raise bad_params(f"Invalid page token: {token[:64]}")
        tasks = [task for task in tasks if task.order < position]
    page = tasks[:page_size]
    result: dict[str, Any] = {
        "tasks": [wire.task(task.view(history_length=history, artifacts=include_artifacts)) for task in page],
        "pageSize": page_size,
        "totalSize": total,
    }
    if len(tasks) > page_size:
        result["nextPageToken"] = str(page[-1].order)
    return A2aAnswer([result_response(call.id, result)], False)


def _cancel(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    task = _task_or_fail(state, required_str(call.params, "id", ""))
    if task.terminal:
        state_name = wire.state_name(task.status.state)
        raise JsonRpcError(TASK_NOT_CANCELABLE, f"Task cannot be canceled - current state: {state_name}")
    task.status = Status("canceled", _timestamp(call.epoch))
    task.updated = call.epoch
    state.touch_locked(task)
    return A2aAnswer([result_response(call.id, wire.task(task.view()))], False)


def _subscribe(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    """The task as it is now, then the end of the stream: a scripted task does not change by itself
    (a follow-up message or a cancel changes it, seen by the next get or subscribe)."""
    task = _task_or_fail(state, required_str(call.params, "id", ""))
    if task.terminal:
        state_name = wire.state_name(task.status.state)
        raise JsonRpcError(UNSUPPORTED_OPERATION, f"Task {task.id} is in terminal state: {state_name}")
    return A2aAnswer([result_response(call.id, wire.send_result(wire.task(task.view()), True))], True)


# --- push-notification configurations ---------------------------------------------------------------------


def _push_allowed(state: A2aAgentState) -> None:
    if not state.agent.push_notifications:
        raise JsonRpcError(PUSH_NOT_SUPPORTED, "Push notifications are not supported by the agent")


def _check_push_room(task: TaskRecord, config_id: str) -> None:
    configs = task.push_configs
    if config_id not in configs and len(configs) >= PUSH_CONFIGS_PER_TASK:
        raise bad_params(f"a task keeps at most {PUSH_CONFIGS_PER_TASK} push notification configs")


def _push_set(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    _push_allowed(state)
    task_id, config = wire.push_set(call.params)
    task = _task_or_fail(state, task_id)
    _check_push_room(task, config.id)
    _check_room(state, task, False, push=config)
    state.set_push_locked(task, config)
    return A2aAnswer([result_response(call.id, wire.push_config(task.id, config))], False)


def _push_get(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    _push_allowed(state)
    task_id, config_id = wire.push_ref(call.params)
    task = _task_or_fail(state, task_id)
    config = task.push_configs.get(config_id or task.id)
    if config is None:
        raise JsonRpcError(
            TASK_NOT_FOUND, f"No push notification config {config_id or task.id} for task {task.id}"
        )
    return A2aAnswer([result_response(call.id, wire.push_config(task.id, config))], False)


def _push_list(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    _push_allowed(state)
    task = _task_or_fail(state, wire.push_task(call.params))
    configs = list(task.push_configs.values())
    return A2aAnswer([result_response(call.id, wire.push_list(task.id, configs))], False)


def _push_delete(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    _push_allowed(state)
    task_id, config_id = wire.push_ref(call.params)
    task = _task_or_fail(state, task_id)
    state.delete_push_locked(task, config_id or task.id)
    return A2aAnswer([result_response(call.id, None)], False)


def _extended_card(state: A2aAgentState, wire: Wire, call: A2aCall, streaming: bool) -> A2aAnswer:
    code, message = extended_card_error()
    raise JsonRpcError(code, message)


# method -> (wire, handler, answered as an SSE stream)
_METHODS: dict[str, tuple[Wire, Handler, bool]] = {
    "SendMessage": (WIRE_V1, _send, False),
    "SendStreamingMessage": (WIRE_V1, _send, True),
    "GetTask": (WIRE_V1, _get, False),
    "ListTasks": (WIRE_V1, _list, False),
    "CancelTask": (WIRE_V1, _cancel, False),
    "SubscribeToTask": (WIRE_V1, _subscribe, True),
    "CreateTaskPushNotificationConfig": (WIRE_V1, _push_set, False),
    "GetTaskPushNotificationConfig": (WIRE_V1, _push_get, False),
    "ListTaskPushNotificationConfigs": (WIRE_V1, _push_list, False),
    "DeleteTaskPushNotificationConfig": (WIRE_V1, _push_delete, False),
    "GetExtendedAgentCard": (WIRE_V1, _extended_card, False),
    "message/send": (WIRE_V03, _send, False),
    "message/stream": (WIRE_V03, _send, True),
    "tasks/get": (WIRE_V03, _get, False),
    "tasks/cancel": (WIRE_V03, _cancel, False),
    "tasks/resubscribe": (WIRE_V03, _subscribe, True),
    "tasks/pushNotificationConfig/set": (WIRE_V03, _push_set, False),
    "tasks/pushNotificationConfig/get": (WIRE_V03, _push_get, False),
    "tasks/pushNotificationConfig/list": (WIRE_V03, _push_list, False),
    "tasks/pushNotificationConfig/delete": (WIRE_V03, _push_delete, False),
    "agent/getAuthenticatedExtendedCard": (WIRE_V03, _extended_card, False),
}
