"""A session's scripted MCP server through the official ``mcp`` Python SDK (``ClientSession`` over
``streamable_http_client``, and 2.x's ``mcp.Client``) against a real gunicorn+gevent server."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from mcp import types

from llmts import ConfigBuilder, SessionClient
from tests.peers.mcp.support import LATEST, MCP_MAJOR, error_code, field, mcp_error_type, run

# mcp 2.x warns that logging and subscriptions are gone at 2026-07-28; this server speaks the revisions
# that have them.
pytestmark = [pytest.mark.sdk, pytest.mark.filterwarnings("ignore:.*as of 2026-07-28")]

MCPError = mcp_error_type()
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
Q_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def _texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def test_handshake_lists_every_page_and_describes_the_server(llmts_session: SessionClient) -> None:
    config = (
        ConfigBuilder()
        .mcp_server("files", instructions="Search the team's files.", version="2.1.0", page_size=1)
        .tool(
            "search",
            title="Search",
            description="Find files",
            input_schema=Q_SCHEMA,
            output_schema=ANSWER_SCHEMA,
        )
        .tool("open", annotations={"readOnlyHint": True})
        .resource("file:///notes.txt", "notes", text="milk", mime_type="text/plain")
        .resource("file:///logo.png", "logo", blob=b"\x89PNG", mime_type="image/png")
        .resource_template("file:///{path}", "files", mime_type="text/plain")
        .prompt("summarize", "Summarize {topic}.", arguments=["topic"], description="Summaries")
        .build()
    )
    llmts_session.configure(config)

    async def scenario() -> None:
        async with llmts_session.mcp_session("files") as session:
            first = await session.list_tools()
            assert [tool.name for tool in first.tools] == ["search"]
            cursor = field(first, "next_cursor")
            assert cursor is not None
            second = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
            assert [tool.name for tool in second.tools] == ["open"]
            assert field(second, "next_cursor") is None
            search = first.tools[0]
            assert search.title == "Search" and search.description == "Find files"
            assert field(search, "input_schema") == Q_SCHEMA
            assert field(search, "output_schema") == ANSWER_SCHEMA
            assert field(second.tools[0].annotations, "read_only_hint") is True
            resources = await session.list_resources()
            assert [str(r.uri) for r in resources.resources] == ["file:///notes.txt"]
            assert field(resources.resources[0], "mime_type") == "text/plain"
            templates = await session.list_resource_templates()
            assert field(field(templates, "resource_templates")[0], "uri_template") == "file:///{path}"
            prompts = await session.list_prompts()
            assert prompts.prompts[0].name == "summarize"
            assert prompts.prompts[0].arguments[0].required is True

    run(scenario)
    entries = llmts_session.requests(provider="mcp", operation="initialize")
    assert len(entries) == 1 and entries[0]["mcp_server"] == "files"


def test_initialize_answers_the_revision_and_server_info(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().mcp_server("s", instructions="Be brief.", version="3.0.0").build()
    )

    async def scenario() -> Any:
        from llmts.client.mcp import connect_mcp

        # The helper initializes; a second session initializes explicitly to read the result.
        async with connect_mcp(llmts_session.mcp_url("s")) as session:
            return await session.initialize()

    result = run(scenario)
    assert field(result, "protocol_version") == LATEST
    assert field(result, "server_info").name == "s" and field(result, "server_info").version == "3.0.0"
    assert result.instructions == "Be brief."
    capabilities = result.capabilities
    assert capabilities.tools is not None and field(capabilities.tools, "list_changed") is True
    assert capabilities.resources is not None and capabilities.resources.subscribe is True


def test_results_in_order_when_arguments_match_and_terminal_policies(llmts_session: SessionClient) -> None:
    config = (
        ConfigBuilder()
        .mcp_server("s")
        .tool("weather", input_schema={"type": "object", "properties": {"city": {"type": "string"}}})
        .text("rain", when={"city": "London"})
        .text("sun")
        .text("snow")
        .tool("echo", terminal_policy="repeat_last_response")
        .text("one")
        .text("two")
        .tool("cycle", terminal_policy="restart")
        .text("a")
        .text("b")
        .build()
    )
    llmts_session.configure(config)

    async def scenario() -> None:
        async with llmts_session.mcp_session("s") as session:
            # The first unconsumed result whose ``when`` matches: Paris skips the London-only result.
            assert _texts(await session.call_tool("weather", {"city": "Paris"})) == ["sun"]
            assert _texts(await session.call_tool("weather", {"city": "London", "unit": "C"})) == ["rain"]
            assert _texts(await session.call_tool("weather", {"city": "London"})) == ["snow"]
            with pytest.raises(MCPError) as exhausted:
                await session.call_tool("weather", {"city": "Rome"})
            assert error_code(exhausted.value) == -32603
            assert "no scripted result left" in str(exhausted.value)
            echoes = [_texts(await session.call_tool("echo", {}))[0] for _ in range(4)]
            assert echoes == ["one", "two", "two", "two"]
            cycles = [_texts(await session.call_tool("cycle", {}))[0] for _ in range(5)]
            assert cycles == ["a", "b", "a", "b", "a"]

    run(scenario)


def test_structured_content_is_error_content_blocks_and_jsonrpc_errors(llmts_session: SessionClient) -> None:
    config = (
        ConfigBuilder()
        .mcp_server("s")
        .tool("ask", output_schema=ANSWER_SCHEMA)
        .structured({"answer": "42"})
        .text("bad input", is_error=True)
        .text("wrong shape", structured={"answer": 42})
        .tool("media")
        .content(
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
            {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "bee"}},
        )
        .error(-32602, "no such city", {"city": "Atlantis"})
        .build()
    )
    llmts_session.configure(config)

    async def scenario() -> None:
        async with llmts_session.mcp_session("s") as session:
            result = await session.call_tool("ask", {})
            assert field(result, "structured_content") == {"answer": "42"}
            assert _texts(result) == ['{"answer":"42"}']  # structured alone: its JSON is the text too
            failed = await session.call_tool("ask", {})
            assert field(failed, "is_error") is True and _texts(failed) == ["bad input"]
            # The client checks structured content against the output schema llmts listed.
            with pytest.raises(RuntimeError, match="Invalid structured content"):
                await session.call_tool("ask", {})
            media = await session.call_tool("media", {})
            assert [block.type for block in media.content] == ["image", "resource_link", "resource"]
            assert media.content[2].resource.text == "bee"
            with pytest.raises(MCPError) as error:
                await session.call_tool("media", {})
            assert error_code(error.value) == -32602 and "no such city" in str(error.value)

    run(scenario)
    calls = llmts_session.requests(provider="mcp", operation="tools/call")
    assert [entry["success"] for entry in reversed(calls)] == [True, True, True, True, False]
    assert calls[0]["error_code"] == "jsonrpc_-32602"


def test_progress_notifications_reach_the_callback_and_delay_is_waited(llmts_session: SessionClient) -> None:
    progress = [{"progress": 1, "total": 2, "message": "half"}, {"progress": 2, "total": 2}]
    config = (
        ConfigBuilder().mcp_server("s").tool("slow").text("done", progress=progress, delay_ms=300).build()
    )
    llmts_session.configure(config)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async def scenario() -> Any:
        async with llmts_session.mcp_session("s") as session:
            started = time.monotonic()
            result = await session.call_tool("slow", {}, progress_callback=on_progress)
            return result, time.monotonic() - started

    result, elapsed = run(scenario)
    assert _texts(result) == ["done"]
    assert seen == [(1.0, 2.0, "half"), (2.0, 2.0, None)]
    assert elapsed >= 0.3


def test_resources_prompts_logging_completion_and_ping(llmts_session: SessionClient) -> None:
    config = (
        ConfigBuilder()
        .mcp_server("s")
        .resource("file:///notes.txt", "notes", text="milk", mime_type="text/plain")
        .resource("file:///logo.png", "logo", blob=b"\x89PNG", mime_type="image/png")
        .prompt("summarize", "Summarize {topic} for {audience}.", arguments=["topic", {"name": "audience"}])
        .build()
    )
    llmts_session.configure(config)

    async def scenario() -> None:
        async with llmts_session.mcp_session("s") as session:
            text = await session.read_resource("file:///notes.txt")
            assert text.contents[0].text == "milk"
            blob = await session.read_resource("file:///logo.png")
            assert blob.contents[0].blob == "iVBORw=="
            with pytest.raises(MCPError) as missing:
                await session.read_resource("file:///nope")
            assert error_code(missing.value) == -32002
            prompt = await session.get_prompt("summarize", {"topic": "cats"})
            # An argument not given stays as written.
            assert prompt.messages[0].content.text == "Summarize cats for {audience}."
            with pytest.raises(MCPError) as invalid:
                await session.get_prompt("summarize", {})
            assert error_code(invalid.value) == -32602
            await session.set_logging_level("debug")
            await session.send_ping()
            ref = types.PromptReference(type="ref/prompt", name="summarize")
            completion = await session.complete(ref, {"name": "topic", "value": "c"})
            assert completion.completion.values == []

    run(scenario)


def test_subscriptions_and_list_changed_reach_the_client_on_its_get_stream(
    llmts_session: SessionClient,
) -> None:
    builder = ConfigBuilder().mcp_server("s").tool("a").text("x").resource("file:///n.txt", "n", text="v1")
    llmts_session.configure(builder.build())
    received: list[str] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method is not None:
            received.append(
                method if method != "notifications/resources/updated" else f"{method} {root.params.uri}"
            )

    async def scenario() -> None:
        async with llmts_session.mcp_session("s", message_handler=on_message) as session:
            await session.subscribe_resource("file:///n.txt")
            await anyio.sleep(0.3)  # the client opens its GET stream after the handshake
            changed = ConfigBuilder().mcp_server("s").tool("a").text("x").tool("b").text("y")
            llmts_session.configure(changed.resource("file:///n.txt", "n", text="v2").build())
            with anyio.fail_after(10):
                while len(received) < 2:
                    await anyio.sleep(0.05)
            # The session survived the reconfiguration: the new tool is there.
            tools = await session.list_tools()
            assert [tool.name for tool in tools.tools] == ["a", "b"]

    run(scenario)
    assert received == ["notifications/tools/list_changed", "notifications/resources/updated file:///n.txt"]


def test_elicitation_sampling_and_roots_answers_are_journaled(llmts_session: SessionClient) -> None:
    config = (
        ConfigBuilder()
        .mcp_server("s")
        .tool("book")
        .text(
            "booked",
            elicit={
                "message": "Name?",
                "requested_schema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            sample={"messages": "Pick a seat", "max_tokens": 20, "system_prompt": "Be brief"},
            list_roots=True,
            progress=[{"progress": 1}],
        )
        .build()
    )
    llmts_session.configure(config)
    asked: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context: Any, params: Any) -> Any:
        asked.append(
            (params.messages[0].content.text, field(params, "max_tokens"), field(params, "system_prompt"))
        )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="12A"),
            model="m",
            stopReason="endTurn",
        )

    async def on_roots(context: Any) -> Any:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def scenario() -> Any:
        async with llmts_session.mcp_session(
            "s", elicitation_callback=on_elicit, sampling_callback=on_sample, list_roots_callback=on_roots
        ) as session:
            return await session.call_tool("book", {"when": "today"})

    result = run(scenario)
    assert _texts(result) == ["booked"]
    assert asked == ["Name?", ("Pick a seat", 20, "Be brief"), "roots"]
    (entry,) = llmts_session.requests(provider="mcp", operation="tools/call")
    answers = entry["client_answers"]
    assert [answer["method"] for answer in answers] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert answers[0]["result"] == {"action": "accept", "content": {"name": "Ada"}}
    assert answers[1]["result"]["content"]["text"] == "12A"
    assert answers[2]["result"]["roots"][0]["uri"] == "file:///work"
    assert entry["tool_name"] == "book" and entry["arguments"] == {"when": "today"}
    assert entry["success"] is True and entry["streaming"] is True


def test_a_request_the_client_did_not_declare_is_a_clear_error(llmts_session: SessionClient) -> None:
    config = ConfigBuilder().mcp_server("s").tool("ask").text("x", elicit={"message": "Name?"}).build()
    llmts_session.configure(config)

    async def scenario() -> None:
        async with llmts_session.mcp_session("s") as session:  # no elicitation callback
            with pytest.raises(MCPError) as error:
                await session.call_tool("ask", {})
            assert error_code(error.value) == -32021
            assert "did not declare the elicitation capability" in str(error.value)

    run(scenario)


def test_a_declined_elicitation_is_journaled_and_the_result_follows(llmts_session: SessionClient) -> None:
    config = ConfigBuilder().mcp_server("s").tool("ask").text("fine", elicit={"message": "Sure?"}).build()
    llmts_session.configure(config)

    async def on_elicit(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="decline")

    async def scenario() -> Any:
        async with llmts_session.mcp_session("s", elicitation_callback=on_elicit) as session:
            return await session.call_tool("ask", {})

    assert _texts(run(scenario)) == ["fine"]
    (entry,) = llmts_session.requests(provider="mcp", operation="tools/call")
    assert entry["client_answers"][0]["result"] == {"action": "decline"}


@pytest.mark.skipif(MCP_MAJOR < 2, reason="mcp.Client and the 2026-07-28 revision are new in mcp 2")
def test_high_level_client_speaks_the_stateless_revision(llmts_session: SessionClient) -> None:
    from mcp import Client

    config = (
        ConfigBuilder()
        .mcp_server("s", instructions="Stateless.")
        .tool("t", output_schema=ANSWER_SCHEMA)
        .structured({"answer": "one"}, progress=[{"progress": 1, "total": 1}])
        .text(
            "booked", structured={"answer": "two"}, elicit={"message": "Name?"}, sample={"messages": "Seat?"}
        )
        .resource("file:///n.txt", "n", text="milk")
        .prompt("p", "Hi {who}", arguments=["who"])
        .build()
    )
    llmts_session.configure(config)
    seen: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context: Any, params: Any) -> Any:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="12A"), model="m"
        )

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async def scenario() -> Any:
        async with Client(
            llmts_session.mcp_url("s"), elicitation_callback=on_elicit, sampling_callback=on_sample
        ) as client:
            assert client.protocol_version == "2026-07-28" and client.instructions == "Stateless."
            assert [tool.name for tool in (await client.list_tools()).tools] == ["t"]
            first = await client.call_tool("t", {}, progress_callback=on_progress)
            second = await client.call_tool("t", {"seat": True})
            text = (await client.read_resource("file:///n.txt")).contents[0].text
            prompt = await client.get_prompt("p", {"who": "Ada"})
            return first, second, text, prompt

    first, second, text, prompt = run(scenario)
    assert first.structured_content == {"answer": "one"} and seen == [1.0]
    assert second.structured_content == {"answer": "two"} and _texts(second) == ["booked"]
    assert text == "milk" and prompt.messages[0].content.text == "Hi Ada"
    operations = [entry["operation"] for entry in reversed(llmts_session.requests(provider="mcp"))]
    assert operations[0] == "server/discover" and "initialize" not in operations
    # The call that asked for input is two entries: the InputRequiredResult, then the answered call.
    asked, answered = [entry for entry in reversed(llmts_session.requests(tool_name="t"))][1:]
    assert asked["client_answers"] == []
    assert [answer["method"] for answer in answered["client_answers"]] == [
        "elicitation/create",
        "sampling/createMessage",
    ]
    assert answered["client_answers"][0]["result"] == {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.skipif(MCP_MAJOR < 2, reason="mcp.Client is new in mcp 2")
def test_high_level_client_in_legacy_mode_uses_the_handshake(llmts_session: SessionClient) -> None:
    from mcp import Client

    llmts_session.configure(ConfigBuilder().mcp_server("s").tool("t").text("hi").build())

    async def scenario() -> Any:
        async with Client(llmts_session.mcp_url("s"), mode="legacy") as client:
            return client.protocol_version, await client.call_tool("t", {})

    version, result = run(scenario)
    assert version == LATEST and _texts(result) == ["hi"]
