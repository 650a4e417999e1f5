"""Operations: what a provider request asks for (chat, embeddings, moderation, rerank, ...) and the
fixture kinds that answer each.

Theory of operation (docs/architecture.md, "Operations"): ``OPERATIONS`` is the one table of operation
names. Chat and realtime are written here; every other operation declares its ``OperationRow`` in its
own module of this package (its fixture, its compiled answer and its limits beside it), and the table is
collected from them at import, in module order. A scenario serves one operation (its ``operation``,
else the one its fixtures imply, else ``chat``), so a chat scenario's queue is never consumed by an
embeddings call and vice versa. The journal's ``operation`` is the wire operation a route records:
chat-like routes keep their own names (``chat.completions``, ``responses``, ``messages``,
``generate_content``...), which all belong to the ``chat`` family; every other route records its
family's name itself (``embeddings``...). ``operation_family`` maps the one to the other.

This package imports nothing of llmts but ``operation_row.py`` and ``media.py`` (which import nothing of
llmts): ``fixtures.py`` and ``neutral.py`` both read it. Its modules import from
``operation_row.py``, never from this ``__init__``, which is still running when it imports them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Literal

from llmts.schema.operation_row import INPUT_LIMITS, OperationRow

__all__ = [
    "CHAT",
    "CHAT_LIKE",
    "FIXTURE_KINDS",
    "OPERATIONS",
    "OPERATION_LIMITS",
    "REALTIME",
    "Operation",
    "operation_family",
    "rows_of",
]

CHAT = "chat"
# A model turn of a Realtime or Live WebSocket session (docs/realtime.md): answered like chat (text, tool
# calls, reasoning) plus spoken audio, but by its own scenarios, so a chat queue never answers a voice turn.
REALTIME = "realtime"
# Operations whose answers compile like chat's (no operation unit in llmts/runtime/operations/) and that a
# session without configuration answers by echoing the latest user text.
CHAT_LIKE = frozenset({CHAT, REALTIME})

_CHAT_ROW = OperationRow(CHAT, ("text", "json", "tool_calls", "items", "refusal"))
_REALTIME_ROW = OperationRow(REALTIME, ("text", "tool_calls", "audio"))


def rows_of(modules: Iterable[ModuleType]) -> tuple[OperationRow, ...]:
    """The table's rows: chat, the rows ``modules`` declare (in their order), realtime; raises
    ``RuntimeError`` naming the module when a row repeats a name or a limit another row has."""
    rows: dict[str, OperationRow] = {CHAT: _CHAT_ROW}
    limits: dict[str, str] = dict.fromkeys(INPUT_LIMITS, "the shared input limits")
    for module in modules:
        for row in (value for value in vars(module).values() if isinstance(value, OperationRow)):
            if rows.get(row.name) is row:
                continue  # a row another module imported: declared once
            if row.name in rows or row.name == REALTIME:
                raise RuntimeError(f"{module.__name__} declares operation {row.name!r} a second time")
            for limit in row.limits:
                if limit in limits:
                    raise RuntimeError(
                        f"{module.__name__}: operation {row.name!r} declares limit {limit!r}, "
                        f"which {limits[limit]} already has"
                    )
                limits[limit] = f"operation {row.name!r}"
            rows[row.name] = row
    return (*rows.values(), _REALTIME_ROW)


# By name, so the order never depends on the importer (validation messages and the JSON schema list it).
_MODULES = sorted(info.name for info in pkgutil.iter_modules(__path__))
_ROWS = rows_of(importlib.import_module(f"{__name__}.{name}") for name in _MODULES)

# Operation -> the response fixture kinds that answer it (an ``error`` answers any operation). Row order
# is the order validation messages list them.
OPERATIONS: Mapping[str, tuple[str, ...]] = MappingProxyType({row.name: row.kinds for row in _ROWS})

# The scenario's ``operation`` filter: the table's names, derived from it (so to a type checker a ``str``;
# validation and the JSON schema still name each value).
if TYPE_CHECKING:
    Operation = str
else:
    Operation = Literal[tuple(OPERATIONS)]

# Every fixture kind some operation is answered by, once each, in the table's order.
FIXTURE_KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for kinds in OPERATIONS.values() for kind in kinds))

# Documented in docs/configuration.md and docs/embeddings.md; merged into ``LIMITS``.
OPERATION_LIMITS: Mapping[str, int] = MappingProxyType(
    {**INPUT_LIMITS, **{name: value for row in _ROWS for name, value in row.limits.items()}}
)

_FAMILIES = frozenset(OPERATIONS) - {CHAT}


def operation_family(wire_operation: str | None) -> str:
    """The ``OPERATIONS`` name a wire operation belongs to: its own name for every family but chat,
    ``chat`` for every chat-like wire operation (``chat.completions``, ``messages``...)."""
    if wire_operation is not None and wire_operation in _FAMILIES:
        return wire_operation
    return CHAT
