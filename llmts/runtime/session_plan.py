"""The session part that answers what its configuration says: served models, credentials, upstreams,
pacing, reasoning signatures and the wire identity of each answer.

Locking: none. ``Session.configure`` swaps the one ``current`` reference under the session lock (with the
queues, conversations and recorder that belong to it), so a read here sees one whole plan, old or new.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmts.runtime.admission import Admission
from llmts.runtime.clock import Clock, IdSource
from llmts.runtime.determinism import WireIdentity
from llmts.runtime.journal import JournalRecord
from llmts.runtime.plans import SessionPlan
from llmts.runtime.signatures import UNSEEDED, SignatureBook
from llmts.schema.config import SessionConfig
from llmts.schema.determinism import Determinism
from llmts.schema.pacing import Pacing

__all__ = ["PlanView"]


class PlanView:
    """The session's compiled configuration (``current``; None until configured) and the clock and id
    source its answers' wire identities use."""

    __slots__ = ("_clock", "_ids", "current")

    def __init__(self, clock: Clock, ids: IdSource) -> None:
        self._clock = clock
        self._ids = ids
        self.current: SessionPlan | None = None

    @property
    def configured(self) -> bool:
        return self.current is not None

    @property
    def configuration(self) -> SessionConfig | None:
        plan = self.current
        return plan.config if plan is not None else None

    @property
    def determinism(self) -> Determinism | None:
        plan = self.current
        return plan.determinism if plan is not None else None

    @property
    def signatures(self) -> SignatureBook:
        """The reasoning signatures this session issues (the strict contract verifies passed-back blocks)."""
        plan = self.current
        return plan.signatures if plan is not None else UNSEEDED

    def credential_for(self, provider: str) -> str | None:
        plan = self.current
        return plan.credentials.get(provider) if plan is not None else None

    def serves_model(self, model: str) -> bool:
        plan = self.current
        return plan is None or plan.models is None or model in plan.models

    def model_ids(self, defaults: Sequence[str] = ()) -> list[str]:
        """What a model listing shows: the listed models, else the models the configuration names,
        else ``defaults`` (the provider's small default set)."""
        plan = self.current
        listed = plan.listed_models if plan is not None else ()
        return list(listed or defaults)

    def upstream_for(self, provider: str) -> str | None:
        """The base URL this session forwards ``provider`` requests to when its fixtures cannot answer."""
        plan = self.current
        return plan.config.upstreams.get(provider) if plan is not None else None

    def pacing_for(self, admission: Admission) -> Pacing | None:
        """The pacing of this admission's streamed answer: the response's or scenario's, else the
        session's; none for a response whose own ``stream_delivery`` plan writes the stream."""
        response = admission.response
        if response is not None:
            if response.stream_delivery is not None or response.error is not None:
                return None
            if response.pacing is not None:
                return response.pacing
        plan = self.current
        return plan.config.pacing if plan is not None else None

    def wire_identity(self, record: JournalRecord) -> WireIdentity:
        """The ids and wire time of the answer to this attempt (seeded when ``determinism`` is set)."""
        plan = self.current
        determinism = plan.determinism if plan is not None else None
        return WireIdentity(record.provider, record.wire_sequence or 0, determinism, self._clock, self._ids)
