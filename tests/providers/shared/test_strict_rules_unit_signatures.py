"""The strict rule tables in memory, on reasoning passed back: Anthropic thinking blocks, Gemini thought
signatures and OpenAI encrypted content must be the ones llmts issued (docs/realistic-answers.md,
"Strict request contract")."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmts.errors import StrictRequestRejected
from llmts.providers.anthropic_messages.strict_rules import MESSAGES_RULES
from llmts.providers.gemini.strict_rules import GENERATE_RULES
from llmts.providers.openai.strict_rules import RESPONSES_RULES
from llmts.providers.strict import check_strict
from tests.providers.shared.strict_rules_support import (
    BOOK,
    HI,
    KEYED_SIGNATURE,
    THINKING_ON,
    broken_rule,
    tool_result_block,
    tool_use_block,
)

HI_GEMINI = {"role": "user", "parts": [{"text": "Hi"}]}


@pytest.mark.parametrize(
    ("block", "rule"),
    [
        ({"type": "thinking", "thinking": "Think.", "signature": KEYED_SIGNATURE}, None),
        ({"type": "thinking", "thinking": "Think!", "signature": KEYED_SIGNATURE}, "thinking_block_modified"),
        ({"type": "thinking", "thinking": "t", "signature": "s"}, None),  # scripted with that text
        ({"type": "thinking", "thinking": "u", "signature": "s"}, "thinking_block_modified"),
        ({"type": "thinking", "thinking": "Think."}, "thinking_block_modified"),
        ({"type": "redacted_thinking", "data": KEYED_SIGNATURE}, None),
        ({"type": "redacted_thinking", "data": "x"}, None),
        ({"type": "redacted_thinking", "data": "forged"}, "thinking_block_modified"),
    ],
)
def test_anthropic_thinking_blocks_must_be_the_ones_issued(block: dict[str, Any], rule: str | None) -> None:
    messages = [
        HI,
        {"role": "assistant", "content": [block, tool_use_block("a")]},
        {"role": "user", "content": [tool_result_block("a")]},
    ]
    assert (
        broken_rule(MESSAGES_RULES, {"max_tokens": 4096, "thinking": THINKING_ON, "messages": messages})
        == rule
    )
    # Thinking off: passed-back blocks are not checked.
    assert broken_rule(MESSAGES_RULES, {"max_tokens": 4096, "messages": messages}) is None


def test_anthropic_adaptive_thinking_checks_blocks_but_requires_none() -> None:
    adaptive = {"type": "adaptive"}
    forged = {"type": "thinking", "thinking": "Think.", "signature": "forged"}
    with_forged = [
        HI,
        {"role": "assistant", "content": [forged, tool_use_block("a")]},
        {"role": "user", "content": [tool_result_block("a")]},
    ]
    without = [
        HI,
        {"role": "assistant", "content": [tool_use_block("a")]},
        {"role": "user", "content": [tool_result_block("a")]},
    ]
    body = {"max_tokens": 4096, "thinking": adaptive}
    assert broken_rule(MESSAGES_RULES, {**body, "messages": with_forged}) == "thinking_block_modified"
    # The model may not have thought in that turn: no thinking block is required, and no budget applies.
    assert broken_rule(MESSAGES_RULES, {**body, "messages": without}) is None


def test_anthropic_checks_blocks_of_early_turns_and_names_them() -> None:
    forged = {"type": "thinking", "thinking": "Think.", "signature": "forged"}
    messages = [HI, {"role": "assistant", "content": [forged, {"type": "text", "text": "Hi"}]}, HI]
    body = {"max_tokens": 4096, "thinking": THINKING_ON, "messages": messages}
    with pytest.raises(StrictRequestRejected) as error:
        check_strict(MESSAGES_RULES, orjson.dumps(body), body, BOOK)
    assert error.value.message.startswith("messages.1.content.0: Invalid `signature` in `thinking` block")


def test_gemini_thought_signatures_must_be_unchanged() -> None:
    import base64

    keyed = base64.b64encode(base64.b64decode(KEYED_SIGNATURE)).decode()
    good = {"contents": [HI_GEMINI, {"role": "model", "parts": [{"text": "a", "thoughtSignature": keyed}]}]}
    bad = {
        "contents": [HI_GEMINI, {"role": "model", "parts": [{"text": "a", "thought_signature": "Zm9yZ2Vk"}]}]
    }
    assert broken_rule(GENERATE_RULES, good) is None
    assert broken_rule(GENERATE_RULES, bad) == "thought_signature_corrupted"


@pytest.mark.parametrize(
    "dummy", [b"skip_thought_signature_validator", b"context_engineering_is_the_way_to_go"]
)
def test_gemini_accepts_the_documented_dummy_thought_signatures(dummy: bytes) -> None:
    """The thought signatures guide's dummy values pass the real API (pydantic-ai sends the first on every
    function call it passes back that had no signature); a regression: the rule once refused them."""
    import base64

    call = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": base64.b64encode(dummy).decode()}
    body = {
        "contents": [
            HI_GEMINI,
            {"role": "model", "parts": [call]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ]
    }
    assert broken_rule(GENERATE_RULES, body) is None
    call["thoughtSignature"] = base64.b64encode(dummy + b"x").decode()
    assert broken_rule(GENERATE_RULES, body) == "thought_signature_corrupted"


def test_responses_encrypted_content_must_be_issued() -> None:
    def body(content: Any) -> dict[str, Any]:
        reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": content}
        return {"model": "o3", "input": [HI, reasoning]}

    assert broken_rule(RESPONSES_RULES, body(KEYED_SIGNATURE)) is None
    assert broken_rule(RESPONSES_RULES, body("s")) is None  # a scripted signature
    assert broken_rule(RESPONSES_RULES, body(None)) is None
    assert broken_rule(RESPONSES_RULES, body("gAAAAforgedforgedforged==")) == "encrypted_content_unverified"
    with pytest.raises(StrictRequestRejected) as error:
        forged = body("gAAAAforgedforgedforged==")
        check_strict(RESPONSES_RULES, orjson.dumps(forged), forged, BOOK)
    assert error.value.code == "invalid_encrypted_content"
    assert error.value.message.startswith("The encrypted content gAAA...ed== could not be verified.")
