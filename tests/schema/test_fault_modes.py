"""``StreamDelivery`` validation, driven by the mode table, says what it always said (exact messages)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from llmts.schema.faults import StreamDelivery


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"mode": "delay_then_continue"}, "delay_then_continue needs delay_ms between 1 and 60000"),
        ({"mode": "delay_then_continue", "delay_ms": 60_001}, "delay_then_continue needs delay_ms between 1"),
        ({"mode": "stall"}, "stall needs delay_ms (how long to hold the connection) 1..300000"),
        ({"mode": "abort_connection", "delay_ms": 5}, "abort_connection takes no delay_ms"),
        ({"mode": "slow_drip", "bytes_per_second": 9, "delay_ms": 5}, "slow_drip takes no delay_ms"),
        (
            {"mode": "truncate_bytes"},
            "cut_bytes is required by truncate_bytes and allowed with no other mode",
        ),
        (
            {"mode": "early_clean_end", "cut_bytes": 3},
            "cut_bytes is required by truncate_bytes and allowed with no other mode",
        ),
        ({"mode": "slow_drip"}, "bytes_per_second is required by slow_drip and allowed with no other mode"),
        (
            {"mode": "stall", "delay_ms": 5, "bytes_per_second": 9},
            "bytes_per_second is required by slow_drip and allowed with no other mode",
        ),
        ({"mode": "http_error_page"}, "http_error_page needs status 502, 503 or 504"),
        ({"mode": "http_error_page", "status": 500}, "http_error_page needs status 502, 503 or 504"),
        ({"mode": "empty_response", "status": 0}, "status is only allowed with http_error_page"),
        ({"mode": "slow_drip", "bytes_per_second": 9, "after_content_frames": 1}, "slow_drip does not take"),
        ({"mode": "reset_before_headers", "after_content_frames": 2}, "reset_before_headers does not take"),
        # Several problems: the first in the table's order (delay_ms, cut_bytes, bytes_per_second, status).
        ({"mode": "early_clean_end", "status": 502, "delay_ms": 1}, "early_clean_end takes no delay_ms"),
        ({"mode": "truncate_bytes", "status": 502}, "cut_bytes is required by truncate_bytes"),
    ],
)
def test_plan_errors_keep_their_messages(plan: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        StreamDelivery.model_validate(plan)
    (error,) = caught.value.errors()
    assert error["msg"].startswith("Value error, " + message)


def test_valid_plans_serialize_compactly() -> None:
    dump = StreamDelivery.model_validate
    assert dump({"mode": "early_clean_end"}).model_dump() == {
        "mode": "early_clean_end",
        "after_content_frames": 1,
    }
    assert dump({"mode": "slow_drip", "bytes_per_second": 5}).model_dump() == {
        "mode": "slow_drip",
        "bytes_per_second": 5,
    }
    assert dump({"mode": "http_error_page", "status": 503}).model_dump() == {
        "mode": "http_error_page",
        "status": 503,
    }
    assert dump({"mode": "stall", "delay_ms": 7, "after_content_frames": 2}).model_dump() == {
        "mode": "stall",
        "after_content_frames": 2,
        "delay_ms": 7,
    }
    assert dump({"mode": "early_clean_end", "delay_ms": 0}).delay_ms == 0  # 0 is "not given"
