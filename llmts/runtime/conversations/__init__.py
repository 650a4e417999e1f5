"""Conversation graphs at runtime: compile, predicates, identity, state machine, reservations, replay,
capacity, status and explanations. Provider-neutral: adapters only supply normalized requests."""

from __future__ import annotations

from llmts.runtime.conversations.book import ConversationBook
from llmts.runtime.conversations.explain import explain_match, neutral_from_explained
from llmts.runtime.conversations.graph import GraphPlan, GraphsPlan, StepPlan, compile_graphs
from llmts.runtime.conversations.identity import (
    CONVERSATION_ENVIRON,
    CONVERSATION_HEADER,
    DEFAULT_CALLER,
    DEFAULT_CONVERSATION_ID,
    Caller,
    conversation_id_from,
    credential_hash,
)
from llmts.runtime.conversations.machine import Action, Event, Phase, TerminalAction, transition
from llmts.runtime.conversations.state import ConversationState, Ticket

__all__ = [
    "CONVERSATION_ENVIRON",
    "CONVERSATION_HEADER",
    "DEFAULT_CALLER",
    "DEFAULT_CONVERSATION_ID",
    "Action",
    "Caller",
    "ConversationBook",
    "ConversationState",
    "Event",
    "GraphPlan",
    "GraphsPlan",
    "Phase",
    "StepPlan",
    "TerminalAction",
    "Ticket",
    "compile_graphs",
    "conversation_id_from",
    "credential_hash",
    "explain_match",
    "neutral_from_explained",
    "transition",
]
