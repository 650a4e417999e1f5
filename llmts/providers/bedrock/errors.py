"""Bedrock Runtime's error shape: ``x-amzn-ErrorType: <Name>`` plus ``{"message": ...}``.

botocore's rest-json parser takes the error code from the ``x-amzn-ErrorType`` header and the message from
the body, so the SDK raises its modelled exception (``client.exceptions.ThrottlingException``...) and its
retry rules run (``ThrottlingException``, 5xx). The name comes from a scripted error's ``type`` or ``code``
when it is an AWS exception name (``...Exception``), else from the status; llmts's own 409s keep their
``llm_test_server_*`` code as the error code (a plain ``ClientError`` whose code names the cause).

A model the session does not serve is answered as Bedrock Runtime answers a model id it does not know:
400 ``ValidationException`` "The provided model identifier is invalid." (docs/providers.md, "AWS Bedrock").
"""

from __future__ import annotations

import orjson

from llmts.errors import LlmtsError, ModelNotFound, ProviderUnauthorized, ScriptedError
from llmts.providers.base import Reply, retry_after_headers

__all__ = ["ERROR_TYPES", "INVALID_MODEL_MESSAGE", "error_type_for", "render_bedrock_error"]

ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
# AWS answers an unknown or malformed access key with 403 and this (unmodelled) code.
_UNRECOGNIZED_CLIENT = "UnrecognizedClientException"
INVALID_MODEL_MESSAGE = "The provided model identifier is invalid."


def error_type_for(error: LlmtsError) -> str:
    scripted = getattr(error, "error_type", None)
    if isinstance(scripted, str) and scripted.endswith("Exception"):
        return scripted
    if error.code.endswith("Exception"):
        return error.code
    if isinstance(error, ProviderUnauthorized):
        return _UNRECOGNIZED_CLIENT
    known = ERROR_TYPES.get(error.http_status)
    if known is not None:
        return known
    if error.code.startswith("llm_test_server_"):
        return error.code
    return "InternalServerException" if error.http_status >= 500 else "ValidationException"


def render_bedrock_error(error: LlmtsError, request_id: str) -> Reply:
    if isinstance(error, ModelNotFound):
        return Reply(
            400,
            [
                ("Content-Type", "application/json"),
                ("x-amzn-ErrorType", "ValidationException"),
                ("x-amzn-RequestId", request_id),
            ],
            orjson.dumps({"message": INVALID_MODEL_MESSAGE}),
        )
    status = 403 if isinstance(error, ProviderUnauthorized) else error.http_status
    headers = [
        ("Content-Type", "application/json"),
        ("x-amzn-ErrorType", error_type_for(error)),
        ("x-amzn-RequestId", request_id),
    ]
    if isinstance(error, ScriptedError) and error.retry_after is not None:
        headers += retry_after_headers(error.retry_after, milliseconds=False)
    return Reply(status, headers, orjson.dumps({"message": error.message}))
