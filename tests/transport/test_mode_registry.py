"""The schema's mode table, the transport's registries and the names the configuration accepts are one list.

Each channel has its registry, built from the units' own declarations: the HTTP units
(``@in_stream("stall")``, ``llmts/transport/modes/``) for the table's http rows (``SSE_MODES``), the
WebSocket units (``@on_websocket("close")``, ``llmts/transport/websocket_modes/``) for its websocket rows
(``WEBSOCKET_MODES``). A unit that names no row of its channel, a row without a unit, or a unit of the
wrong kind or channel fails the import; the tests below prove that, and pin the table to what the
configuration accepts and to the docs (docs/contributing.md, "Adding a stream delivery fault mode").
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
    SSE_MODES,
    WEBSOCKET_MODES,
    DeliveryKind,
    DeliveryMode,
    ModeSpec,
    Parameter,
    StreamDelivery,
)
from llmts.transport import modes, websocket_modes
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
from llmts.transport.modes.base import channel_table, load_units, registry_of
from llmts.transport.websocket_modes import REGISTRY as WEBSOCKET_REGISTRY
from llmts.transport.websocket_modes import OnWebSocket
from llmts.transport.websocket_modes import close as websocket_close
from llmts.transport.websocket_modes import stall as websocket_stall
from tests.support.docs import doc_table

DOCS = Path(__file__).resolve().parents[2] / "docs"
HTTP_TABLE = channel_table("http")
WEBSOCKET_TABLE = channel_table("websocket")
# The docs' "acts on" cell of each channel.
CHANNEL_WORDS = {"http": "HTTP", "websocket": "WebSocket"}


def _bound(accepts: range | frozenset[int], pick: Callable[[Iterable[int]], int]) -> int:
    """``min`` or ``max`` of what a parameter accepts; a range's are its ends (``min`` and ``max`` would
    walk all of it, up to ten million values)."""
    if isinstance(accepts, range):
        return accepts[0] if pick is min else accepts[-1]
    return pick(accepts)


def _minimal_plan(name: str, spec: ModeSpec) -> dict[str, Any]:
    """The smallest valid plan of a mode, built from its table row alone."""
    return {"mode": name, **{need.parameter: _bound(need.accepts, min) for need in spec.needs}}


def _parse_plan(plan: dict[str, Any], channel: str = "http") -> StreamDelivery:
    """``plan`` on a chat scenario (http) or a realtime one (websocket)."""
    scenario: dict[str, Any] = {"responses": [{"text": "ab", "chunks": ["a", "b"], "stream_delivery": plan}]}
    if channel == "websocket":
        scenario["operation"] = "realtime"
    config = parse_session_config({"scenarios": [scenario]})
    delivery = config.scenarios[0].responses[0].stream_delivery
    assert delivery is not None
    return delivery


def test_table_registries_and_literal_name_the_same_modes_in_the_same_order() -> None:
    assert tuple(MODES) == get_args(DeliveryMode)
    assert tuple(REGISTRY) == tuple(HTTP_TABLE) == tuple(name for name in MODES if name in SSE_MODES)
    assert tuple(WEBSOCKET_REGISTRY) == tuple(WEBSOCKET_TABLE)
    assert tuple(WEBSOCKET_TABLE) == tuple(name for name in MODES if name in WEBSOCKET_MODES)
    assert set(MODES) == SSE_MODES | WEBSOCKET_MODES  # every mode acts somewhere
    assert {"close", "malformed_event"} <= WEBSOCKET_MODES - SSE_MODES
    schema_enum = StreamDelivery.model_json_schema()["properties"]["mode"]["enum"]
    assert schema_enum == list(MODES)


@pytest.mark.parametrize("name", list(WEBSOCKET_TABLE))
def test_each_websocket_unit_is_an_on_websocket_unit_of_its_kind(name: str) -> None:
    unit, spec = WEBSOCKET_REGISTRY[name], MODES[name]
    assert isinstance(unit, OnWebSocket) and unit.kind is spec.kind is DeliveryKind.IN_STREAM
    assert unit.act is getattr(websocket_modes, name).act  # the module bears the mode's name


@pytest.mark.parametrize("name", list(HTTP_TABLE))
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


@pytest.mark.parametrize(
    ("name", "channel"),
    [(name, channel) for name, spec in MODES.items() for channel in sorted(spec.channels)],
)
def test_configuration_accepts_every_table_mode_with_exactly_its_parameters(name: str, channel: str) -> None:
    spec = MODES[name]
    minimal = _minimal_plan(name, spec)
    plan = _parse_plan(minimal, channel)
    assert plan.mode == name and plan.in_stream is spec.in_stream and plan.harmless is spec.harmless
    for need in spec.needs:  # a needed parameter cannot be left out, nor be outside what the mode accepts
        missing = {key: value for key, value in minimal.items() if key != need.parameter}
        with pytest.raises(ConfigurationInvalid, match=re.escape(need.message)):
            _parse_plan(missing, channel)
        with pytest.raises(ConfigurationInvalid, match=need.parameter):  # the table's or the field's bound
            _parse_plan({**minimal, need.parameter: _bound(need.accepts, max) + 1}, channel)
    needed = {need.parameter for need in spec.needs}
    others = (("delay_ms", 5), ("cut_bytes", 4), ("bytes_per_second", 9), ("status", 503), ("code", 1011))
    assert {parameter for parameter, _ in others} == set(get_args(Parameter))
    for parameter, value in others:
        if parameter not in needed:  # any other parameter is refused
            with pytest.raises(ConfigurationInvalid, match=parameter):
                _parse_plan({**minimal, parameter: value}, channel)
    if "code" in needed:  # a close frame's reason: optional, at most 123 bytes of UTF-8
        assert _parse_plan({**minimal, "reason": "é" * 61 + "x"}, channel).reason == "é" * 61 + "x"
        with pytest.raises(ConfigurationInvalid, match="at most 123 bytes"):
            _parse_plan({**minimal, "reason": "é" * 62}, channel)
    else:
        with pytest.raises(ConfigurationInvalid, match="reason is only allowed with close"):
            _parse_plan({**minimal, "reason": "bye"}, channel)
    if spec.in_stream:
        assert _parse_plan({**minimal, "after_content_frames": 2}, channel).after_content_frames == 2
    else:
        with pytest.raises(ConfigurationInvalid, match="does not take after_content_frames"):
            _parse_plan({**minimal, "after_content_frames": 1}, channel)


@pytest.mark.parametrize(
    ("name", "channel"),
    [
        (name, channel)
        for name, spec in MODES.items()
        for channel in ("http", "websocket")
        if channel not in spec.channels
    ],
)
def test_configuration_refuses_a_mode_on_a_channel_it_does_not_act_on(name: str, channel: str) -> None:
    where = "realtime turns (WebSocket)" if channel == "websocket" else "HTTP answers"
    with pytest.raises(
        ConfigurationInvalid, match=re.escape(f"stream_delivery {name} does not apply to {where}")
    ):
        _parse_plan(_minimal_plan(name, MODES[name]), channel)


def test_configuration_refuses_a_name_outside_the_table() -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        _parse_plan({"mode": "teleport"})
    assert caught.value.details[0]["path"].endswith("stream_delivery.mode")


def _acts_on(spec: ModeSpec) -> str:
    """The docs' "acts on" cell of a mode: its channels, HTTP first."""
    return ", ".join(word for channel, word in CHANNEL_WORDS.items() if channel in spec.channels)


