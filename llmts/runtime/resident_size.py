"""What parsed state costs the process while it is kept: the accounted sizes, in the memory budget
(docs/journal.md, "Process memory budget"), of a session's configuration in force and of JSON a session
keeps parsed (a stored response's input items).

A configuration is held twice: the validated models (one pydantic model per scenario, response, tool
call...) and the plans compiled from them (runtime/plans.py). Its JSON length says little about that: one
response ``{"text": "hi"}`` is 15 bytes of JSON and about 1.8 KiB resident, while a 5 MB text costs about
1.3 times its length. So the estimate walks the validated configuration and prices what it finds, with
prices measured on a running server (RSS before and after configuring, 2026-12-05):

| shape (largest that validates) | JSON | resident | estimate |
| --- | --- | --- | --- |
| 102,400 text responses | 2.2 MB | 182 MiB | 213 MiB |
| 51,200 tool-call responses | 3.1 MB | 200 MiB | 228 MiB |
| 51,200 JSON answers | 1.6 MB | 126 MiB | 138 MiB |
| one 5 MB text | 5.0 MB | 6.7 MiB | 7.2 MiB |

The walk is iterative (a JSON value may nest deeper than Python's recursion limit) and visits each
value once: about 0.1 s for the largest configurations, which take seconds to validate and compile.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["configuration_size", "json_size"]

# A model instance with its compiled counterpart (the plan, the scripted output): the bulk of the cost.
_MODEL_BYTES = 2048
# A list, tuple or dict, plus each of its slots.
_CONTAINER_BYTES = 128
_SLOT_BYTES = 16
# A string: its object, and its characters held about one and a half times (the fixture's and the
# plan's copies, chunks).
_STRING_BYTES = 64
# A number, a boolean.
_SCALAR_BYTES = 32


def configuration_size(config: BaseModel) -> int:
    """The estimated resident bytes of ``config`` and its compiled plan."""
    total = 0
    pending: list[Any] = [config]
    pop, push = pending.pop, pending.append
    while pending:
        value = pop()
        if value is None:
            continue
        if isinstance(value, str | bytes):
            total += _STRING_BYTES + len(value) + len(value) // 2
        elif isinstance(value, BaseModel):
            total += _MODEL_BYTES
            pending.extend(value.__dict__.values())
        elif isinstance(value, dict):
            total += _CONTAINER_BYTES + _SLOT_BYTES * len(value)
            for key, item in value.items():
                push(key)
                push(item)
        elif isinstance(value, list | tuple | set | frozenset):
            total += _CONTAINER_BYTES + _SLOT_BYTES * len(value)
            pending.extend(value)
        else:
            total += _SCALAR_BYTES
    return total


def json_size(raw: bytes) -> int:
    """The estimated resident bytes of ``orjson.loads(raw)``, counted on the JSON text (a few ``count``
    calls in C, no walk): each object and array, each member or element, each string and its characters
    at the prices above. Brackets, colons and quotes inside strings count too, so it errs high. Measured
    (2026-12-05): 50,000 small input items, 3.3 MB of JSON, are about 45 MiB parsed, estimated 51 MiB;
    5,000 items of 1,000 characters, 5.3 MB, about 11 MiB, estimated 12 MiB."""
    containers = raw.count(b"{") + raw.count(b"[")
    slots = raw.count(b":") + raw.count(b",") + containers  # a member or element each, about
    strings = raw.count(b'"') // 2
    return (
        _CONTAINER_BYTES * containers
        + _SLOT_BYTES * slots
        + _STRING_BYTES * strings
        + len(raw)
        + len(raw) // 2
    )
