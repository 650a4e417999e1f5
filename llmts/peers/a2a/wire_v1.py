"""The A2A 1.0 JSON-RPC wire (what ``a2a-sdk`` 1.x sends natively: ``SendMessage``, ``GetTask``...).

Objects are ProtoJSON of the protocol's protobuf messages: camelCase keys, enums by name
(``TASK_STATE_COMPLETED``, ``ROLE_AGENT``), no ``kind``, a part is the field it sets (``{"text": ...}``,
``{"data": ...}``, ``{"url"|"raw": ...}``), and a send result or stream event wraps its one payload
(``{"task": ...}``, ``{"message": ...}``, ``{"statusUpdate": ...}``, ``{"artifactUpdate": ...}``). The SDK
parses results leniently and drops what it does not know, so a wrong spelling here would fail silently:
tests/peers/a2a checks every shape through the SDK's own types.
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

__all__ = ["WIRE_V1", "V1Wire"]

_ROLES = {"ROLE_USER": "user", "ROLE_AGENT": "agent", 1: "user", 2: "agent"}
_ROLE_NAMES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}


def _state_name(state: str) -> str:
    return "TASK_STATE_" + state.upper().replace("-", "_")


_STATES = {
    _state_name(state): state
    for state in (
        "submitted",
        "working",
        "input-required",
        "completed",
        "canceled",
        "failed",
        "rejected",
        "auth-required",
    )
}


def _part(value: Any, where: str) -> Part:
    if not isinstance(value, dict):
        raise bad_params(f"{where} must be an object")
    metadata = optional_object(value, "metadata", where + ".")
    if "text" in value:
        text = value["text"]
        if not isinstance(text, str):
            raise bad_params(f"{where}.text must be a string")
        return Part("text", text=text, metadata=metadata)
    if "data" in value:
        return Part("data", data=value["data"], metadata=metadata)
    if "url" in value or "raw" in value:
        prefix = where + "."
        file = FileRef(
            uri=optional_str(value, "url", prefix),
            bytes_b64=optional_str(value, "raw", prefix),
            media_type=optional_str(value, "mediaType", prefix),
            name=optional_str(value, "filename", prefix),
        )
        return Part("file", file=file, metadata=metadata)
    raise bad_params(f"{where} needs one of text, data, url, raw")


def _parts(value: Any, where: str) -> tuple[Part, ...]:
    if not isinstance(value, list):
        raise bad_params(f"{where} must be an array of parts")
    return tuple(_part(item, f"{where}[{index}]") for index, item in enumerate(value))


def parse_message(value: Any, where: str = "message") -> Msg:
    if not isinstance(value, dict):
        raise bad_params(f"{where} is required (an object)")
    prefix = where + "."
    role = value.get("role", "ROLE_USER")
    # Only strings and integers name a role (a JSON object is unhashable, true is not 1).
    if not isinstance(role, str | int) or isinstance(role, bool) or role not in _ROLES:
        raise bad_params(f"{prefix}role must be ROLE_USER or ROLE_AGENT")
    references = value.get("referenceTaskIds") or []
    if not isinstance(references, list) or not all(isinstance(item, str) for item in references):
        raise bad_params(f"{prefix}referenceTaskIds must be an array of strings")
    return Msg(
        message_id=required_str(value, "messageId", prefix),
        role=_ROLES[role],
        parts=_parts(value.get("parts"), prefix + "parts"),
        context_id=optional_str(value, "contextId", prefix) or None,
        task_id=optional_str(value, "taskId", prefix) or None,
        metadata=optional_object(value, "metadata", prefix),
        reference_task_ids=tuple(references),
    )


def _push(value: dict[str, Any], where: str, task_id: str, config_id: str | None) -> PushConfig:
    authentication = optional_object(value, "authentication", where) or {}
    scheme = optional_str(authentication, "scheme", where + "authentication.")
    return PushConfig(
        id=config_id or task_id,
        url=required_str(value, "url", where),
        token=optional_str(value, "token", where),
        schemes=(scheme,) if scheme else (),
        credentials=optional_str(authentication, "credentials", where + "authentication."),
    )


def _render_part(part: Part) -> dict[str, Any]:
    out: dict[str, Any]
    if part.kind == "text":
        out = {"text": part.text}
    elif part.kind == "data":
        out = {"data": part.data}
    else:
        file = part.file or FileRef()
        out = {"url": file.uri} if file.uri is not None else {"raw": file.bytes_b64 or ""}
        if file.media_type:
            out["mediaType"] = file.media_type
        if file.name:
            out["filename"] = file.name
    if part.metadata:
        out["metadata"] = part.metadata
    return out


class V1Wire:
    version = "1.0"

    def send_params(self, params: dict[str, Any]) -> tuple[Msg, SendOptions]:
        message = parse_message(params.get("message"))
        config = optional_object(params, "configuration", "") or {}
        where = "configuration."
        immediate = optional_bool(config, "returnImmediately", where)
        history = optional_int(config, "historyLength", where)
        push_value = optional_object(config, "taskPushNotificationConfig", where)
        push = None
        if push_value is not None:
            prefix = where + "taskPushNotificationConfig."
            push = _push(push_value, prefix, "", optional_str(push_value, "id", prefix))
        return message, SendOptions(blocking=not immediate, history_length=history, push=push)

    def state_name(self, state: str) -> str:
        return _state_name(state)

    def parse_state(self, value: Any) -> str:
        state = _STATES.get(value) if isinstance(value, str) else None
        if state is None:
            raise bad_params(f"status must be one of {', '.join(_STATES)}")
        return state

    def message(self, message: Msg) -> dict[str, Any]:
        out: dict[str, Any] = {"messageId": message.message_id}
        if message.context_id:
            out["contextId"] = message.context_id
        if message.task_id:
            out["taskId"] = message.task_id
        out["role"] = _ROLE_NAMES[message.role]
        out["parts"] = [_render_part(part) for part in message.parts]
        if message.metadata:
            out["metadata"] = message.metadata
        if message.reference_task_ids:
            out["referenceTaskIds"] = list(message.reference_task_ids)
        return out

    def _status(self, status: Status) -> dict[str, Any]:
        out: dict[str, Any] = {"state": _state_name(status.state)}
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
        return {"task": result} if is_task else {"message": result}

    def status_event(self, task_id: str, context_id: str, status: Status, final: bool) -> dict[str, Any]:
        # 1.0 has no ``final``: the stream's end says it.
        return {"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": self._status(status)}}

    def artifact_event(self, task_id: str, context_id: str, artifact: Artifact) -> dict[str, Any]:
        update = {
            "taskId": task_id,
            "contextId": context_id,
            "artifact": self._artifact(artifact),
            "lastChunk": True,
        }
        return {"artifactUpdate": update}

    def push_set(self, params: dict[str, Any]) -> tuple[str, PushConfig]:
        task_id = required_str(params, "taskId", "")
        return task_id, _push(params, "", task_id, optional_str(params, "id", ""))

    def push_ref(self, params: dict[str, Any]) -> tuple[str, str | None]:
        return required_str(params, "taskId", ""), optional_str(params, "id", "")

    def push_task(self, params: dict[str, Any]) -> str:
        return required_str(params, "taskId", "")

    def push_config(self, task_id: str, config: PushConfig) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": task_id, "id": config.id, "url": config.url}
        if config.token:
            out["token"] = config.token
        if config.schemes or config.credentials:
            authentication: dict[str, Any] = {"scheme": config.schemes[0] if config.schemes else ""}
            if config.credentials:
                authentication["credentials"] = config.credentials
            out["authentication"] = authentication
        return out

    def push_list(self, task_id: str, configs: list[PushConfig]) -> Any:
        return {"configs": [self.push_config(task_id, config) for config in configs]}


WIRE_V1 = V1Wire()
