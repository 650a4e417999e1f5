"""Pydantic models: configuration, neutral request/result, control-API bodies."""

from __future__ import annotations

from llmts.schema.builder import ConfigBuilder, ConversationBuilder, ScenarioBuilder, StepBuilder
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
from llmts.schema.control import ControlError, ControlErrorBody, QueueStatus, SessionInfo
from llmts.schema.conversations import (
    ConversationCapacity,
    ConversationGraph,
    ConversationStatus,
    ConversationStep,
    MatchExplanation,
    StepWhen,
)
from llmts.schema.items import (
    CodeInterpreterImageOutput,
    CodeInterpreterItem,
    CodeInterpreterLogsOutput,
    ContainerFileCitation,
    FileCitation,
    FileSearchItem,
    FileSearchResult,
    MessageItem,
    UrlCitation,
    WebSearchItem,
)
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
    "CodeInterpreterImageOutput",
    "CodeInterpreterItem",
    "CodeInterpreterLogsOutput",
    "Completion",
    "ConfigBuilder",
    "ContainerFileCitation",
    "ControlError",
    "ControlErrorBody",
    "ConversationBuilder",
    "ConversationCapacity",
    "ConversationGraph",
    "ConversationStatus",
    "ConversationStep",
    "ErrorFixture",
    "FileCitation",
    "FileSearchItem",
    "FileSearchResult",
    "MatchExplanation",
    "MessageItem",
    "NeutralMessage",
    "NeutralRequest",
    "NeutralToolCall",
    "QueueStatus",
    "ResponseFixture",
    "Scenario",
    "ScenarioBuilder",
    "ScriptedOutput",
    "SessionConfig",
    "SessionInfo",
    "StepBuilder",
    "StepWhen",
    "ToolCallFixture",
    "ToolChoice",
    "UrlCitation",
    "Usage",
    "UsageOverride",
    "WebSearchItem",
    "format_location",
    "parse_session_config",
    "parse_session_config_json",
]
