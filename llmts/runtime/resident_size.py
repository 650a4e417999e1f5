"""What parsed state costs the process while it is kept: the accounted sizes, in the memory budget
(docs/journal.md, "Process memory budget"), of a session's configuration in force (``configuration_size``),
of JSON a session keeps parsed, estimated on its text (``json_size``: a stored response's input items,
journaled peer arguments, an A2A message), and of values walked as they are (``value_size``,
``text_size``: a realtime conversation).

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

import re
import sys
from typing import Any

from pydantic import BaseModel

__all__ = ["configuration_size", "json_size", "text_size", "value_size"]


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


def text_size(text: str) -> int:
    """The resident bytes of ``text`` as CPython keeps it (its object, 1, 2 or 4 bytes a character)."""
    return sys.getsizeof(text)


def _char_bytes(text: str) -> int:
    """The bytes CPython keeps per character of ``text`` (1, 2 or 4), read off its size without a scan
    (a non-ASCII string's header is 72 to 76 bytes; a short one may read wider than it is)."""
    if text.isascii():
        return 1
    per = (sys.getsizeof(text) - 72) / len(text)
    return 4 if per > 2.5 else 2 if per > 1.5 else 1


def value_size(value: Any) -> int:
    """The estimated resident bytes of a JSON-like value (dicts, lists, strings, scalars), each string at
    its exact size and counted once however often it is referenced: an iterative walk, each node once."""
    total = 0
    seen: set[int] = set()
    pending: list[Any] = [value]
    pop, push = pending.pop, pending.append
    while pending:
        item = pop()
        if isinstance(item, str):
            if id(item) not in seen:
                seen.add(id(item))
                total += sys.getsizeof(item)
        elif isinstance(item, dict):
            total += _CONTAINER_BYTES + 2 * _SLOT_BYTES * len(item)
            for key, member in item.items():
                push(key)
                push(member)
        elif isinstance(item, list | tuple):
            total += _CONTAINER_BYTES + _SLOT_BYTES * len(item)
            pending.extend(item)
        else:
            total += _SCALAR_BYTES
    return total


def configuration_size(config: BaseModel) -> int:
    """The estimated resident bytes of ``config`` and its compiled plan."""
    total = 0
    pending: list[Any] = [config]
    pop, push = pending.pop, pending.append
    while pending:
        value = pop()
        if value is None:
            continue
        if isinstance(value, str):
            # CPython keeps a string at 1, 2 or 4 bytes per character, by its widest one.
            total += _STRING_BYTES + _char_bytes(value) * (len(value) + len(value) // 2)
        elif isinstance(value, bytes):
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
    5,000 items of 1,000 characters, 5.3 MB, about 11 MiB, estimated 12 MiB. Characters count at the
    width of the widest one in the text (one emoji makes CPython keep its whole string at 4 bytes per
    character): within 1-1.5 times for one string, more for JSON whose strings differ in width."""
    containers = raw.count(b"{") + raw.count(b"[")
    slots = raw.count(b":") + raw.count(b",") + containers  # a member or element each, about
    strings = raw.count(b'"') // 2
    # What is neither a string nor a container is a number (or a singleton): an object each, about.
    scalars = max(0, slots - strings - containers)
    return (
        _CONTAINER_BYTES * containers
        + _SLOT_BYTES * slots
        + _STRING_BYTES * strings
        + _SCALAR_BYTES * scalars
        + _text_bytes(raw)
    )


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB]")
_WIDE_ESCAPE = re.compile(rb"\\u(?!00)[0-9a-fA-F]{4}")


def _text_bytes(raw: bytes) -> int:
    """The characters of ``raw``, held one and a half times, at the width CPython keeps a string: 1, 2
    or 4 bytes per character by the widest character the text has, written out or escaped (``\\u``: six
    characters of text for one held)."""
    # An escaped backslash before a ``u`` is no escape (this counts one that precedes a real escape too:
    # the estimate errs high then).
    escapes = raw.count(b"\\u") - raw.count(b"\\\\u")
    if raw.isascii() and not escapes:
        return len(raw) + len(raw) // 2
    text = raw.decode("utf-8", "replace")
    width = _char_bytes(text)
    if escapes and width < 4:
        if _SURROGATE_ESCAPE.search(raw):
            width = 4
        elif _WIDE_ESCAPE.search(raw):
            width = max(width, 2)
    characters = max(0, len(text) - 5 * escapes)  # never below 0, even for text that is no JSON
    return width * (characters + characters // 2)
