"""OpenAI Responses native tools through Azure OpenAI routes against a real server: the official
``AzureOpenAI`` client served native items through deployments, and the ``/openai/v1`` base URL with
deployment-to-model pairing."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import SessionClient
from tests.providers.openai.native_fixtures import (
    CODE_ITEMS,
    CODE_MODEL,
    CODE_TOOL,
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    MODELS,
    SEED_FILE_TOOL,
    WEB_ITEMS,
    WEB_MODEL,
    WEB_TOOL,
    configure,
)

pytestmark = pytest.mark.sdk


def _azure_config(session: SessionClient, *groups: list[dict[str, Any]]) -> None:
    configure(
        session,
        *groups,
        models=[*MODELS, "gpt-4.1-nano"],
        azure_deployments={
            "files": FILE_MODEL,
            "coder": CODE_MODEL,
            "searcher": WEB_MODEL,
            "small": "gpt-4.1-nano",
        },
    )


def test_azure_openai_client_serves_native_items_through_deployments(app_session: SessionClient) -> None:
    _azure_config(app_session, FILE_ITEMS, CODE_ITEMS, WEB_ITEMS)
    azure = app_session.azure_openai_client(_strict_response_validation=True, max_retries=0)

    search = azure.responses.create(
        model="files", input="x", tools=[SEED_FILE_TOOL], include=["file_search_call.results"]
    )
    with azure.responses.stream(
        model="coder", input="x", tools=[CODE_TOOL], include=["code_interpreter_call.outputs"]
    ) as stream:
        code = stream.get_final_response()
    web = azure.responses.create(model="searcher", input="x", tools=[WEB_TOOL])

    assert search.model == FILE_MODEL and search.output[0].results[0].file_id == "file_source"
    assert code.output[0].container_id == "cntr_fixture" and code.output[0].outputs[0].logs == "42\n"
    assert web.output[0].type == "web_search_call"
    assert {entry["provider"] for entry in app_session.requests()} == {"azure-openai"}


def test_azure_v1_base_url_and_deployment_pairing(llmts_session: SessionClient) -> None:
    _azure_config(llmts_session, FILE_ITEMS)
    v1 = openai.OpenAI(
        base_url=f"{llmts_session.provider_base}/azure-openai/openai/v1",
        api_key="azure-key",
        _strict_response_validation=True,
        max_retries=0,
    )

    with pytest.raises(openai.BadRequestError) as caught:
        v1.responses.create(model="small", input="x", tools=[WEB_TOOL])
    response = v1.responses.create(model="files", input="x", tools=[FILE_TOOL])

    assert caught.value.param == "tools[0]" and "gpt-4.1-nano" in caught.value.message
    assert response.output[1].content[0].annotations[0].file_id == "file_source"
    retrieved = v1.responses.retrieve(response.id)
    assert retrieved.output[0].id == "fs_fixture"
