"""The ``a2a_agents`` configuration (docs/a2a.md, "Configuration"): validation with the field named and
nothing changed, the builder, and the compact echo of ``configure``."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import ConfigBuilder, ServerError, SessionClient
from llmts.errors import ConfigurationInvalid
from llmts.schema.a2a import A2aAgent, A2aResponse
from llmts.schema.peer_limits import PEER_LIMITS
from llmts.schema.validation import parse_session_config
from tests.peers.a2a.a2a_helpers import rpc, rpc_events, v03_message, v1_message


def _agents(*agents: dict[str, Any]) -> dict[str, Any]:
    return {"a2a_agents": list(agents)}


@pytest.mark.parametrize(
    ("config", "path", "message"),
    [
        (_agents({"name": "a"}, {"name": "a"}), "", "a2a_agents[1].name 'a' is used twice"),
        (_agents({"name": "bad name"}), "a2a_agents[0].name", "pattern"),
        (
            _agents({"name": "a", "skills": [{"id": "s", "name": "S"}, {"id": "s", "name": "T"}]}),
            "a2a_agents[0]",
            "skills[1].id",
        ),
        (
            _agents({"name": "a", "responses": [{}]}),
            "a2a_agents[0].responses[0]",
            "exactly one of text, task, error",
        ),
        (
            _agents({"name": "a", "responses": [{"text": "x", "error": {"code": 1, "message": "m"}}]}),
            "a2a_agents[0].responses[0]",
            "exactly one",
        ),
        (
            _agents({"name": "a", "responses": [{"task": {"states": []}}]}),
            "a2a_agents[0].responses[0].task.states",
            "at least 1",
        ),
        (
            _agents({"name": "a", "responses": [{"task": {"states": ["paused"]}}]}),
            "a2a_agents[0].responses[0].task.states[0]",
            "submitted",
        ),
        (
            _agents({"name": "a", "responses": [{"task": {"states": ["working"] * 17}}]}),
            "a2a_agents[0].responses[0].task.states",
            "at most 16",
        ),
        (
            _agents({"name": "a", "responses": [{"task": {"artifacts": [{"text": "x", "data": {}}]}}]}),
            "a2a_agents[0].responses[0].task.artifacts[0]",
            "exactly one of text, data",
        ),
        (
            _agents(
                {"name": "a", "responses": [{"text": "x", "stream_delivery": {"mode": "early_clean_end"}}]}
            ),
            "a2a_agents[0].responses[0]",
            "needs a task with at least two states",
        ),
        (
            _agents(
                {
                    "name": "a",
                    "responses": [
                        {
                            "task": {"states": ["completed"]},
                            "stream_delivery": {"mode": "stall", "delay_ms": 5},
                        }
                    ],
                }
            ),
            "a2a_agents[0].responses[0]",
            "at least two states",
        ),
        (  # 2 content frames: the task as it starts and its artifact update (the last status ends it)
            _agents(
                {
                    "name": "a",
                    "responses": [
                        {
                            "task": {"states": ["submitted", "completed"], "artifacts": [{"text": "r"}]},
                            "stream_delivery": {"mode": "abort_connection", "after_content_frames": 3},
                        }
                    ],
                }
            ),
            "a2a_agents[0].responses[0]",
            "stream_delivery.after_content_frames 3 is unreachable: the stream has 2 content frame(s)",
        ),
        (
            _agents({"name": "a", "responses": [{"text": "x" * (PEER_LIMITS["a2a_text_chars"] + 1)}]}),
            "a2a_agents[0].responses[0].text",
            f"at most {PEER_LIMITS['a2a_text_chars']} characters",
        ),
        (
            _agents({"name": "a", "responses": [{"text": "x", "delay_ms": -1}]}),
            "a2a_agents[0].responses[0].delay_ms",
            "greater than or equal",
        ),
        (_agents({"name": "a", "terminal_policy": "loop"}), "a2a_agents[0].terminal_policy", "reject"),
        (_agents({"name": "a", "colour": "red"}), "a2a_agents[0].colour", "Extra inputs"),
        (_agents(*({"name": f"a{n}"} for n in range(33))), "a2a_agents", "at most 32"),
    ],
)
def test_invalid_agents_are_refused_naming_the_field(config: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        parse_session_config(config)
    details = caught.value.details or []
    assert any(d["path"] == path and message in d["message"] for d in details), details


def test_connection_and_pacing_plans_fit_any_answer() -> None:
    config = _agents(
        {
            "name": "a",
            "responses": [
                {"text": "x", "stream_delivery": {"mode": "reset_before_headers"}},
                {
                    "error": {"code": -32001, "message": "m"},
                    "stream_delivery": {"mode": "slow_drip", "bytes_per_second": 10},
                },
            ],
        }
    )
    assert len(parse_session_config(config).a2a_agents[0].responses) == 2


def test_after_content_frames_reaches_the_last_content_frame(llmts_session: SessionClient) -> None:
    """The largest accepted ``after_content_frames`` acts: the stream ends after every content frame and
    before the last status update; one more is refused at configure time, naming the field."""
    task = {"states": ["submitted", "working", "completed"], "artifacts": [{"text": "a"}, {"text": "b"}]}

    def agent(frames: int) -> dict[str, Any]:
        plan = {"mode": "early_clean_end", "after_content_frames": frames}
        return _agents({"name": "helper", "responses": [{"task": task, "stream_delivery": plan}]})

    with pytest.raises(ServerError) as caught:
        llmts_session.configure(agent(5))
    assert caught.value.status == 400 and caught.value.code == "invalid_configuration"
    assert "stream_delivery.after_content_frames 5 is unreachable" in str(caught.value.details)
    llmts_session.configure(agent(4))
    events = rpc_events(rpc(llmts_session, "helper", "message/stream", {"message": v03_message("go")}))
    kinds = [event["result"]["kind"] for event in events]
    assert kinds == ["task", "status-update", "artifact-update", "artifact-update"]
    (entry,) = llmts_session.requests(provider="a2a")
    assert entry["emitted_content_frames"] == 4 and entry["transport_outcome"] == "early_end"


def test_a2a_texts_have_their_own_limit() -> None:
    limit = PEER_LIMITS["a2a_text_chars"]
    fields = A2aResponse.model_fields["text"].metadata + A2aAgent.model_fields["description"].metadata
    assert [item.max_length for item in fields if hasattr(item, "max_length")] == [limit, limit]


def test_a_refused_configuration_changes_nothing(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().a2a_agent("helper").text("still here").build())
    with pytest.raises(ServerError) as caught:
        llmts_session.configure(_agents({"name": "helper", "responses": [{"task": {"states": ["done"]}}]}))
    assert caught.value.status == 400 and caught.value.code == "invalid_configuration"
    sent = rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("x")}).json()
    assert sent["result"]["message"]["parts"] == [{"text": "still here"}]


def test_the_builder_and_the_echo_are_compact(llmts_session: SessionClient) -> None:
    builder = (
        ConfigBuilder()
        .a2a_agent("researcher", description="Finds sources", push_notifications=True)
        .skill("search", "Search", tags=["web"], examples=["find X"])
        .text("Which topic?", delay_ms=20)
        .task(artifacts=[{"name": "sources", "text": "A"}], message="done")
        .error(-32001, "gone")
        .a2a_agent("second", terminal_policy="restart")
        .response({"text": "hi"})
    )
    effective = llmts_session.configure(builder)
    first, second = effective["a2a_agents"]
    assert first["responses"] == [
        {"text": "Which topic?", "delay_ms": 20},
        {
            "task": {
                "states": ["submitted", "working", "completed"],
                "artifacts": [{"name": "sources", "text": "A"}],
                "message": "done",
            }
        },
        {"error": {"code": -32001, "message": "gone"}},
    ]
    assert first["skills"] == [
        {"id": "search", "name": "Search", "description": "", "tags": ["web"], "examples": ["find X"]}
    ]
    assert first["push_notifications"] is True and second["terminal_policy"] == "restart"
    # What configure echoes is a configuration that loads unchanged.
    assert parse_session_config(effective).model_dump(mode="json")["a2a_agents"] == effective["a2a_agents"]
    assert builder.config.build().a2a_agents[1].name == "second"


def test_the_agent_builder_chains_on_to_an_mcp_server() -> None:
    config = (
        ConfigBuilder()
        .a2a_agent("researcher")
        .text("found it")
        .mcp_server("files", instructions="Search the files.")
        .tool("search")
        .text("notes.txt")
        .build()
    )
    assert [agent.name for agent in config.a2a_agents] == ["researcher"]
    assert [server.name for server in config.mcp_servers] == ["files"]
    assert config.mcp_servers[0].instructions == "Search the files."


def test_urls_of_an_agent(llmts_session: SessionClient) -> None:
    assert llmts_session.a2a_base_url("my.agent") == llmts_session.provider_base + "/a2a/my.agent"
    assert (
        llmts_session.a2a_card_url("a-b")
        == llmts_session.provider_base + "/a2a/a-b/.well-known/agent-card.json"
    )
