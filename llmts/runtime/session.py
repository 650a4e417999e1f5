"""One test session: its configuration plan, queue cursors and generation, behind its own lock.

A request goes through two steps:

* ``admit`` (under the lock, no waiting): pick the scenario, check the fixture fits the request, and
  consume the queue entry. Order of admission is the order answers are handed out.
* ``complete`` (after the fixture's delay, which the caller performs outside the lock): turn the admission
  into a ``Completion``, or raise the scripted error. If the session was reset, reconfigured or deleted in
  between, the request is superseded (409) instead.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llmts.errors import MemoryBudgetExceeded, RecordingFull, RequestSuperseded, ScriptedError
from llmts.runtime.clock import Clock, IdSource
from llmts.runtime.conversations import DEFAULT_CALLER, Caller, ConversationBook, Ticket, compile_graphs
from llmts.runtime.conversations.explain import explain_match
from llmts.runtime.conversations.selection import queue_position, select
from llmts.runtime.determinism import WireIdentity, with_generated_call_ids
from llmts.runtime.journal import Journal, JournalRecord, JournalSnapshot
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.operations import generate, operation_input_tokens
from llmts.runtime.plans import ResponsePlan, SessionPlan, compile_config
from llmts.runtime.prompt_cache import MIN_CACHEABLE_TOKENS, NO_CACHE_EFFECT, PromptCache
from llmts.runtime.rate_limits import RateState, RateWindow
from llmts.runtime.recording import Exchange, Recorder
from llmts.runtime.signatures import UNSEEDED, SignatureBook
from llmts.runtime.store import BoundedStore
from llmts.runtime.tokens import estimate_input_tokens, estimate_text_tokens
from llmts.schema.config import SessionConfig
from llmts.schema.control import QueueStatus
from llmts.schema.conversations import ConversationStatus, MatchExplanation
from llmts.schema.neutral import Completion, NeutralRequest, OperationRequest, ScriptedOutput, Usage, build
from llmts.schema.pacing import Pacing

__all__ = ["Admission", "Session"]


# Not frozen (nothing changes it after construction): one is built per request, and a frozen
# dataclass costs about four times as much to construct (docs/architecture.md, "The server's hot path").
@dataclass(slots=True)
class Admission:
    generation: int
    delay_ms: int
    response: ResponsePlan | None
    echo: ScriptedOutput | None
    scenario_id: str | None
    input_tokens: int
    # Set when a conversation graph owns the request: its reservation (or replay) to settle.
    conversation: Ticket | None = None
    # A scenario's answers for choices 1..n-1 of an OpenAI Chat ``n`` request (consumed with ``response``).
    more: tuple[ResponsePlan, ...] = ()
    # No scenario scripts this (non-chat) operation: ``complete`` generates the answer.
    generated: bool = False


def _input_tokens(request: NeutralRequest) -> int:
    if isinstance(request, OperationRequest):
        return operation_input_tokens(request)
    return estimate_input_tokens(request.messages, request.preamble)


class Session:
    def __init__(
        self, session_id: str, *, clock: Clock, ids: IdSource, budget: MemoryBudget | None = None
    ) -> None:
        self.id = session_id
        self.created_at = clock.now()
        self._clock = clock
        self._ids = ids
        self._lock = threading.Lock()
        self._plan: SessionPlan | None = None
        self._cursors: list[int] = []
        self._generation = 0
        self._retired = False
        self._prompt_cache = PromptCache()
        self._stores: dict[str, BoundedStore] = {}
        self._journal = Journal(budget=budget)
        self._conversations: ConversationBook | None = None
        # The process memory budget (owned by the registry) and what this session has charged to it for
        # stored objects and conversation state; the journal charges its own entries.
        self._budget = budget
        self._charged_stores = 0
        self._charged_conversations = 0
        # The ``rate_limits`` window (None without one); starts over on configure and reset.
        self._rate: RateWindow | None = None
        # What a ``record: true`` session kept (docs/recording.md); starts over on configure and reset.
        self._recorder: Recorder | None = None
        self._charged_recording = 0

    # --- control -----------------------------------------------------------------------------------

    @property
    def configured(self) -> bool:
        return self._plan is not None

    @property
    def configuration(self) -> SessionConfig | None:
        plan = self._plan
        return plan.config if plan is not None else None

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def retired(self) -> bool:
        return self._retired

    def configure(self, config: SessionConfig) -> None:
        plan = compile_config(config)  # may be slow for big configs: done before taking the lock
        book = ConversationBook(compile_graphs(config)) if config.conversations else None
        recorder = Recorder(config.recording) if config.record else None
        with self._lock:
            self._plan = plan
            self._conversations = book
            self._recorder = recorder
            self._journal.apply(config.journal)
            self._clear_state()
            self._charge_memory()

    def reset(self) -> None:
        with self._lock:
            self._clear_state()
            self._charge_memory()

    def _clear_state(self) -> None:
        """Queues, prompt cache and stored objects start over; pending work is superseded."""
        self._cursors = [0] * len(self._plan.scenarios) if self._plan is not None else []
        self._prompt_cache.clear()
        if self._conversations is not None:
            self._conversations.clear()
        for store in self._stores.values():
            store.clear()
        if self._recorder is not None:
            self._recorder.clear()
        self._journal.clear()
        limits = self._plan.config.rate_limits if self._plan is not None else None
        determinism = self._plan.determinism if self._plan is not None else None
        fixed = determinism is not None and determinism.fixed_utc is not None
        self._rate = RateWindow(limits, fixed_clock=fixed) if limits is not None else None
        self._generation += 1

    def retire(self) -> None:
        """The session was deleted: supersede whatever is still pending."""
        with self._lock:
            self._retired = True
            self._generation += 1
            # Nobody can reach a deleted session's state any more: give its memory back to the process.
            self._conversations = None
            self._stores.clear()
            self._recorder = None
            self._charge_memory()
            self._budget = None
        self._journal.detach()

    def _charge_memory(self) -> None:
        """Charge the change of stored-object and conversation bytes to the process budget (lock held)."""
        budget = self._budget
        if budget is None:
            return
        stores = sum(store.retained_bytes for store in self._stores.values())
        book = self._conversations
        conversations = book.retained_bytes if book is not None else 0
        recording = self._recorder.retained_bytes if self._recorder is not None else 0
        budget.state_changed(
            stores - self._charged_stores,
            conversations - self._charged_conversations,
            recording - self._charged_recording,
        )
        self._charged_stores, self._charged_conversations = stores, conversations
        self._charged_recording = recording

    def _make_room(self, growth: int, what: str) -> None:
        """Raise 507 when ``growth`` more bytes cannot fit the process budget even without journals."""
        budget = self._budget
        if budget is not None and growth > 0 and not budget.make_room(growth):
            raise MemoryBudgetExceeded(
                f"{what} needs {growth} more bytes but the server's memory budget "
                f"(--max-memory, {budget.max_bytes} bytes) is full of stored objects and conversation "
                "state; delete or reset sessions"
            )

    def is_current(self, generation: int) -> bool:
        return not self._retired and self._generation == generation

    def credential_for(self, provider: str) -> str | None:
        plan = self._plan
        return plan.credentials.get(provider) if plan is not None else None

    @property
    def signatures(self) -> SignatureBook:
        """The reasoning signatures this session issues (the strict contract verifies passed-back blocks)."""
        plan = self._plan
        return plan.signatures if plan is not None else UNSEEDED

    def serves_model(self, model: str) -> bool:
        plan = self._plan
        return plan is None or plan.models is None or model in plan.models

    def model_ids(self, defaults: Sequence[str] = ()) -> list[str]:
        """What a model listing shows: the listed models, else the models the configuration names,
        else ``defaults`` (the provider's small default set)."""
        plan = self._plan
        listed = plan.listed_models if plan is not None else ()
        return list(listed or defaults)

    # --- journal ------------------------------------------------------------------------------------

    @property
    def journal(self) -> Journal:
        return self._journal

    def journal_begin(self, request_id: str, provider: str, method: str, path: str) -> JournalRecord:
        """Record a provider attempt at entry (reserving its provider-local ordinal, ``wire_sequence``);
        the caller completes the returned record in place."""
        record = self._journal.begin(
            request_id, provider, method, path, self._clock.now(), self._clock.monotonic()
        )
        plan = self._plan
        if plan is not None and plan.determinism is not None and plan.determinism.fixed_utc is not None:
            record.wire_clock_mode = "fixed"
        return record

    def wire_identity(self, record: JournalRecord) -> WireIdentity:
        """The ids and wire time of the answer to this attempt (seeded when ``determinism`` is set)."""
        plan = self._plan
        determinism = plan.determinism if plan is not None else None
        return WireIdentity(record.provider, record.wire_sequence or 0, determinism, self._clock, self._ids)

    def journal_finish(self, record: JournalRecord) -> None:
        record.finish(self._clock.now(), self._clock.monotonic())
        self._journal.settle(record)

    def journal_snapshot(self) -> JournalSnapshot:
        return self._journal.snapshot()

    # --- stored objects (per provider namespace, bounded) ------------------------------------------

    def store_put(self, namespace: str, key: str, value: Any, size: int) -> None:
        with self._lock:
            store = self._stores.get(namespace)
            if store is None:
                store = self._stores[namespace] = BoundedStore()
            self._make_room(size, "a stored object")
            store.put(key, value, size)
            self._charge_memory()

    def store_get(self, namespace: str, key: str) -> Any | None:
        with self._lock:
            store = self._stores.get(namespace)
            return store.get(key) if store is not None else None

    def store_delete(self, namespace: str, key: str) -> bool:
        with self._lock:
            store = self._stores.get(namespace)
            deleted = store.delete(key) if store is not None else False
            self._charge_memory()
            return deleted

    # --- requests ----------------------------------------------------------------------------------

    def warm_cache(self, request: NeutralRequest) -> Usage:
        """Only write/read the prompt cache (an adapter's cache warm-up): no scripted answer is consumed."""
        with self._lock:
            effect = self._prompt_cache.observe(request)
        return build(
            Usage,
            input_tokens=estimate_input_tokens(request.messages, request.preamble),
            output_tokens=0,
            cached_tokens=effect.read_tokens,
            cache_write_tokens=effect.write_tokens,
            reasoning_tokens=0,
        )

    def admit(
        self, request: NeutralRequest, caller: Caller | None = None, record: JournalRecord | None = None
    ) -> Admission:
        """``caller``: the conversation identity inputs (header, credential); ``record``: the journal
        entry to tag with the conversation, step and turn."""
        input_tokens = _input_tokens(request)
        with self._lock:
            # The same selection POST /admin-api/match/explain renders; admitting adds the commit.
            chosen = select(self._plan, self._cursors, self._conversations, request, caller or DEFAULT_CALLER)
            if chosen.outcome == "echo":
                text = request.latest_user_text()
                echo = ScriptedOutput(
                    kind="text", text=text, chunks=(text,), output_tokens=estimate_text_tokens(text)
                )
                return Admission(self._generation, 0, None, echo, None, input_tokens)
            if chosen.outcome == "generate":
                return Admission(self._generation, 0, None, None, None, input_tokens, generated=True)
            verdict, inputs = chosen.graph, chosen.inputs
            if verdict is not None and inputs is not None and record is not None:
                record.owned_by(verdict.graph.id, inputs.conversation_id, inputs.view.turn, chosen.step)
            if chosen.error is not None:
                raise chosen.error
            book = self._conversations
            if verdict is not None and inputs is not None and book is not None:
                ticket = book.reserve(verdict, inputs)
                try:
                    self._make_room(ticket.delta_bytes, f"conversation step {ticket.step_id!r}")
                except MemoryBudgetExceeded:
                    book.rollback(ticket)
                    raise
                self._charge_memory()
                return Admission(
                    self._generation,
                    ticket.delay_ms,
                    ticket.response,
                    None,
                    ticket.graph_id,
                    input_tokens,
                    ticket,
                )
            scenario = chosen.scenario
            assert scenario is not None and scenario.position is not None
            self._cursors[scenario.index] = scenario.next_cursor
            responses = scenario.scenario.responses
            response = responses[scenario.position]
            return Admission(
                self._generation,
                response.delay_ms,
                response,
                None,
                scenario.scenario.id,
                input_tokens,
                more=tuple(responses[position] for position in scenario.more),
            )

    def complete(
        self, admission: Admission, request: NeutralRequest, wire: WireIdentity | None = None
    ) -> Completion:
        with self._lock:
            if not self.is_current(admission.generation):
                raise RequestSuperseded(
                    "the session was reset, reconfigured or deleted while this request was pending"
                )
            ticket = admission.conversation
            if ticket is not None and ticket.replay is not None:
                return ticket.replay  # the retained result: nothing advances
            # Prompts shorter than the cacheable minimum can neither read nor write the cache, and a
            # scripted error is answered before any prompt processing.
            scripted_error = admission.response is not None and admission.response.error is not None
            cache = (
                self._prompt_cache.observe(request)
                if admission.input_tokens >= MIN_CACHEABLE_TOKENS
                and not scripted_error
                and not isinstance(request, OperationRequest)
                else NO_CACHE_EFFECT
            )
            plan_now = self._plan
        response = admission.response
        output: ScriptedOutput | None
        if admission.generated:  # outside the lock: generating vectors takes a while
            determinism = plan_now.determinism if plan_now is not None else None
            output = generate(request, determinism.seed if determinism is not None else None)
            override = None
            response_index = None
            plan = None
        elif response is None:
            output = admission.echo
            assert output is not None
            override = None
            response_index = None
            plan = None
        else:
            if response.error is not None:
                error = response.error
                self._settle(admission, None)  # a committed error step advances the graph
                raise ScriptedError(
                    error.message,
                    code=error.code,
                    http_status=error.status,
                    error_type=error.type,
                    retry_after=error.retry_after,
                    should_retry=error.should_retry,
                )
            output = response.output
            assert output is not None
            if wire is not None and wire.seeded and response.generated_call_ids:
                output = with_generated_call_ids(output, wire, response.generated_call_ids)
            override = response.usage
            response_index = response.index
            plan = response.stream_delivery
        assert output is not None
        more_choices = self._more_choices(admission, request, output, wire)
        usage = build(
            Usage,
            input_tokens=admission.input_tokens,
            output_tokens=output.output_tokens + sum(choice.output_tokens for choice in more_choices),
            cached_tokens=cache.read_tokens,
            cache_write_tokens=cache.write_tokens,
            reasoning_tokens=output.reasoning.tokens if output.reasoning is not None else 0,
        )
        if override is not None:
            usage = usage.model_copy(update=override.model_dump())
        completion = build(
            Completion,
            output=output,
            usage=usage,
            response_id=wire.id_for() if wire is not None else self._ids.new_hex(12),
            created_at=wire.created_at() if wire is not None else int(self._clock.now()),
            scenario_id=admission.scenario_id,
            response_index=response_index,
            stream_delivery=plan,
            more_choices=more_choices,
        )
        if admission.conversation is not None:
            self._settle(admission, completion)
        return completion

    @staticmethod
    def _more_choices(
        admission: Admission, request: NeutralRequest, first: ScriptedOutput, wire: WireIdentity | None
    ) -> tuple[ScriptedOutput, ...]:
        """Choices 1..n-1: a scenario's next responses, else (echo, conversation step) the same answer."""
        if request.choices <= 1:
            return ()
        if not admission.more:
            return (first,) * (request.choices - 1)
        outputs = []
        for response in admission.more:
            output = response.output
            assert output is not None  # an error among choices 2..n is refused by judge_scenario
            if wire is not None and wire.seeded and response.generated_call_ids:
                output = with_generated_call_ids(output, wire, response.generated_call_ids)
            outputs.append(output)
        return tuple(outputs)

    # --- rate limits and pacing (docs/realistic-answers.md) ------------------------------------------

    def rate_take(self, request: NeutralRequest) -> None:
        """Count a request into the ``rate_limits`` window, or raise its 429 (consuming nothing)."""
        if self._rate is None:
            return
        input_tokens = _input_tokens(request)
        with self._lock:
            if self._rate is not None:
                self._rate.take(self._clock.monotonic(), input_tokens)

    def rate_spend(self, tokens: int) -> None:
        """Count an answer's output tokens into the window."""
        if self._rate is None:
            return
        with self._lock:
            if self._rate is not None:
                self._rate.spend(self._clock.monotonic(), tokens)

    def rate_state(self) -> RateState | None:
        """The window as rate-limit headers show it; reset times on the wire clock (fixed or live)."""
        rate = self._rate
        if rate is None:
            return None
        plan = self._plan
        fixed = plan.determinism.fixed_epoch if plan is not None and plan.determinism is not None else None
        with self._lock:
            return rate.state(self._clock.monotonic(), fixed if fixed is not None else self._clock.now())

    def pacing_for(self, admission: Admission) -> Pacing | None:
        """The pacing of this admission's streamed answer: the response's or scenario's, else the
        session's; none for a response whose own ``stream_delivery`` plan writes the stream."""
        response = admission.response
        if response is not None:
            if response.stream_delivery is not None or response.error is not None:
                return None
            if response.pacing is not None:
                return response.pacing
        plan = self._plan
        return plan.config.pacing if plan is not None else None

    # --- record and replay (docs/recording.md) ------------------------------------------------------

    def upstream_for(self, provider: str) -> str | None:
        """The base URL this session forwards ``provider`` requests to when its fixtures cannot answer."""
        plan = self._plan
        return plan.config.upstreams.get(provider) if plan is not None else None

    @property
    def recording(self) -> bool:
        return self._recorder is not None

    def recording_room(self) -> None:
        """Raise 507 when the recording already holds ``max_exchanges`` (before anything is forwarded)."""
        recorder = self._recorder
        if recorder is not None and recorder.full:
            raise RecordingFull(
                f"this session's recording already keeps {recorder.settings.max_exchanges} exchanges "
                "(recording.max_exchanges); fetch it and reset the session"
            )

    def keep_exchange(self, exchange: Exchange, secrets: tuple[str, ...], generation: int) -> bool:
        """Keep an answered exchange, redacted (``secrets``: the credential the client presented, and a
        signer's own key id and token; and the configured patterns). False when it was not kept: no
        recording, the session moved on (``generation``), or it does not fit ``max_bytes`` or the memory
        budget (counted as dropped)."""
        recorder = self._recorder
        if recorder is None:
            return False
        redacted = recorder.redactor.exchange(exchange, secrets)  # outside the lock: CPU only
        size = redacted.retained_bytes()
        with self._lock:
            if self._recorder is not recorder or not self.is_current(generation):
                return False
            budget = self._budget
            if not recorder.fits(size) or (budget is not None and not budget.make_room(size)):
                recorder.dropped += 1
                return False
            recorder.keep(redacted, size)
            self._charge_memory()
            return True

    def drop_exchange(self) -> None:
        """An answered exchange that could not be kept (over the recorded-answer limits): counted."""
        with self._lock:
            if self._recorder is not None:
                self._recorder.dropped += 1

    def recorded(self) -> tuple[list[Exchange], int]:
        """The kept exchanges in arrival order, and how many were dropped."""
        with self._lock:
            recorder = self._recorder
            return (recorder.exchanges(), recorder.dropped) if recorder is not None else ([], 0)

    # --- conversation graphs -----------------------------------------------------------------------

    def _settle(self, admission: Admission, completion: Completion | None) -> None:
        ticket = admission.conversation
        with self._lock:
            if ticket is not None and self._conversations is not None:
                self._conversations.commit(ticket, completion)
                self._charge_memory()

    def release(self, admission: Admission) -> None:
        """The request ended before ``complete`` committed it (client gone, superseded, an error): roll its
        conversation reservation back. A no-op for committed or scenario admissions."""
        ticket = admission.conversation
        if ticket is not None:
            with self._lock:
                if self._conversations is not None:
                    self._conversations.rollback(ticket)
                    self._charge_memory()

    def queue_status(self) -> list[QueueStatus]:
        """Each scenario's queue: responses consumed in the current pass and the next one to answer."""
        with self._lock:
            plan, cursors = self._plan, list(self._cursors)
        if plan is None:
            return []
        statuses = []
        for index, (scenario, cursor) in enumerate(zip(plan.scenarios, cursors, strict=True)):
            upcoming = queue_position(scenario, cursor)
            statuses.append(
                QueueStatus(
                    index=index,
                    scenario=scenario.id,
                    terminal_policy=scenario.terminal_policy,
                    length=len(scenario.responses),
                    consumed=cursor,
                    next_response_index=upcoming,
                    exhausted=upcoming is None,
                )
            )
        return statuses

    def conversation_status(self, conversation_id: str | None = None) -> list[ConversationStatus]:
        with self._lock:
            book = self._conversations
            return book.status(conversation_id) if book is not None else []

    def explain(self, request: NeutralRequest, caller: Caller) -> MatchExplanation:
        """What ``admit`` would do with this request, without changing anything."""
        with self._lock:
            return explain_match(self._plan, list(self._cursors), self._conversations, request, caller)
