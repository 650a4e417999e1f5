"""The A2A 0.3 JSON-RPC wire (``a2a-sdk`` 0.3.x, and 1.x talking to a 0.3 interface: ``message/send``,
``tasks/get``...).

Every object carries its ``kind`` (``task``, ``message``, ``status-update``, ``artifact-update``; ``text``,
``data``, ``file`` on parts), states and roles are lower case (``input-required``, ``agent``), a send result
is the bare task or message, and a status update says whether it is the stream's ``final`` event. The
0.3 client validates every result with pydantic: a task needs ``contextId``, a status update ``final``, a
data part an object.
"""

from __future__ import annotations

from typing import Any

from llmts.peers.a2a.model import Artifact, FileRef, Msg, Part, PushConfig, Status, TaskView
from llmts.peers.a2a.wire import (
    SendOptions,
    bad_params,
    optional_bool,
    optional_int,
    optional_object,
    optional_str,
    required_str,
)

__all__ = ["WIRE_V03", "V03Wire"]

_ROLES = ("user", "agent")
_STATES = (
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
)


def _part(value: Any, where: str) -> Part:
    if not isinstance(value, dict):
        raise bad_params(f"{where} must be an object")
    prefix = where + "."
    metadata = optional_object(value, "metadata", prefix)
    kind = value.get("kind")
    if kind is None:  # the 0.3 models infer it from the fields
        kind = next((name for name in ("text", "data", "file") if name in value), None)
    if kind == "text":
        text = value.get("text")
        if not isinstance(text, str):
            raise bad_params(f"{prefix}text must be a string")
        return Part("text", text=text, metadata=metadata)
    if kind == "data":
        data = value.get("data")
        if not isinstance(data, dict):
            raise bad_params(f"{prefix}data must be an object")
        return Part("data", data=data, metadata=metadata)
    if kind == "file":
        file = optional_object(value, "file", prefix)
        if file is None or ("uri" not in file and "bytes" not in file):
            raise bad_params(f"{prefix}file must be an object with uri or bytes")
        inner = prefix + "file."
        ref = FileRef(
            uri=optional_str(file, "uri", inner),
            bytes_b64=optional_str(file, "bytes", inner),
            media_type=optional_str(file, "mimeType", inner),
            name=optional_str(file, "name", inner),
        )
        return Part("file", file=ref, metadata=metadata)
    raise bad_params(f"{prefix}kind must be text, data or file")


def parse_message(value: Any, where: str = "message") -> Msg:
    if not isinstance(value, dict):
        raise bad_params(f"{where} is required (an object)")
    prefix = where + "."
    if value.get("kind", "message") != "message":
        raise bad_params(f'{prefix}kind must be "message"')
    role = value.get("role", "user")
    if role not in _ROLES:
        raise bad_params(f"{prefix}role must be user or agent")
    parts = value.get("parts")
    if not isinstance(parts, list):
        raise bad_params(f"{prefix}parts must be an array of parts")
    references = value.get("referenceTaskIds") or []
    if not isinstance(references, list) or not all(isinstance(item, str) for item in references):
        raise bad_params(f"{prefix}referenceTaskIds must be an array of strings")
    return Msg(
        message_id=required_str(value, "messageId", prefix),
        role=role,
        parts=tuple(_part(item, f"{prefix}parts[{index}]") for index, item in enumerate(parts)),
        context_id=optional_str(value, "contextId", prefix) or None,
        task_id=optional_str(value, "taskId", prefix) or None,
        metadata=optional_object(value, "metadata", prefix),
        reference_task_ids=tuple(references),
    )


def _push(value: dict[str, Any], where: str, task_id: str) -> PushConfig:
    authentication = optional_object(value, "authentication", where) or {}
    schemes = authentication.get("schemes") or []
    if not isinstance(schemes, list) or not all(isinstance(item, str) for item in schemes):
        raise bad_params(f"{where}authentication.schemes must be an array of strings")
    return PushConfig(
        id=optional_str(value, "id", where) or task_id,
        url=required_str(value, "url", where),
        token=optional_str(value, "token", where),
        schemes=tuple(schemes),
        credentials=optional_str(authentication, "credentials", where + "authentication."),
    )


