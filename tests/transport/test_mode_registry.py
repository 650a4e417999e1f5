"""The schema's mode table, the transport's registry and the names the configuration accepts are one list.

A mode added to one of them and forgotten in another fails here (docs/contributing.md, "Adding a stream
delivery fault mode").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest

from llmts.errors import ConfigurationInvalid
from llmts.schema import parse_session_config
from llmts.schema.faults import (
    CONNECTION_MODES,
    HARMLESS_MODES,
    IN_STREAM_MODES,
    MODES,
    PACING_MODES,
    DeliveryKind,
    DeliveryMode,
    ModeSpec,
    StreamDelivery,
)
from llmts.transport.modes import CONNECTION_UNITS, REGISTRY, STREAM_UNITS, Drop, InStream, Paced, Replace

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _minimal_plan(name: str, spec: ModeSpec) -> dict[str, Any]:
    """The smallest valid plan of a mode, built from its table row alone."""
    return {"mode": name, **{need.parameter: min(need.accepts) for need in spec.needs}}


def _configure(plan: dict[str, Any]) -> StreamDelivery:
    config = parse_session_config(
        {"scenarios": [{"responses": [{"text": "ab", "chunks": ["a", "b"], "stream_delivery": plan}]}]}
    )
    delivery = config.scenarios[0].responses[0].stream_delivery
    assert delivery is not None
    return delivery


def test_table_registry_and_literal_name_the_same_modes_in_the_same_order() -> None:
    assert tuple(MODES) == get_args(DeliveryMode)
    assert tuple(REGISTRY) == tuple(MODES)
    schema_enum = StreamDelivery.model_json_schema()["properties"]["mode"]["enum"]
    assert schema_enum == list(MODES)


@pytest.mark.parametrize("name", list(MODES))
def test_each_unit_has_the_shape_of_its_kind(name: str) -> None:
    unit, spec = REGISTRY[name], MODES[name]
    assert unit.kind is spec.kind
    expected = {
        DeliveryKind.IN_STREAM: (InStream,),
        DeliveryKind.PACING: (Paced,),
        DeliveryKind.CONNECTION: (Drop, Replace),
    }[spec.kind]
    assert isinstance(unit, expected)
    assert (name in STREAM_UNITS) is (spec.kind is not DeliveryKind.CONNECTION)
    assert (name in CONNECTION_UNITS) is (spec.kind is DeliveryKind.CONNECTION)


def test_derived_sets_partition_the_table() -> None:
    assert set(MODES) == IN_STREAM_MODES | PACING_MODES | CONNECTION_MODES
    assert not IN_STREAM_MODES & PACING_MODES and not PACING_MODES & CONNECTION_MODES
    assert not IN_STREAM_MODES & CONNECTION_MODES
    assert {name for name, spec in MODES.items() if spec.in_stream} == IN_STREAM_MODES


@pytest.mark.parametrize("name", list(MODES))
def test_configuration_accepts_every_table_mode_with_exactly_its_parameters(name: str) -> None:
    spec = MODES[name]
    plan = _configure(_minimal_plan(name, spec))
    assert plan.mode == name and plan.in_stream is spec.in_stream and plan.harmless is spec.harmless
    for need in spec.needs:  # a needed parameter cannot be left out, nor be outside what the mode accepts
        missing = {key: value for key, value in _minimal_plan(name, spec).items() if key != need.parameter}
        with pytest.raises(ConfigurationInvalid, match=re.escape(need.message)):
            _configure(missing)
        with pytest.raises(ConfigurationInvalid, match=need.parameter):  # the table's or the field's bound
            _configure({**_minimal_plan(name, spec), need.parameter: max(need.accepts) + 1})
    needed = {need.parameter for need in spec.needs}
    for parameter, value in (("delay_ms", 5), ("cut_bytes", 4), ("bytes_per_second", 9), ("status", 503)):
        if parameter not in needed:  # any other parameter is refused
            with pytest.raises(ConfigurationInvalid, match=parameter):
                _configure({**_minimal_plan(name, spec), parameter: value})
    if spec.in_stream:
        assert _configure({**_minimal_plan(name, spec), "after_content_frames": 2}).after_content_frames == 2
    else:
        with pytest.raises(ConfigurationInvalid, match="does not take after_content_frames"):
            _configure({**_minimal_plan(name, spec), "after_content_frames": 1})


def test_configuration_refuses_a_name_outside_the_table() -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        _configure({"mode": "teleport"})
    assert caught.value.details[0]["path"].endswith("stream_delivery.mode")


def test_the_user_docs_list_each_mode_under_its_kind() -> None:
    text = (DOCS / "stream-delivery.md").read_text(encoding="utf-8")
    sections = {
        DeliveryKind.IN_STREAM: text.split("**In-stream modes**", 1)[1].split("**Paced mode:**", 1)[0],
        DeliveryKind.PACING: text.split("**Paced mode:**", 1)[1].split("**Connection modes**", 1)[0],
        DeliveryKind.CONNECTION: text.split("**Connection modes**", 1)[1].split("## Validation", 1)[0],
    }
    for kind, section in sections.items():
        documented = re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)
        assert documented == [name for name, spec in MODES.items() if spec.kind is kind]


def test_the_evidence_table_has_every_mode_and_harmless_modes_succeed() -> None:
    """Each mode's evidence row in docs/stream-delivery.md (step 5 of contributing.md's recipe); a harmless
    mode (the client still gets the whole, valid answer) is documented as a success. Derived from the
    table and the docs, so a new mode needs no edit here."""
    text = (DOCS / "stream-delivery.md").read_text(encoding="utf-8")
    table = text.split("| mode | `status` | `success` |", 1)[1].split("\n\n", 1)[0]
    success: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for name in re.findall(r"`([a-z_]+)`", cells[0].split("(", 1)[0]):
            success.setdefault(name, set()).add(cells[2])
    assert set(success) == set(MODES)
    assert HARMLESS_MODES and all(success[name] == {"true"} for name in HARMLESS_MODES)
    assert {name for name, spec in MODES.items() if spec.harmless} == HARMLESS_MODES


def test_the_configuration_reference_lists_every_mode() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    section = text.split("### stream_delivery", 1)[1].split("\n#", 1)[0]
    assert re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE) == list(MODES)
