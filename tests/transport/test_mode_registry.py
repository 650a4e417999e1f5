"""The schema's mode table, the transport's registry and the names the configuration accepts are one list.

The registry is built from the units' own declarations (``@in_stream("stall")``), and a unit that names no
row of the table, a row without a unit, or a unit of the wrong kind fails the import; the tests below prove
that, and pin the table to what the configuration accepts and to the docs (docs/contributing.md, "Adding a
stream delivery fault mode").
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable, Iterable
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
from llmts.transport import modes
from llmts.transport.modes import (
    CONNECTION_UNITS,
    REGISTRY,
    STREAM_UNITS,
    Drop,
    InStream,
    Paced,
    Replace,
    stall,
)
from llmts.transport.modes.base import load_units, registry_of

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _bound(accepts: range | frozenset[int], pick: Callable[[Iterable[int]], int]) -> int:
    """``min`` or ``max`` of what a parameter accepts; a range's are its ends (``min`` and ``max`` would
    walk all of it, up to ten million values)."""
    if isinstance(accepts, range):
        return accepts[0] if pick is min else accepts[-1]
    return pick(accepts)


def _minimal_plan(name: str, spec: ModeSpec) -> dict[str, Any]:
    """The smallest valid plan of a mode, built from its table row alone."""
    return {"mode": name, **{need.parameter: _bound(need.accepts, min) for need in spec.needs}}


def _parse_plan(plan: dict[str, Any]) -> StreamDelivery:
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
    plan = _parse_plan(_minimal_plan(name, spec))
    assert plan.mode == name and plan.in_stream is spec.in_stream and plan.harmless is spec.harmless
    for need in spec.needs:  # a needed parameter cannot be left out, nor be outside what the mode accepts
        missing = {key: value for key, value in _minimal_plan(name, spec).items() if key != need.parameter}
        with pytest.raises(ConfigurationInvalid, match=re.escape(need.message)):
            _parse_plan(missing)
        with pytest.raises(ConfigurationInvalid, match=need.parameter):  # the table's or the field's bound
            _parse_plan({**_minimal_plan(name, spec), need.parameter: _bound(need.accepts, max) + 1})
    needed = {need.parameter for need in spec.needs}
    for parameter, value in (("delay_ms", 5), ("cut_bytes", 4), ("bytes_per_second", 9), ("status", 503)):
        if parameter not in needed:  # any other parameter is refused
            with pytest.raises(ConfigurationInvalid, match=parameter):
                _parse_plan({**_minimal_plan(name, spec), parameter: value})
    if spec.in_stream:
        assert _parse_plan({**_minimal_plan(name, spec), "after_content_frames": 2}).after_content_frames == 2
    else:
        with pytest.raises(ConfigurationInvalid, match="does not take after_content_frames"):
            _parse_plan({**_minimal_plan(name, spec), "after_content_frames": 1})


def test_configuration_refuses_a_name_outside_the_table() -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        _parse_plan({"mode": "teleport"})
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


# --- the registry is the units' own declarations, checked at import -------------------------------------

UNIT_MODULES = [getattr(modes, name) for name in sorted(REGISTRY)]  # each mode's module bears its name


def _module(name: str, source: str) -> types.ModuleType:
    """A module of the modes package that was never on disk (its functions' ``__module__`` is ``name``)."""
    module = types.ModuleType(f"llmts.transport.modes.{name}")
    exec(textwrap.dedent(source), module.__dict__)
    return module


HEARTBEAT = _module(
    "heartbeat_comment",
    """
    from llmts.transport.modes.base import in_stream

    @in_stream("heartbeat_comment")
    def act(at):
        yield b": keep-alive\\n\\n"
        return True
    """,
)


def test_the_registry_is_built_from_the_declarations_in_table_order() -> None:
    assert registry_of(reversed(UNIT_MODULES), MODES) == REGISTRY
    assert list(registry_of(reversed(UNIT_MODULES), MODES)) == list(MODES)
    assert all(unit is REGISTRY[name] for name, unit in registry_of(UNIT_MODULES, MODES).items())


def test_a_unit_of_a_mode_the_table_lacks_fails() -> None:
    with pytest.raises(
        RuntimeError, match=r"modes\.heartbeat_comment declares a unit of mode 'heartbeat_comment', wh"
    ):
        registry_of([*UNIT_MODULES, HEARTBEAT], MODES)


def test_a_misnamed_unit_fails_and_so_does_the_row_it_leaves_without_a_unit() -> None:
    misnamed = _module(
        "stall",
        """
        from llmts.transport.modes.base import in_stream

        @in_stream("stal")
        def act(at):
            yield from ()
            return False
        """,
    )
    others = [module for module in UNIT_MODULES if module is not stall]
    with pytest.raises(RuntimeError, match="declares a unit of mode 'stal', which the mode table"):
        registry_of([*others, misnamed], MODES)
    with pytest.raises(
        RuntimeError, match=r"no unit in llmts/transport/modes/ declares the mode\(s\) stall of"
    ):
        registry_of(others, MODES)


def test_a_module_without_exactly_one_declared_unit_fails() -> None:
    undeclared = _module(
        "stall",
        """
        def act(at):
            yield from ()
            return False
        """,
    )
    with pytest.raises(RuntimeError, match=r"modes\.stall declares 0 mode units"):
        registry_of([*UNIT_MODULES, undeclared], MODES)
    # A unit imported from another module is that module's, not a second declaration of this one.
    borrowing = _module("borrowing", "from llmts.transport.modes.stall import act")
    with pytest.raises(RuntimeError, match=r"modes\.borrowing declares 0 mode units"):
        registry_of([*UNIT_MODULES, borrowing], MODES)
    two = _module(
        "two",
        """
        from llmts.transport.modes.base import drops_connection
        from llmts.transport.abort import close_silently, reset_connection

        @drops_connection("empty_response")
        def close(sock):
            return close_silently(sock)

        @drops_connection("reset_before_headers")
        def reset(sock):
            return reset_connection(sock)
        """,
    )
    with pytest.raises(RuntimeError, match=r"modes\.two declares 2 mode units"):
        registry_of([two], MODES)


def test_a_second_unit_of_a_mode_fails() -> None:
    again = _module(
        "stall_again",
        """
        from llmts.transport.modes.base import in_stream

        @in_stream("stall")
        def act(at):
            yield from ()
            return False
        """,
    )
    with pytest.raises(RuntimeError, match="stall_again declares a second unit of mode 'stall'"):
        registry_of([*UNIT_MODULES, again], MODES)


def test_a_unit_of_the_wrong_kind_fails() -> None:
    wrong = _module(
        "stall",
        """
        from llmts.transport.modes.base import drops_connection
        from llmts.transport.abort import close_silently

        @drops_connection("stall")
        def drop(sock):
            return close_silently(sock)
        """,
    )
    others = [module for module in UNIT_MODULES if module is not stall]
    with pytest.raises(
        RuntimeError, match="declares 'stall' as a connection unit, but the mode table says in_stream"
    ):
        registry_of([*others, wrong], MODES)


def test_loading_finds_every_module_of_a_package_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load_units`` imports every module of the directory (``base`` aside), so a new unit file is picked up
    without a registration line, and a stray one fails."""
    assert load_units(modes.__name__, modes.__path__, MODES) == REGISTRY
    package = tmp_path / "stray_modes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("")  # skipped, like the real package's shapes
    (package / "heartbeat_comment.py").write_text(
        "from llmts.transport.modes.base import in_stream\n\n\n"
        '@in_stream("heartbeat_comment")\ndef act(at):\n    yield b""\n    return True\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(
            RuntimeError, match=r"stray_modes\.heartbeat_comment declares a unit of mode 'heartbeat_c"
        ):
            load_units("stray_modes", [str(package)], MODES)
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] == "stray_modes"]:
            del sys.modules[name]


def test_importing_the_transport_fails_when_a_table_row_has_no_unit() -> None:
    """The check runs when ``llmts.transport.modes`` is imported (the server's start), not only in tests."""
    code = textwrap.dedent(
        """
        from types import MappingProxyType
        from llmts.schema import faults
        teleport = faults.ModeSpec(faults.DeliveryKind.CONNECTION, harmless=False)
        faults.MODES = MappingProxyType({**faults.MODES, "teleport": teleport})
        import llmts.transport.modes
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "RuntimeError: no unit in llmts/transport/modes/ declares the mode(s) teleport" in result.stderr
