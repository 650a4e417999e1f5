"""The journal, determinism and verification models: defaults, round trips, and what the builder emits."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from llmts import ConfigBuilder
from llmts.schema.verify import ToolExpectation, VerificationRequest


def test_builder_emits_journal_and_determinism_sections() -> None:
    config = (
        ConfigBuilder()
        .journal(max_entries=50)
        .determinism("run-1", "2026-01-01T01:00:00+01:00")
        .scenario()
        .text("x")
    ).build()
    dumped = config.model_dump(mode="json")
    assert dumped["journal"] == {"max_entries": 50, "max_bytes": 16 * 1024 * 1024, "preview_bytes": 64 * 1024}
    assert dumped["determinism"] == {"seed": "run-1", "fixed_utc": "2026-01-01T00:00:00Z"}
    assert ConfigBuilder().determinism("s").scenario().text("x").build().model_dump(mode="json")[
        "determinism"
    ] == {"seed": "s"}
    assert "journal" not in ConfigBuilder().scenario().text("x").build().model_dump(mode="json")


def test_explicit_null_is_kept_apart_from_unset() -> None:
    expect_null = ToolExpectation(kind="response_call", arguments=None)
    assert expect_null.compares_arguments and not ToolExpectation(kind="response_call").compares_arguments
    request = VerificationRequest(
        requests=[{"name": "r", "maximum_count": None, "tools": [expect_null]}],  # type: ignore[list-item]
    )
    sent = request.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert sent == {
        "requests": [
            {"name": "r", "maximum_count": None, "tools": [{"kind": "response_call", "arguments": None}]}
        ]
    }
    again = VerificationRequest.model_validate(sent)
    assert again.requests[0].maximum_count is None and again.requests[0].minimum_count == 1
    assert again.requests[0].tools[0].compares_arguments


def test_query_aliases_from() -> None:
    request = VerificationRequest.model_validate(
        {"scope": {"from": "2026-01-01T00:00:00Z"}, "no_unexpected_calls": True}
    )
    assert request.model_dump(mode="json", by_alias=True, exclude_unset=True)["scope"] == {
        "from": "2026-01-01T00:00:00Z"
    }


@pytest.mark.parametrize("path", ["$.a[*]", "a.b", "$..x", "/a/~2"])
def test_field_paths_are_checked(path: str) -> None:
    with pytest.raises(ValidationError):
        ToolExpectation(kind="result", fields=[{"path": path, "expected_json": 1}])  # type: ignore[list-item]