def _modes_and_channels(section: str) -> list[tuple[str, str]]:
    """(mode, "acts on" cell) of each row of the mode tables in ``section``."""
    return re.findall(r"^\| `([a-z_]+)` \| ([^|`]+?) \|", section, re.MULTILINE)


def test_the_user_docs_list_each_mode_under_its_kind_with_its_channels() -> None:
    text = (DOCS / "stream-delivery.md").read_text(encoding="utf-8")
    sections = {
        DeliveryKind.IN_STREAM: text.split("**In-stream modes**", 1)[1].split("**Paced mode:**", 1)[0],
        DeliveryKind.PACING: text.split("**Paced mode:**", 1)[1].split("**Connection modes**", 1)[0],
        DeliveryKind.CONNECTION: text.split("**Connection modes**", 1)[1].split("## Validation", 1)[0],
    }
    for kind, section in sections.items():
        assert _modes_and_channels(section) == [
            (name, _acts_on(spec)) for name, spec in MODES.items() if spec.kind is kind
        ]


def _success_by_mode(header: str, column: int) -> dict[str, set[str]]:
    """Mode -> the ``success`` cells of its rows in stream-delivery.md's evidence table that starts with
    ``header``."""
    success: dict[str, set[str]] = {}
    for cells in doc_table("docs/stream-delivery.md", header):
        for name in re.findall(r"`([a-z_]+)`", cells[0].split("(", 1)[0]):
            success.setdefault(name, set()).add(cells[column])
    return success


