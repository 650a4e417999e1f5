"""The optional extra ``llmts[media]`` (PyAV, Pillow): a server without it answers the formats that need it
with a 501 in OpenAI's envelope naming the extra, and still generates the formats it writes itself; and
loading the app imports neither (docs/design/memory.md, "The two processes' import sets")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import openai
import pytest

from llmts import LlmTestServer

pytestmark = pytest.mark.sdk

_HIDDEN = ("av", "PIL")


def _hide_media_extra(directory: Path) -> str:
    """A PYTHONPATH whose first entry shadows PyAV and Pillow with packages that fail to import."""
    for name in _HIDDEN:
        (directory / name).mkdir()
        (directory / name / "__init__.py").write_text(f"raise ImportError('{name} hidden by the test')\n")
    return os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH", "")) if p)


def test_without_the_media_extra_those_formats_are_a_501_naming_it(
    tmp_path: Path, own_server_factory: Callable[..., LlmTestServer]
) -> None:
    server = own_server_factory(env={"PYTHONPATH": _hide_media_extra(tmp_path)})
    session = server.create_session()
    client = session.openai_client(_strict_response_validation=True, max_retries=2)

    for fmt in ("mp3", "opus", "aac", "flac"):
        with pytest.raises(openai.InternalServerError) as caught:
            client.audio.speech.create(
                model="gpt-4o-mini-tts", voice="alloy", input="Hello", response_format=fmt
            )
        assert caught.value.status_code == 501 and caught.value.code == "llm_test_server_encoder_missing"
        assert caught.value.param == "response_format"
        assert "PyAV" in caught.value.message and "pip install 'llmts[media]'" in caught.value.message
        assert caught.value.response.headers["x-should-retry"] == "false"
    for fmt in ("webp", "jpeg"):
        with pytest.raises(openai.InternalServerError) as caught:
            client.images.generate(model="gpt-image-1.5", prompt="a fox", size="64x64", output_format=fmt)
        assert (caught.value.status_code, caught.value.param) == (501, "output_format")
        assert "Pillow" in caught.value.message and "pip install 'llmts[media]'" in caught.value.message

    # What llmts writes itself needs no extra.
    wav = client.audio.speech.create(
        model="gpt-4o-mini-tts", voice="alloy", input="Hello", response_format="wav"
    )
    assert wav.content.startswith(b"RIFF")
    png = client.images.generate(model="gpt-image-1.5", prompt="a fox", size="64x64")
    assert png.output_format == "png"
    errors = [entry["error_code"] for entry in session.requests(order="asc")]
    assert errors == ["llm_test_server_encoder_missing"] * 6 + [None, None]  # no retries


def test_loading_the_app_imports_no_media_encoder() -> None:
    code = (
        "import sys\n"
        "from llmts.server.app import create_app\n"
        "create_app()\n"
        "print(sorted(m for m in ('av', 'PIL', 'soundfile', 'numpy') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
