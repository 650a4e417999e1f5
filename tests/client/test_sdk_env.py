"""``llmts env`` and the ``llmts_env`` fixture: official SDK clients built with no arguments, reading only
the environment, reach the session (in a clean subprocess for the CLI, in process for the fixture), and
the printed lines survive each shell's quoting."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import anthropic
import openai
import pytest
from google import genai

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from llmts.catalog.sdk_env import (
    SDK_OVERRIDDEN_VARIABLES,
    SDK_VARIABLES,
    render_environment,
    sdk_environment,
)
from llmts.server.cli import main
from tests.helpers import USER_HI
from tests.support import configure
from tests.support.docs import doc_section
from tests.support.inner_pytest import attached_to, run_in_process

pytestmark = pytest.mark.sdk

ROOT = Path(__file__).resolve().parents[2]
# The public variable names (docs/server.md "llmts env"; declared per provider, docs/architecture.md
# "Providers and the adapter registry"); the table may add more beside them.
PUBLIC_NAMES = {
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "OPENAI_API_VERSION",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_API_KEY",
    "GEMINI_API_BASE",
    "OLLAMA_HOST",
    "CO_API_URL",
    "CO_API_KEY",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_REGION",
}
CREDENTIALS = {"openai": "sk-o", "azure-openai": "az-k", "anthropic": "sk-ant", "gemini": "g-key"}

# Each snippet builds its client with no arguments at all and prints the answer's text.
SDK_CALLS = {
    "openai": (
        "import openai\n"
        "c = openai.OpenAI(max_retries=0)\n"
        "print(c.chat.completions.create(model='gpt-4.1-mini', messages=HI).choices[0].message.content)"
    ),
    "azure-openai": (
        "import openai\n"
        "c = openai.AzureOpenAI(max_retries=0)\n"
        "print(c.chat.completions.create(model='chat-prod', messages=HI).choices[0].message.content)"
    ),
    "anthropic": (
        "import anthropic\n"
        "c = anthropic.Anthropic(max_retries=0)\n"
        "r = c.messages.create(model='claude-sonnet-4-6', max_tokens=16, messages=HI)\n"
        "print(r.content[0].text)"
    ),
    "gemini": (
        "from google import genai\n"
        "c = genai.Client()  # kept in a variable: a collected client closes its connection pool\n"
        "print(c.models.generate_content(model='gemini-2.5-flash', contents='Hi').text)"
    ),
}


def _clean_environ() -> dict[str, str]:
    """This process's environment without anything the SDKs would read."""
    names = {v.name for v in SDK_VARIABLES} | set(SDK_OVERRIDDEN_VARIABLES)
    return {k: v for k, v in os.environ.items() if k not in names}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmts", "env", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


def _parse_dotenv(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_the_table_covers_the_contract_names_once() -> None:
    names = [v.name for v in SDK_VARIABLES]
    assert len(names) == len(set(names))
    assert set(names) >= PUBLIC_NAMES


def test_docs_name_every_variable_set_or_unset() -> None:
    """A provider declares its variables in its ``info.py``; docs/server.md ("llmts env") must show them."""
    section = doc_section("docs/server.md", "## llmts env")
    declared = [v.name for v in SDK_VARIABLES] + list(SDK_OVERRIDDEN_VARIABLES)
    assert [name for name in declared if f"`{name}`" not in section] == []


def test_values_derive_from_the_provider_base_and_the_credentials() -> None:
    env = sdk_environment("http://h:1/sessions/ses_x/", lambda ns: f"key-{ns}")

    assert env["OPENAI_BASE_URL"] == "http://h:1/sessions/ses_x/openai/v1"
    assert env["AZURE_OPENAI_ENDPOINT"] == "http://h:1/sessions/ses_x/azure-openai"
    assert env["ANTHROPIC_BASE_URL"] == "http://h:1/sessions/ses_x/anthropic"
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://h:1/sessions/ses_x/gemini"
    assert env["GEMINI_API_BASE"] == "http://h:1/sessions/ses_x/gemini/v1beta"  # litellm appends /models/...
    assert env["OLLAMA_HOST"] == "http://h:1/sessions/ses_x/ollama"
    assert env["CO_API_URL"] == "http://h:1/sessions/ses_x/cohere"
    assert env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] == "http://h:1/sessions/ses_x/bedrock"
    assert (env["OPENAI_API_KEY"], env["ANTHROPIC_API_KEY"]) == ("key-openai", "key-anthropic")
    assert env["GEMINI_API_KEY"] == "key-gemini" and "GOOGLE_API_KEY" not in env
    assert (env["AZURE_OPENAI_API_KEY"], env["CO_API_KEY"]) == ("key-azure-openai", "key-cohere")
    assert env["AWS_REGION"] == "us-east-1" and env["AWS_ACCESS_KEY_ID"]


TRICKY = {"A_PLAIN": "http://h:1/x", "B_QUOTES": 'it\'s "q" $HOME `x` \\ end', "C_EMPTYISH": " "}


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_sh_lines_evaluate_to_the_exact_values() -> None:
    script = render_environment(TRICKY, "sh") + 'printf "%s\\n" "$A_PLAIN" "$B_QUOTES" "$C_EMPTYISH"'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == list(TRICKY.values())


