"""Wire identity of one provider request: the ids and timestamps its answer carries.

Seeded (the session configures ``determinism``): every id derives from seed, provider namespace,
provider-local request ordinal and a domain name (``response``, ``tool_call.0``...), so two runs with the
same seed send byte-identical ids, JSON and streamed alike. With ``fixed_utc`` the wire timestamps and the
HTTP ``Date`` header are that instant. Live (no ``determinism``): random ids from the session's id source
and the real clock.
"""

from __future__ import annotations

import hashlib
import random
from email.utils import formatdate

from llmts.runtime.clock import Clock, IdSource
from llmts.schema.determinism import Determinism
from llmts.schema.neutral import NeutralToolCall, ScriptedOutput, build

__all__ = ["WireIdentity", "with_generated_call_ids"]

# Hex digits of a derived id: the length of the live ids (12 random bytes).
_ID_HEX = 24
_RESPONSE = "response"


class WireIdentity:
    """Created once per provider request at entry; cheap in live mode (one random id, made on demand)."""

    __slots__ = ("_base", "_clock", "_ids", "fixed_epoch", "ordinal", "provider", "seed")

    def __init__(
        self,
        provider: str,
        ordinal: int,
        determinism: Determinism | None,
        clock: Clock,
        ids: IdSource,
    ) -> None:
        self.provider = provider
        self.ordinal = ordinal
        self.seed = determinism.seed if determinism is not None else None
        self.fixed_epoch = determinism.fixed_epoch if determinism is not None else None
        self._clock = clock
        self._ids = ids
        self._base: str | None = None

    @property
    def seeded(self) -> bool:
        return self.seed is not None

    @property
    def clock_mode(self) -> str:
        return "fixed" if self.fixed_epoch is not None else "live"

    def id_for(self, domain: str = _RESPONSE) -> str:
        """A hex id for one wire field of this request's answer; the same domain always gives the same id."""
        if self.seed is not None:
            material = f"{self.seed}\x00{self.provider}\x00{self.ordinal}\x00{domain}".encode()
            return hashlib.sha256(material).hexdigest()[:_ID_HEX]
        if self._base is None:
            self._base = self._ids.new_hex(_ID_HEX // 2)
        if domain == _RESPONSE:
            return self._base
        return hashlib.sha256(f"{self._base}\x00{domain}".encode()).hexdigest()[:_ID_HEX]

    def created_at(self) -> int:
        """Wire timestamp (seconds): the fixed instant, or now."""
        epoch = self.fixed_epoch
        return int(epoch if epoch is not None else self._clock.now())

    def pacing_random(self) -> random.Random:
        """The jitter source of this answer's pacing: derived from the seed like the ids (the same seed
        paces the same request alike), else from the session's id source."""
        if self.seed is not None:
            return random.Random(f"{self.seed}\x00{self.provider}\x00{self.ordinal}\x00pacing")
        return random.Random(self._ids.new_hex(8))

    def http_date(self) -> str | None:
        """The ``Date`` header of a fixed clock (None: the server's own live header)."""
        if self.fixed_epoch is None:
            return None
        return formatdate(self.fixed_epoch, usegmt=True)


def with_generated_call_ids(
    output: ScriptedOutput, wire: WireIdentity, generated: tuple[int, ...]
) -> ScriptedOutput:
    """Seeded ids for the tool calls whose fixture left ``id`` unset (positions in ``generated``)."""
    calls = list(output.tool_calls)
    for index in generated:
        call = calls[index]
        calls[index] = build(
            NeutralToolCall,
            id="call_" + wire.id_for(f"tool_call.{index}"),
            name=call.name,
            arguments=call.arguments,
            arguments_chunks=call.arguments_chunks,
        )
    # model_copy keeps every other field (whatever ScriptedOutput grows) without re-validating.
    return output.model_copy(update={"tool_calls": tuple(calls)})
