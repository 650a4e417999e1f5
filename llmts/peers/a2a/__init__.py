"""Scripted A2A agents (docs/a2a.md): the agent card, and the JSON-RPC methods of both wires the official
``a2a-sdk`` speaks (1.0 and 0.3), answered from the agent's ``responses`` and its stored tasks.

Modules: ``card`` (the card both SDK majors accept), ``engine`` (the method table and what each method
answers), ``state`` (one agent's cursor and bounded task store, with its own lock), ``model`` (the neutral
task and message), ``wire``/``wire_v1``/``wire_v03`` (the two spellings). Sans-IO: the HTTP side is
``llmts/server/peers/a2a_http.py``.
"""

from __future__ import annotations

from llmts.peers.a2a.card import agent_card
from llmts.peers.a2a.engine import A2aAnswer, A2aCall, answer, is_method
from llmts.peers.a2a.state import A2aAgentState

__all__ = ["A2aAgentState", "A2aAnswer", "A2aCall", "agent_card", "answer", "is_method"]
