"""One provider request on its way through the server: the exchange the stages read and extend.

A provider request is one ``Exchange``. It is made when the request arrives and passes, in order, through
the stages of ``llmts/server/provider_path.py``:

    route -> open (session, journal record, body, credential) -> parse -> strict rules -> rate limits
    -> shortcut -> admission -> forwarding | (wait -> completion -> render) -> delivery

Each stage reads what the stages before it set and adds what it decided; a stage that answers the
request on its own (a shortcut, a forwarded miss, a client that left during a delay) ends the pipeline.
Nothing is written into frozen models, and the provider's ``Reply`` holds only what the provider rendered:
what the server decided about delivering it (the fault plan, the pacing, keeping recorded frames apart)
is the exchange's (docs/architecture.md, "The path of one request").

A new protocol adds or skips stages; it does not grow one function.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from llmts.providers.base import ProviderAdapter, ProviderCall, ProviderRequest, Route
from llmts.runtime import Session
from llmts.runtime.conversations import Caller
from llmts.runtime.determinism import WireIdentity
from llmts.runtime.journal import JournalRecord
from llmts.runtime.session import Admission
from llmts.schema.faults import StreamDelivery
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.pacing import Pacing
from llmts.transport.pacing import StreamPacing

__all__ = ["Exchange"]


class Exchange:
    """What one provider request carries from stage to stage (slots: the hot path reads them often)."""

    __slots__ = (
        "adapter",
        "admission",
        "args",
        "call",
        "caller",
        "completion",
        "conversation",
        "delivery",
        "entry",
        "environ",
        "in_stream",
        "keep_frames",
        "method",
        "neutral",
        "ordinal",
        "paced",
        "pacing",
        "path",
        "path_session",
        "request",
        "request_id",
        "route",
        "session",
        "upstream",
        "wire",
    )

    def __init__(self, environ: dict[str, Any], method: str, path: str, path_session: str | None) -> None:
        self.environ = environ
        self.method = method
        self.path = path
        self.path_session = path_session
        self.request_id = ""
        # Set by the route stage; the adapter also when only the prefix matched (its error envelope).
        self.adapter: ProviderAdapter | None = None
        self.route: Route | None = None
        self.args: Mapping[str, str] = {}
        # Set by the open stage.
        self.session: Session | None = None
        self.entry: JournalRecord | None = None
        self.wire: WireIdentity | None = None
        self.request: ProviderRequest | None = None
        self.call: ProviderCall | None = None
        self.caller: Caller | None = None
        # The route lets in-stream delivery plans act on this request's stream (set by ``_parse``).
        self.in_stream = False
        # The conversation id the client named by header (None: it named none).
        self.conversation: str | None = None
        # Set by the inference stages.
        self.neutral: NeutralRequest | None = None
        self.upstream: str | None = None
        self.admission: Admission | None = None
        # The request's place in the session's recording (None: the session does not record).
        self.ordinal: int | None = None
        self.completion: Completion | None = None
        # A paced stream's settings, its jitter source and the time to its first frame already waited.
        self.paced: tuple[Pacing, random.Random | None, float] | None = None
        # How the reply is delivered (the server's decisions, not the provider's rendering).
        self.delivery: StreamDelivery | None = None
        self.pacing: StreamPacing | None = None
        self.keep_frames = False