def test_fish_powershell_and_dotenv_lines() -> None:
    assert (
        render_environment({"K": "it's \\"}, "fish", unset=("X",)) == "set -e X;\nset -gx K 'it\\'s \\\\';\n"
    )
    assert render_environment({"K": "it's"}, "powershell", unset=()) == "$env:K = 'it''s'\n"
    assert render_environment({}, "powershell", unset=("X",)) == (
        "Remove-Item Env:X -ErrorAction SilentlyContinue\n"
    )
    assert render_environment({"K": "http://h:1/x"}, "dotenv") == "K=http://h:1/x\n"
    assert render_environment({"K": 'a "b"'}, "dotenv") == 'K="a \\"b\\""\n'


def test_cli_refuses_a_session_that_is_not_an_id_and_a_url_without_scheme(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In process: the refusal is main's; a real process's exit path is test_cli_works_offline's.
    assert main(["env", "--session", "../admin"]) == 2
    assert main(["env", "--url", "localhost:8080"]) == 2
    assert capsys.readouterr().out == ""


def test_cli_works_offline_with_the_default_key() -> None:
    result = _cli("--url", "http://127.0.0.1:9", "--session", "ses_0", "--shell", "dotenv")

    assert result.returncode == 0, result.stderr
    env = _parse_dotenv(result.stdout)
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/sessions/ses_0/openai/v1"
    assert env["OPENAI_API_KEY"] == "llmts-test-key"


def test_cli_environment_lets_clients_built_without_arguments_reach_the_session(
    llmts_server: LlmTestServer, llmts_session: SessionClient
) -> None:
    configure.script(
        llmts_session,
        {"text": "from llmts"},
        scenario={"terminal_policy": "repeat_last_response"},
        provider_credentials=CREDENTIALS,
        azure_deployments={"chat-prod": "gpt-4.1-mini"},
    )
    args = ["--url", llmts_server.url, "--session", llmts_session.id, "--shell", "sh"]
    if llmts_server.control_key:
        args += ["--control-key", llmts_server.control_key]
    printed = _cli(*args)
    assert printed.returncode == 0, printed.stderr
    script = f'{printed.stdout}\nexec "$PYTHON" -c "$SNIPPET"\n'
    # One interpreter builds every SDK's client from that environment alone (nothing else is set in it).
    snippet = f"HI = {USER_HI!r}\n" + "\n".join(SDK_CALLS.values())

    run = subprocess.run(
        ["sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        # Ambient values the printed lines must override or unset.
        env={
            **_clean_environ(),
            "PYTHON": sys.executable,
            "SNIPPET": snippet,
            "GOOGLE_API_KEY": "ambient-wrong",
            "OPENAI_API_KEY": "ambient-wrong",
            "GOOGLE_GENAI_USE_VERTEXAI": "true",
        },
        check=False,
    )

    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["from", "llmts"] * len(SDK_CALLS)
    entries = llmts_session.requests(order="asc")
    assert [(e["provider"], e["status"]) for e in entries] == [(namespace, 200) for namespace in SDK_CALLS]


def test_llmts_env_fixture_points_clients_built_without_arguments_at_the_session(
    llmts_session: SessionClient, llmts_env: dict[str, str]
) -> None:
    llmts_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok"))
    assert (
        os.environ["OPENAI_BASE_URL"]
        == llmts_env["OPENAI_BASE_URL"]
        == (f"{llmts_session.provider_base}/openai/v1")
    )

    chat = openai.OpenAI(_strict_response_validation=True, max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI
    )
    message = anthropic.Anthropic(_strict_response_validation=True, max_retries=0).messages.create(
        model="claude-sonnet-4-6", max_tokens=8, messages=USER_HI
    )
    client = genai.Client()  # kept: a garbage-collected genai client closes its connection pool
    gemini = client.models.generate_content(model="gemini-2.5-flash", contents="Hi")

    assert (chat.choices[0].message.content, message.content[0].text, gemini.text) == ("ok", "ok", "ok")
    assert [e["provider"] for e in llmts_session.requests(order="asc")] == ["openai", "anthropic", "gemini"]


INNER = """
import os

def test_a_uses_the_fixture(llmts_env):
    assert os.environ["OPENAI_BASE_URL"] == llmts_env["OPENAI_BASE_URL"] != "http://elsewhere"
    assert "ANTHROPIC_AUTH_TOKEN" not in os.environ

def test_b_sees_the_environment_restored():
    assert os.environ["OPENAI_BASE_URL"] == "http://elsewhere"
    assert os.environ["ANTHROPIC_AUTH_TOKEN"] == "ambient"
    assert "GOOGLE_GEMINI_BASE_URL" not in os.environ
"""


def test_llmts_env_fixture_restores_the_environment_after_the_test(
    pytester: pytest.Pytester, llmts_server: LlmTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "ambient")
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    pytester.makepyfile(test_inner=INNER)
    args = attached_to(llmts_server)

    result = run_in_process(pytester, *args)

    assert result.parseoutcomes().get("passed") == 2, result.stdout.str()
