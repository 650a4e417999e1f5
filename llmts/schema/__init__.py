"""Pydantic models: configuration, neutral request/result, control-API bodies."""

from __future__ import annotations

from llmts.schema.builder import ConfigBuilder, ScenarioBuilder
from llmts.schema.config import (
    LIMITS,
    PROVIDER_NAMESPACES,
    ErrorFixture,
    ResponseFixture,
    Scenario,
    SessionConfig,
    ToolCallFixture,
    UsageOverride,
)
from llmts.schema.control import ControlError, ControlErrorBody, SessionInfo
from llmts.schema.neutral import (
    Completion,
    NeutralMessage,
    NeutralRequest,
    NeutralToolCall,
    ScriptedOutput,
    ToolChoice,
    Usage,
)
from llmts.schema.validation import format_location, parse_session_config, parse_session_config_json

__all__ = [
    "LIMITS",
    "PROVIDER_NAMESPACES",
    "Completion",
    "ConfigBuilder",
    "ControlError",
    "ControlErrorBody",
    "ErrorFixture",
    "NeutralMessage",
    "NeutralRequest",
    "NeutralToolCall",
    "ResponseFixture",
    "Scenario",
    "ScenarioBuilder",
    "ScriptedOutput",
    "SessionConfig",
    "SessionInfo",
    "ToolCallFixture",
    "ToolChoice",
    "Usage",
    "UsageOverride",
    "format_location",
    "parse_session_config",
    "parse_session_config_json",
]
