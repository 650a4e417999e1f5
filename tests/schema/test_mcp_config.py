"""The ``mcp_servers`` configuration (llmts/schema/mcp.py): what it refuses (400
``invalid_configuration`` naming the field, the previous configuration kept), what it echoes, and the
builder (llmts/schema/mcp_builder.py)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from llmts import ConfigBuilder, SessionClient
from llmts.client import ServerError
from llmts.schema import LIMITS
from llmts.schema.config import SessionConfig


def _server(**fields: Any) -> dict[str, Any]:
    return {"mcp_servers": [{"name": "s", **fields}]}


def _tool(**result: Any) -> dict[str, Any]:
    return _server(tools=[{"name": "t", "results": [result]}])


INVALID = [
    (_tool(), "exactly one of text, content, error"),
    (_tool(text="a", error={"code": 1, "message": "m"}), "exactly one of"),
    (_tool(error={"code": 1, "message": "m"}, is_error=True), "error is a JSON-RPC error"),
    (_tool(content=[{"type": "video"}]), "content[0].type must be one of"),
    (_tool(content=[{"type": "image", "data": "x"}]), "needs 'mimeType'"),
    (_tool(content=[{"type": "resource", "resource": {"uri": "u"}}]), "exactly one of text, blob"),
    (_tool(text="a", flood_count=3), "flood_count goes with fault notification_flood"),
    (
        _tool(text="a", fault="session_expired", progress=[{"progress": 1}]),
        "session_expired answers the call",
    ),
    (_tool(text="a", fault="boom"), "fault"),
    (_tool(text="a", stream_delivery={"mode": "early_clean_end", "after_content_frames": 2}), "unreachable"),
    (_tool(text="a", elicit={"message": "m", "requested_schema": {"type": "string"}}), "requested_schema"),
    (_tool(text="a", sample={"messages": [{"role": "system", "content": {}}]}), "messages[0]"),
    (_server(tools=[{"name": "t", "input_schema": {"type": "array"}}]), "input_schema"),
    (_server(tools=[{"name": "t"}, {"name": "t"}]), "used twice"),
    (_server(tools=[{"name": "bad name"}]), "name"),
    (_server(resources=[{"uri": "u", "name": "n"}]), "exactly one of text, blob"),
    (_server(prompts=[{"name": "p", "messages": [{"role": "user"}]}]), "exactly one of text, content"),
    (_server(answer_timeout_ms=0), "answer_timeout_ms"),
    ({"mcp_servers": [{"name": "s"}, {"name": "s"}]}, "used twice"),
    ({"mcp_servers": [{"name": f"s{i}"} for i in range(LIMITS["mcp_servers"] + 1)]}, "mcp_servers"),
]


@pytest.mark.parametrize(("config", "message"), INVALID)
def test_invalid_configurations_are_refused(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SessionConfig.model_validate(config)


def test_a_refused_configuration_changes_nothing(llmts_session: SessionClient) -> None:
    llmts_session.configure(_tool(text="kept"))
    with pytest.raises(ServerError) as refused:
        llmts_session.configure(_tool())
    assert refused.value.status == 400 and refused.value.code == "invalid_configuration"
    assert "mcp_servers[0].tools[0].results[0]" in str(refused.value)
    assert llmts_session.configuration()["mcp_servers"][0]["tools"][0]["results"] == [{"text": "kept"}]


def test_the_configuration_echoes_what_was_written(llmts_session: SessionClient) -> None:
    written = _server(
        tools=[
            {
                "name": "t",
                "results": [
                    {
                        "text": "a",
                        "when": {"arguments": {"q": 1}},
                        "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
                    },
                    {"error": {"code": -32000, "message": "m"}},
                    {"structured": {"a": 1}, "fault": "notification_flood"},
                ],
            }
        ],
        resources=[{"uri": "u", "name": "n", "text": "t"}],
        prompts=[{"name": "p", "arguments": [{"name": "x"}], "messages": [{"role": "user", "text": "hi"}]}],
    )
    assert llmts_session.configure(written)["mcp_servers"] == written["mcp_servers"]
    assert llmts_session.configuration()["mcp_servers"] == written["mcp_servers"]


def test_builder_writes_the_configuration() -> None:
    config = (
        ConfigBuilder()
        .mcp_server("files", instructions="Find files.", page_size=10)
        .tool("search", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})
        .text("found", when={"q": "notes"}, delay_ms=5, progress=[{"progress": 1}])
        .structured({"hits": 1})
        .content({"type": "text", "text": "c"}, is_error=True)
        .error(-32602, "no", {"why": "x"})
        .result({"text": "raw"})
        .tool("ask", terminal_policy="repeat_last_response")
        .text("?", elicit={"message": "Name?"}, list_roots=False)
        .resource("file:///b", "b", blob=b"\x00\x01", mime_type="application/octet-stream")
        .resource_template("file:///{p}", "files")
        .prompt("p", "Hi {name}", {"role": "assistant", "text": "Hello"}, arguments=["name"])
        .config.scenario("agent")
        .text("done")
        .build()
    )
    (server,) = config.model_dump(mode="json")["mcp_servers"]
    assert server["instructions"] == "Find files." and server["page_size"] == 10
    search, ask = server["tools"]
    assert search["results"] == [
        {
            "text": "found",
            "when": {"arguments": {"q": "notes"}},
            "delay_ms": 5,
            "progress": [{"progress": 1.0}],
        },
        {"structured": {"hits": 1}},
        {"content": [{"type": "text", "text": "c"}], "is_error": True},
        {"error": {"code": -32602, "message": "no", "data": {"why": "x"}}},
        {"text": "raw"},
    ]
    assert ask == {
        "name": "ask",
        "results": [{"text": "?", "elicit": {"message": "Name?"}}],
        "terminal_policy": "repeat_last_response",
    }
    assert server["resources"] == [
        {"uri": "file:///b", "name": "b", "mime_type": "application/octet-stream", "blob": "AAE="}
    ]
    assert server["resource_templates"] == [{"uri_template": "file:///{p}", "name": "files"}]
    assert server["prompts"][0]["messages"] == [
        {"role": "user", "text": "Hi {name}"},
        {"role": "assistant", "text": "Hello"},
    ]
    assert config.scenarios[0].responses[0].text == "done"


def test_mcp_builders_chain_on_to_every_part_of_the_configuration() -> None:
    config = (
        ConfigBuilder()
        .mcp_server("s")
        .tool("t")
        .text("r")
        .a2a_agent("helper")
        .text("hi")
        .config.mcp_server("u")
        .scenario("after-server")
        .text("one")
        .mcp_server("v")
        .tool("w")
        .text("x")
        .scenario("after-tool")
        .text("two")
        .config.mcp_server("y")
        .tool("z")
        .text("q")
        .conversation("graph")
        .step("only")
        .text("three")
        .complete()
        .config.mcp_server("last")
        .conversation("second")
        .step("s1")
        .text("four")
        .complete()
        .build()
    )
    assert [server.name for server in config.mcp_servers] == ["s", "u", "v", "y", "last"]
    assert [agent.name for agent in config.a2a_agents] == ["helper"]
    assert [scenario.id for scenario in config.scenarios] == ["after-server", "after-tool"]
    assert [graph.id for graph in config.conversations] == ["graph", "second"]
    tool_agent = ConfigBuilder().mcp_server("s").tool("t").text("r").a2a_agent("a").text("b").build()
    assert tool_agent.a2a_agents[0].name == "a"
