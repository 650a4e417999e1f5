"""One test session: a narrow façade over its parts, with the one lock that guards them.

The parts, each with its own small interface (callers reach them as ``session.<part>``):

* ``plan`` (``PlanView``): what the configuration says (models, credentials, upstreams, pacing, wire ids);
* ``journal`` (``Journal``): the request journal, with its own lock;
* ``store`` (``SessionStore``): the objects providers keep;
* ``rates`` (``SessionRates``): the ``rate_limits`` window;
* ``spend`` (``SessionSpend``): running token and cost totals, prices and the ``budget``;
* ``recorder`` (``SessionRecorder``): what a ``record: true`` session keeps;
* ``queues`` (``SessionQueues``): each scenario's cursor;
* ``conversations`` (``SessionConversations``): the conversation graphs' state;
* ``peers`` (``SessionPeers``): the state of the session's MCP servers and A2A agents.

Locking: one ``threading.Lock`` per session, shared by every part but the journal. A part's public
methods take it for their own step; its ``*_locked`` methods are the session's, called with it held, so the
steps that span parts stay atomic: ``configure``/``reset``/``retire`` swap and clear every part and bump the
generation in one step, and ``admit`` selects (plan, cursors, conversation state) and commits in one step.
Each part charges what it retains to the process memory budget itself (``MemoryShare``). No session ever
waits on another session's lock.

A request goes through two steps:

* ``admit`` (under the lock, no waiting): pick the scenario, check the fixture fits the request, and
  consume the queue entry. Order of admission is the order answers are handed out.
* ``complete`` (after the fixture's delay, which the caller performs outside the lock): turn the admission
  into a ``Completion``, or raise the scripted error. If the session was reset, reconfigured or deleted in
  between, the request is superseded (409) instead.
"""

from __future__ import annotations

import threading

from llmts.errors import RequestSuperseded, ScriptedError
from llmts.runtime.admission import Admission, input_tokens
from llmts.runtime.clock import Clock, IdSource
from llmts.runtime.conversations import DEFAULT_CALLER, Caller, ConversationBook, compile_graphs
from llmts.runtime.conversations.explain import explain_match
from llmts.runtime.conversations.selection import select
from llmts.runtime.determinism import WireIdentity, with_generated_call_ids
from llmts.runtime.journal import Journal, JournalRecord
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.operations import generate
from llmts.runtime.plans import compile_config
from llmts.runtime.prompt_cache import MIN_CACHEABLE_TOKENS, NO_CACHE_EFFECT, PromptCache
from llmts.runtime.recording import Recorder
from llmts.runtime.resident_size import configuration_size
from llmts.runtime.session_conversations import SessionConversations
from llmts.runtime.session_memory import MemoryShare
from llmts.runtime.session_peers import SessionPeers
from llmts.runtime.session_plan import PlanView
from llmts.runtime.session_queues import SessionQueues
from llmts.runtime.session_rates import SessionRates
from llmts.runtime.session_recorder import SessionRecorder
from llmts.runtime.session_spend import SessionSpend
from llmts.runtime.session_store import SessionStore
from llmts.runtime.tokens import counted_output_tokens, estimate_text_tokens
from llmts.schema.config import SessionConfig
from llmts.schema.control import SessionAnnotations
from llmts.schema.conversations import MatchExplanation
from llmts.schema.neutral import Completion, NeutralRequest, OperationRequest, ScriptedOutput, Usage, build

__all__ = ["Admission", "Session"]


