"""The media encoders and the speech tag without a server: the tag's reader against hostile bytes, the
GIF animation's frames, SVG's cells, and the error for a missing extra (llmts/runtime/media/)."""

from __future__ import annotations

import io
import itertools
import json
import xml.etree.ElementTree as ElementTree

import pytest
from PIL import Image

from llmts.errors import EncoderMissing
from llmts.runtime.media.audio import SPEECH_TAG, SPEECH_TAG_CHARS, pcm_seconds, speech_pcm, speech_tag
from llmts.runtime.media.extras import media_module
from llmts.runtime.media.image_codecs import _animation, draw_image
from llmts.runtime.media.png import grid
from llmts.runtime.media.speech_codecs import encode_speech
from llmts.runtime.media.transcript import generated_transcript, read_speech_tag
from llmts.runtime.operations.speech import SPEECH, SpeechInput


def _speech(text: str, fmt: str) -> bytes:
    assert SPEECH.generate is not None
    return SPEECH.generate(SpeechInput(text, fmt), "seed").result.data  # type: ignore[union-attr]


def test_the_speech_tag_is_ascii_json_and_bounded() -> None:
    tag = speech_tag('Grüße "dort" 😀', 1.23456)
    assert tag is not None and tag.isascii()
    assert json.loads(tag) == {"text": 'Grüße "dort" 😀', "seconds": 1.235}
    assert speech_tag("x" * SPEECH_TAG_CHARS, 1.0) is not None
    assert speech_tag("x" * (SPEECH_TAG_CHARS + 1), 1.0) is None


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"no tag here",
        SPEECH_TAG.encode(),  # the key at the very end
        SPEECH_TAG.encode() + b"=not json",
        SPEECH_TAG.encode() + b"={",  # cut off
        SPEECH_TAG.encode() + b"=" + b"{" * 100_000,  # nested past the recursion limit
        SPEECH_TAG.encode() + b'={"text": 1, "seconds": 1}',
        SPEECH_TAG.encode() + b'={"text": "x", "seconds": true}',
        SPEECH_TAG.encode() + b'={"text": "x", "seconds": -1}',
        SPEECH_TAG.encode() + b'={"text": "x", "seconds": 1e999}',
        SPEECH_TAG.encode() + b'={"text": "x", "seconds": 86400}',
        SPEECH_TAG.encode() + b'=["text", "x"]',
        bytes(200_000) + SPEECH_TAG.encode() + b'={"text": "x", "seconds": 1}',  # beyond the head
    ],
)
def test_read_speech_tag_refuses_what_is_not_llmts_speech(data: bytes) -> None:
    assert read_speech_tag(data) is None
    assert generated_transcript(data)[0].startswith("Transcribed audio: ")


def test_read_speech_tag_reads_the_tag_whatever_follows_it() -> None:
    tag = speech_tag("Hello there.", 2.5)
    assert tag is not None
    for separator in (b"=", b"\x00"):  # a Vorbis comment, an ID3 TXXX frame
        data = b"\xff\xf3junk" + SPEECH_TAG.encode() + separator + tag.encode() + b"\x00\xff}{binary"
        assert read_speech_tag(data) == (2.5, "Hello there.")


@pytest.mark.parametrize("fmt", ["mp3", "opus", "flac"])
def test_a_text_beyond_the_tag_is_spoken_but_not_carried(fmt: str) -> None:
    long = "word " * 1000  # 5,000 characters: more than OpenAI accepts, possible without strict_requests
    data = _speech(long, fmt)
    assert read_speech_tag(data) is None
    short = _speech("Hello there.", fmt)
    assert read_speech_tag(short) == (round(pcm_seconds(speech_pcm("Hello there.")), 3), "Hello there.")


def test_encode_speech_handles_any_sample_count() -> None:
    for samples in (1, 3, 12_345):
        for fmt in ("mp3", "opus", "aac", "flac"):
            assert encode_speech(fmt, b"\x01\x02" * samples, None)


@pytest.mark.parametrize(
    ("width", "height", "frames"), [(1, 1, 16), (3, 5, 9), (8, 8, 16), (256, 128, 9), (64, 64, 2)]
)
def test_every_gif_frame_differs_from_the_one_before_and_the_last_is_the_image(
    width: int, height: int, frames: int
) -> None:
    drawn = grid(width, height, b"key")
    animation = _animation(drawn, frames)
    assert len(animation) == frames and animation[-1].cells == drawn.cells
    assert all(
        (before.cells, before.palette) != (after.cells, after.palette)
        for before, after in itertools.pairwise(animation)
    )
    decoded = Image.open(io.BytesIO(draw_image("gif", width, height, b"key", frame_count=frames)))
    assert (decoded.size, decoded.n_frames) == ((width, height), frames)  # Pillow merged none


def test_svg_has_one_rect_per_visible_cell_in_the_grid_colours() -> None:
    for width, height, cells in ((64, 32, 64), (3, 5, 15)):
        drawn = grid(width, height, b"key")
        root = ElementTree.fromstring(draw_image("svg", width, height, b"key"))
        rects = root.findall("{http://www.w3.org/2000/svg}rect")
        assert len(rects) == cells == len(drawn.visible())
        fills = [rect.attrib["fill"] for rect in rects]
        colours = [drawn.palette[drawn.cells[cell]] for cell in drawn.visible()]
        assert fills == ["#" + "".join(f"{channel:02x}" for channel in colour) for colour in colours]
        assert sum(int(r.attrib["width"]) * int(r.attrib["height"]) for r in rects) == width * height


def test_a_missing_module_is_a_501_naming_the_extra() -> None:
    with pytest.raises(EncoderMissing) as caught:
        media_module("llmts_no_such_module", "PyAV", "mp3 speech", "response_format")
    assert caught.value.http_status == 501 and caught.value.param == "response_format"
    assert "pip install 'llmts[media]'" in caught.value.message
