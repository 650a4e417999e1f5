"""What the two JSON-RPC wires of A2A have in common (docs/a2a.md, "Two wires"): the interface each wire
module implements, the options of a send, and strict readers of request parameters.

The 1.0 wire (``wire_v1``: ProtoJSON, ``TASK_STATE_*`` enums, oneof wrappers such as ``{"task": ...}``) and
the 0.3 wire (``wire_v03``: a ``kind`` on every object, lower-case states, ``final`` on status updates) carry
the same operations; the engine decides what to answer and asks the request's wire how to spell it. A
parameter of the wrong shape is the protocol's invalid-params error (-32602) naming it, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from llmts.peers.a2a.model import Artifact, Msg, PushConfig, Status, TaskView
from llmts.peers.jsonrpc import INVALID_PARAMS, JsonRpcError

__all__ = [
    "SendOptions",
    "Wire",
    "bad_params",
    "optional_bool",
    "optional_int",
    "optional_object",
    "optional_str",
    "parse_digits",
    "required_str",
]

# ASCII digits only: ``str.isdigit`` is true for "²" and "٣" too, which ``int`` refuses or reads as 3.
_DIGITS = re.compile(r"[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class SendOptions:
    """A send's ``configuration``: wait for the task's end (``blocking``), how much history to show, and
    a push-notification configuration for the new task."""

    blocking: bool = True
    history_length: int | None = None
    push: PushConfig | None = None


class Wire(Protocol):
    """One wire's spelling of requests and results."""

    version: str  # the card's protocolVersion of this wire: "1.0" or "0.3"

    def send_params(self, params: dict[str, Any]) -> tuple[Msg, SendOptions]: ...

    def state_name(self, state: str) -> str: ...

    def parse_state(self, value: Any) -> str: ...

    def task(self, task: TaskView) -> dict[str, Any]: ...

    def message(self, message: Msg) -> dict[str, Any]: ...

    def send_result(self, result: dict[str, Any], is_task: bool) -> dict[str, Any]:
        """The result of a send (and a stream's first event): a rendered task or message."""
        ...

    def status_event(self, task_id: str, context_id: str, status: Status, final: bool) -> dict[str, Any]: ...

    def artifact_event(self, task_id: str, context_id: str, artifact: Artifact) -> dict[str, Any]: ...

    def push_set(self, params: dict[str, Any]) -> tuple[str, PushConfig]:
        """(task id, the configuration; its id defaults to the task's, as the SDK servers do)."""
        ...

    def push_ref(self, params: dict[str, Any]) -> tuple[str, str | None]:
        """(task id, configuration id) of a get or delete."""
        ...

    def push_task(self, params: dict[str, Any]) -> str:
        """The task id of a list."""
        ...

    def push_config(self, task_id: str, config: PushConfig) -> dict[str, Any]: ...

    def push_list(self, task_id: str, configs: list[PushConfig]) -> Any: ...


def bad_params(message: str) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, message)


def optional_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_params(f"{where}{key} must be a string")
    return value


def required_str(obj: dict[str, Any], key: str, where: str) -> str:
    value = optional_str(obj, key, where)
    if not value:
        raise bad_params(f"{where}{key} is required (a non-empty string)")
    return value


def parse_digits(text: str) -> int | None:
    """A non-negative integer spelt in 1-18 ASCII digits, else None."""
    return int(text) if _DIGITS.fullmatch(text) else None


def optional_int(obj: dict[str, Any], key: str, where: str, minimum: int = 0) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    # ProtoJSON may spell an integer as a string; a bool is not one.
    if isinstance(value, str):
        number = parse_digits(value[1:] if value.startswith("-") else value)
        if number is None:
            raise bad_params(f"{where}{key} must be an integer")
        value = -number if value.startswith("-") else number
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_params(f"{where}{key} must be an integer")
    if value < minimum:
        raise bad_params(f"{where}{key} must be at least {minimum}")
    return value


def optional_bool(obj: dict[str, Any], key: str, where: str) -> bool | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise bad_params(f"{where}{key} must be true or false")
    return value


def optional_object(obj: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise bad_params(f"{where}{key} must be an object")
    return value