@pytest.mark.parametrize(
    ("header", "column", "channel_modes"),
    [
        ("| mode | `status` | `success` |", 2, SSE_MODES),
        ("| WebSocket mode | `success` |", 1, WEBSOCKET_MODES),
    ],
    ids=["http", "websocket"],
)
def test_the_evidence_tables_have_every_mode_of_their_channel_and_only_harmless_modes_succeed(
    header: str, column: int, channel_modes: frozenset[str]
) -> None:
    """Each mode's evidence row in docs/stream-delivery.md, one table per channel (step 4 of
    contributing.md's recipe): a harmless mode (the client still gets the whole, valid answer) is
    documented as a success, any other as a failure, as the journal records them (``apply_evidence``).
    Derived from the table and the docs, so a new mode needs no edit here."""
    success = _success_by_mode(header, column)
    assert set(success) == channel_modes
    assert HARMLESS_MODES & channel_modes
    assert success == {name: {"true" if name in HARMLESS_MODES else "false"} for name in channel_modes}
    assert {name for name, spec in MODES.items() if spec.harmless} == HARMLESS_MODES


def test_the_configuration_reference_lists_every_mode_with_its_channels() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    section = text.split("### stream_delivery", 1)[1].split("\n#", 1)[0]
    assert _modes_and_channels(section) == [(name, _acts_on(spec)) for name, spec in MODES.items()]


# --- the registry is the units' own declarations, checked at import -------------------------------------

UNIT_MODULES = [getattr(modes, name) for name in sorted(REGISTRY)]  # each mode's module bears its name


def _module(name: str, source: str) -> types.ModuleType:
    """A module of the modes package that was never on disk (its functions' ``__module__`` is ``name``)."""
    module = types.ModuleType(f"llmts.transport.modes.{name}")
    exec(textwrap.dedent(source), module.__dict__)
    return module


# A unit of a mode no table has (nor docs/contributing.md's worked example, which adds heartbeat_comment).
UNLISTED = _module(
    "bell_frame",
    """
    from llmts.transport.modes.base import in_stream

    @in_stream("bell_frame")
    def act(at):
        yield b"\\x07"
        return True
    """,
)


def test_the_registry_is_built_from_the_declarations_in_table_order() -> None:
    assert registry_of(reversed(UNIT_MODULES), HTTP_TABLE) == REGISTRY
    assert list(registry_of(reversed(UNIT_MODULES), HTTP_TABLE)) == list(HTTP_TABLE)
    assert all(unit is REGISTRY[name] for name, unit in registry_of(UNIT_MODULES, HTTP_TABLE).items())


def test_a_unit_of_a_mode_the_table_lacks_fails() -> None:
    with pytest.raises(
        RuntimeError, match=r"modes\.bell_frame declares a unit of mode 'bell_frame', which the mode tab"
    ):
        registry_of([*UNIT_MODULES, UNLISTED], HTTP_TABLE)


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
        registry_of([*others, misnamed], HTTP_TABLE)
    with pytest.raises(
        RuntimeError, match=r"no unit in llmts/transport/modes/ declares the mode\(s\) stall of"
    ):
        registry_of(others, HTTP_TABLE)


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
        registry_of([*UNIT_MODULES, undeclared], HTTP_TABLE)
    # A unit imported from another module is that module's, not a second declaration of this one.
    borrowing = _module("borrowing", "from llmts.transport.modes.stall import act")
    with pytest.raises(RuntimeError, match=r"modes\.borrowing declares 0 mode units"):
        registry_of([*UNIT_MODULES, borrowing], HTTP_TABLE)
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
        registry_of([two], HTTP_TABLE)


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
        registry_of([*UNIT_MODULES, again], HTTP_TABLE)


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
        registry_of([*others, wrong], HTTP_TABLE)


def test_loading_finds_every_module_of_a_package_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load_units`` imports every module of the directory (``base`` aside), so a new unit file is picked up
    without a registration line, and a stray one fails."""
    assert load_units(modes.__name__, modes.__path__, HTTP_TABLE) == REGISTRY
    package = tmp_path / "stray_modes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("")  # skipped, like the real package's shapes
    (package / "bell_frame.py").write_text(
        "from llmts.transport.modes.base import in_stream\n\n\n"
        '@in_stream("bell_frame")\ndef act(at):\n    yield b""\n    return True\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(
            RuntimeError, match=r"stray_modes\.bell_frame declares a unit of mode 'bell_frame'"
        ):
            load_units("stray_modes", [str(package)], HTTP_TABLE)
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


# --- the WebSocket units: the same check, against the table's websocket rows ------------------------------

WEBSOCKET_UNIT_MODULES = [getattr(websocket_modes, name) for name in sorted(WEBSOCKET_REGISTRY)]


def _websocket_module(name: str, source: str) -> types.ModuleType:
    """A module of the WebSocket units' package that was never on disk."""
    module = types.ModuleType(f"llmts.transport.websocket_modes.{name}")
    exec(textwrap.dedent(source), module.__dict__)
    return module