class Session:
    def __init__(
        self, session_id: str, *, clock: Clock, ids: IdSource, budget: MemoryBudget | None = None
    ) -> None:
        self.id = session_id
        self.created_at = clock.now()
        # What the client said about the session (``SessionAnnotations``); replaced whole, never reset.
        self.annotations = SessionAnnotations()
        self._clock = clock
        self._ids = ids
        self._lock = lock = threading.Lock()
        self._generation = 0
        self._retired = False
        # Read and written only by ``warm_cache`` and ``complete``, under the lock.
        self._prompt_cache = PromptCache()
        self.plan = PlanView(clock, ids)
        self.journal = Journal(budget=budget, clock=clock)
        self.store = SessionStore(lock, budget)
        self.rates = SessionRates(lock, clock)
        self.spend = SessionSpend(lock)
        self.recorder = SessionRecorder(lock, budget, self.is_current)
        self.queues = SessionQueues(lock)
        self.conversations = SessionConversations(lock, budget)
        self.peers = SessionPeers(lock, budget)
        # The configuration in force, at its estimated resident size (runtime/resident_size.py).
        self._configuration_share = MemoryShare(budget, "configuration")

    # --- the lifecycle of the whole session --------------------------------------------------------

    @property
    def generation(self) -> int:
        return self._generation

    def is_current(self, generation: int) -> bool:
        return not self._retired and self._generation == generation

    def configure(self, config: SessionConfig) -> None:
        plan = compile_config(config)  # may be slow for big configs: done before taking the lock
        book = ConversationBook(compile_graphs(config)) if config.conversations else None
        recorder = Recorder(config.recording) if config.record else None
        fixed = config.determinism is not None and config.determinism.fixed_utc is not None
        size = configuration_size(config)
        with self._lock:
            # Refused (507) before anything changes when it could not fit even once the state this
            # configure clears (the session's stored objects, conversation state, recording, journal and
            # the peer states it cannot renew) and every other journal entry were gone; what other
            # sessions' journals must give up is evicted only after that state went.
            share = self._configuration_share
            freed = (
                self.store.memory_charged
                + self.conversations.memory_charged
                + self.recorder.memory_charged
                + self.peers.memory_dropped_on_clear
            )
            share.check_fits(size - share.charged - freed, "the configuration (its estimated resident size)")
            self.plan.current = plan
            self.conversations.install_locked(book)
            self.recorder.install_locked(recorder)
            self.journal.apply(config.journal, fixed_clock=fixed)
            self._clear_state()
            share.evict_for(size - share.charged)
            share.charge(size)

    def reset(self) -> None:
        with self._lock:
            self._clear_state()

    def _clear_state(self) -> None:
        """Queues, prompt cache, stored objects, conversation state, recording, journal and rate window
        start over; pending work is superseded (lock held)."""
        plan = self.plan.current
        self.queues.restart_locked(plan)
        self._prompt_cache.clear()
        self.conversations.clear_locked()
        self.store.clear_locked()
        self.peers.clear_locked(plan.config if plan is not None else None)
        self.recorder.clear_locked()
        self.journal.clear()
        self.spend.restart_locked(plan.config if plan is not None else None)
        if plan is not None:
            self.rates.restart_locked(plan.config.rate_limits, plan.determinism)
        else:
            self.rates.restart_locked(None, None)
        self._generation += 1

    def retire(self) -> None:
        """The session was deleted: supersede whatever is still pending."""
        with self._lock:
            self._retired = True
            self._generation += 1
            # Nobody can reach a deleted session's state any more: give its memory back to the process.
            self.conversations.retire_locked()
            self.store.retire_locked()
            self.peers.retire_locked()
            self.recorder.retire_locked()
            self._configuration_share.detach()
        self.journal.detach()

    # --- one request: admit, wait (the caller's), complete or release ------------------------------

    def warm_cache(self, request: NeutralRequest) -> Usage:
        """Only write/read the prompt cache (an adapter's cache warm-up): no scripted answer is consumed."""
        with self._lock:
            effect = self._prompt_cache.observe(request)
        return build(
            Usage,
            input_tokens=input_tokens(request),
            output_tokens=0,
            cached_tokens=effect.read_tokens,
            cache_write_tokens=effect.write_tokens,
            reasoning_tokens=0,
        )

    def admit(
        self,
        request: NeutralRequest,
        caller: Caller | None = None,
        record: JournalRecord | None = None,
        *,
        in_stream: bool = False,
    ) -> Admission:
        """``caller``: the conversation identity inputs (header, credential); ``record``: the journal
        entry to tag with the conversation, step and turn; ``in_stream``: the request's route lets
        in-stream ``stream_delivery`` plans act on its stream (the server knows routes, the runtime not)."""
        tokens = input_tokens(request)
        with self._lock:
            # The same selection POST /admin-api/match/explain renders; admitting adds the commit.
            cursors = self.queues.cursors
            book = self.conversations.book
            chosen = select(
                self.plan.current, cursors, book, request, caller or DEFAULT_CALLER, in_stream=in_stream
            )
            if chosen.outcome == "echo":
                text = request.latest_user_text()
                echo = ScriptedOutput(
                    kind="text", text=text, chunks=(text,), output_tokens=estimate_text_tokens(text)
                )
                return Admission(self._generation, 0, None, echo, None, tokens)
            if chosen.outcome == "generate":
                return Admission(self._generation, 0, None, None, None, tokens, generated=True)
            verdict, inputs = chosen.graph, chosen.inputs
            if verdict is not None and inputs is not None and record is not None:
                record.owned_by(verdict.graph.id, inputs.conversation_id, inputs.view.turn, chosen.step)
            if chosen.error is not None:
                raise chosen.error
            if verdict is not None and inputs is not None and book is not None:
                ticket = self.conversations.reserve_locked(verdict, inputs)
                return Admission(
                    self._generation, ticket.delay_ms, ticket.response, None, ticket.graph_id, tokens, ticket
                )
            scenario = chosen.scenario
            assert scenario is not None and scenario.position is not None
            cursors[scenario.index] = scenario.next_cursor
            responses = scenario.scenario.responses
            response = responses[scenario.position]
            return Admission(
                self._generation,
                response.delay_ms,
                response,
                None,
                scenario.scenario.id,
                tokens,
                more=tuple(responses[position] for position in scenario.more),
            )

    def explain(
        self, request: NeutralRequest, caller: Caller, *, in_stream: bool = False
    ) -> MatchExplanation:
        """What ``admit`` would do with this request, without changing anything."""
        with self._lock:
            cursors = list(self.queues.cursors)
            book = self.conversations.book
            return explain_match(self.plan.current, cursors, book, request, caller, in_stream=in_stream)

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
            plan_now = self.plan.current
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
                if admission.conversation is not None:  # a committed error step advances the graph
                    self.conversations.commit(admission.conversation, None)
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
        count_text = request.exact_tokens.count_text if request.exact_tokens is not None else None
        usage = build(
            Usage,
            input_tokens=admission.input_tokens,
            output_tokens=counted_output_tokens(output, count_text)
            + sum(counted_output_tokens(choice, count_text) for choice in more_choices),
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
            self.conversations.commit(admission.conversation, completion)
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

    def release(self, admission: Admission) -> None:
        """The request ended before ``complete`` committed it (client gone, superseded, an error): roll its
        conversation reservation back. A no-op for committed or scenario admissions."""
        ticket = admission.conversation
        if ticket is not None:
            self.conversations.rollback(ticket)