def _render_part(part: Part) -> dict[str, Any]:
    out: dict[str, Any]
    if part.kind == "text":
        out = {"kind": "text", "text": part.text}
    elif part.kind == "data":
        # 0.3 data is an object: a value another wire sent (a list, a number) is wrapped.
        out = {"kind": "data", "data": part.data if isinstance(part.data, dict) else {"value": part.data}}
    else:
        file = part.file or FileRef()
        inner: dict[str, Any] = {"uri": file.uri} if file.uri is not None else {"bytes": file.bytes_b64 or ""}
        if file.media_type:
            inner["mimeType"] = file.media_type
        if file.name:
            inner["name"] = file.name
        out = {"kind": "file", "file": inner}
    if part.metadata:
        out["metadata"] = part.metadata
    return out


class V03Wire:
    version = "0.3"

    def send_params(self, params: dict[str, Any]) -> tuple[Msg, SendOptions]:
        message = parse_message(params.get("message"))
        config = optional_object(params, "configuration", "") or {}
        where = "configuration."
        blocking = optional_bool(config, "blocking", where)
        history = optional_int(config, "historyLength", where)
        push_value = optional_object(config, "pushNotificationConfig", where)
        push = _push(push_value, where + "pushNotificationConfig.", "") if push_value is not None else None
        return message, SendOptions(blocking=blocking is not False, history_length=history, push=push)

    def state_name(self, state: str) -> str:
        return state

    def parse_state(self, value: Any) -> str:
        if value not in _STATES:
            raise bad_params(f"state must be one of {', '.join(_STATES)}")
        return str(value)

    def message(self, message: Msg) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "message", "messageId": message.message_id, "role": message.role}
        out["parts"] = [_render_part(part) for part in message.parts]
        if message.context_id:
            out["contextId"] = message.context_id
        if message.task_id:
            out["taskId"] = message.task_id
        if message.metadata:
            out["metadata"] = message.metadata
        if message.reference_task_ids:
            out["referenceTaskIds"] = list(message.reference_task_ids)
        return out

    def _status(self, status: Status) -> dict[str, Any]:
        out: dict[str, Any] = {"state": status.state}
        if status.message is not None:
            out["message"] = self.message(status.message)
        out["timestamp"] = status.timestamp
        return out

    def _artifact(self, artifact: Artifact) -> dict[str, Any]:
        out: dict[str, Any] = {"artifactId": artifact.artifact_id}
        if artifact.name:
            out["name"] = artifact.name
        if artifact.description:
            out["description"] = artifact.description
        out["parts"] = [_render_part(part) for part in artifact.parts]
        return out

    def task(self, task: TaskView) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "task",
            "id": task.id,
            "contextId": task.context_id,
            "status": self._status(task.status),
        }
        if task.artifacts:
            out["artifacts"] = [self._artifact(artifact) for artifact in task.artifacts]
        if task.history:
            out["history"] = [self.message(message) for message in task.history]
        return out

    def send_result(self, result: dict[str, Any], is_task: bool) -> dict[str, Any]:
        return result

    def status_event(self, task_id: str, context_id: str, status: Status, final: bool) -> dict[str, Any]:
        return {
            "kind": "status-update",
            "taskId": task_id,
            "contextId": context_id,
            "status": self._status(status),
            "final": final,
        }

    def artifact_event(self, task_id: str, context_id: str, artifact: Artifact) -> dict[str, Any]:
        return {
            "kind": "artifact-update",
            "taskId": task_id,
            "contextId": context_id,
            "artifact": self._artifact(artifact),
            "append": False,
            "lastChunk": True,
        }

    def push_set(self, params: dict[str, Any]) -> tuple[str, PushConfig]:
        task_id = required_str(params, "taskId", "")
        value = optional_object(params, "pushNotificationConfig", "")
        if value is None:
            raise bad_params("pushNotificationConfig is required (an object)")
        return task_id, _push(value, "pushNotificationConfig.", task_id)

    def push_ref(self, params: dict[str, Any]) -> tuple[str, str | None]:
        return required_str(params, "id", ""), optional_str(params, "pushNotificationConfigId", "")

    def push_task(self, params: dict[str, Any]) -> str:
        return required_str(params, "id", "")

    def push_config(self, task_id: str, config: PushConfig) -> dict[str, Any]:
        inner: dict[str, Any] = {"id": config.id, "url": config.url}
        if config.token:
            inner["token"] = config.token
        if config.schemes or config.credentials:
            authentication: dict[str, Any] = {"schemes": list(config.schemes)}
            if config.credentials:
                authentication["credentials"] = config.credentials
            inner["authentication"] = authentication
        return {"taskId": task_id, "pushNotificationConfig": inner}

    def push_list(self, task_id: str, configs: list[PushConfig]) -> Any:
        return [self.push_config(task_id, config) for config in configs]


WIRE_V03 = V03Wire()