def test_the_websocket_registry_is_built_from_its_declarations_in_table_order() -> None:
    built = registry_of(reversed(WEBSOCKET_UNIT_MODULES), WEBSOCKET_TABLE, "websocket")
    assert built == WEBSOCKET_REGISTRY and list(built) == list(WEBSOCKET_TABLE)
    loaded = load_units(websocket_modes.__name__, websocket_modes.__path__, WEBSOCKET_TABLE, "websocket")
    assert loaded == WEBSOCKET_REGISTRY


def test_a_websocket_unit_of_a_mode_without_the_websocket_channel_fails() -> None:
    truncate = _websocket_module(
        "truncate_bytes",
        """
        from llmts.transport.websocket_modes.base import on_websocket

        @on_websocket("truncate_bytes")
        def act(at):
            return False
        """,
    )
    with pytest.raises(
        RuntimeError,
        match=r"websocket_modes\.truncate_bytes declares a unit of mode 'truncate_bytes', which the mode "
        r"table \(llmts\.schema\.faults\.MODES\) gives no websocket channel",
    ):
        registry_of([*WEBSOCKET_UNIT_MODULES, truncate], WEBSOCKET_TABLE, "websocket")


def test_an_http_unit_of_a_websocket_only_mode_fails() -> None:
    close = _module(
        "close",
        """
        from llmts.transport.modes.base import in_stream

        @in_stream("close")
        def act(at):
            yield from ()
            return False
        """,
    )
    with pytest.raises(
        RuntimeError, match=r"modes\.close declares a unit of mode 'close', .* gives no http channel"
    ):
        registry_of([*UNIT_MODULES, close], HTTP_TABLE)


def test_a_websocket_row_without_a_unit_fails() -> None:
    others = [module for module in WEBSOCKET_UNIT_MODULES if module is not websocket_close]
    with pytest.raises(
        RuntimeError, match=r"no unit in llmts/transport/websocket_modes/ declares the mode\(s\) close of"
    ):
        registry_of(others, WEBSOCKET_TABLE, "websocket")


def test_a_unit_among_the_other_channels_units_fails() -> None:
    """An HTTP ``stall`` unit in the WebSocket package, or the reverse, names the channel and the package."""
    websocket_others = [module for module in WEBSOCKET_UNIT_MODULES if module is not websocket_stall]
    with pytest.raises(
        RuntimeError,
        match=r"modes\.stall declares mode 'stall' for the http channel, but "
        r"llmts/transport/websocket_modes/ holds the websocket channel's units \(@on_websocket\)",
    ):
        registry_of([*websocket_others, stall], WEBSOCKET_TABLE, "websocket")
    http_others = [module for module in UNIT_MODULES if module is not stall]
    with pytest.raises(
        RuntimeError,
        match=r"websocket_modes\.stall declares mode 'stall' for the websocket channel, but "
        r"llmts/transport/modes/ holds the http channel's units",
    ):
        registry_of([*http_others, websocket_stall], HTTP_TABLE)


def test_a_websocket_module_without_exactly_one_unit_fails() -> None:
    undeclared = _websocket_module("stall", "def act(at):\n    return False\n")
    with pytest.raises(
        RuntimeError,
        match=r"websocket_modes\.stall declares 0 mode units: a module of llmts/transport/websocket_modes/ "
        r"is one mode's unit, one function decorated with @on_websocket",
    ):
        registry_of([*WEBSOCKET_UNIT_MODULES, undeclared], WEBSOCKET_TABLE, "websocket")


def test_importing_the_websocket_units_fails_when_a_websocket_row_has_no_unit() -> None:
    """The check runs when ``llmts.transport.websocket_modes`` is imported; the HTTP units do not mind a
    websocket-only row."""
    code = textwrap.dedent(
        """
        from types import MappingProxyType
        from llmts.schema import faults
        only_websocket = frozenset({"websocket"})
        teleport = faults.ModeSpec(faults.DeliveryKind.IN_STREAM, harmless=False, channels=only_websocket)
        faults.MODES = MappingProxyType({**faults.MODES, "teleport": teleport})
        import llmts.transport.modes
        print("the HTTP units imported", flush=True)
        import llmts.transport.websocket_modes
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert (
        "RuntimeError: no unit in llmts/transport/websocket_modes/ declares the mode(s) teleport"
        in result.stderr
    )
    assert result.stdout == "the HTTP units imported\n"
