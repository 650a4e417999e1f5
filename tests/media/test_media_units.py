"""Pure media pieces in memory: the PNG encoder and generated images (decoded with zlib and chunk CRCs),
generated speech (decoded with the standard library's ``wave``), transcripts and subtitles."""

from __future__ import annotations

import io
import wave

import pytest

from llmts.providers.openai.subtitles import srt, timestamp, vtt
from llmts.runtime.media.audio import MAX_SPEECH_SECONDS, SAMPLE_RATE, speech_pcm, wav_bytes
from llmts.runtime.media.png import MAX_IMAGE_EDGE, encode_palette_png, generated_png
from llmts.runtime.media.transcript import generated_transcript, read_wav, timed_segments, timed_words
from llmts.schema.media import TimedText
from tests.media.png_check import decode_png


@pytest.mark.parametrize("size", [(1, 1), (7, 3), (256, 256), (1024, 1536), (1536, 1024)])
def test_generated_png_decodes_to_the_requested_size(size: tuple[int, int]) -> None:
    width, height = size
    image = decode_png(generated_png(width, height, b"a cat"))
    assert (image.width, image.height, image.colour_type) == (width, height, 3)
    assert all(len(row) == width for row in image.rows)


def test_generated_png_is_deterministic_per_key_and_differs_between_keys() -> None:
    first = generated_png(64, 64, b"seed\x00a cat")
    assert generated_png(64, 64, b"seed\x00a cat") == first
    assert generated_png(64, 64, b"seed\x00a dog") != first
    assert generated_png(64, 64, b"other\x00a cat") != first


def test_generated_png_is_a_grid_of_cells() -> None:
    image = decode_png(generated_png(64, 32, b"grid"))
    # 8 x 8 cells of 8 x 4 pixels: each cell is one colour.
    for row in range(0, 32, 4):
        for column in range(0, 64, 8):
            cell = {image.rows[y][x] for y in range(row, row + 4) for x in range(column, column + 8)}
            assert len(cell) == 1


def test_partial_images_reveal_rows_from_the_top() -> None:
    final = decode_png(generated_png(32, 32, b"k"))
    half = decode_png(generated_png(32, 32, b"k", reveal=0.5))
    grey = half.palette.index((128, 128, 128))
    assert half.rows[:16] == final.rows[:16]
    assert all(set(row) == {grey} for row in half.rows[16:])
    assert all(set(row) == {grey} for row in decode_png(generated_png(32, 32, b"k", reveal=0)).rows)


def test_generated_png_refuses_sizes_over_the_bound() -> None:
    with pytest.raises(ValueError):
        generated_png(MAX_IMAGE_EDGE + 1, 16, b"k")
    with pytest.raises(ValueError):
        generated_png(0, 16, b"k")
    with pytest.raises(ValueError):
        encode_palette_png(1, 1, [], [b"\x00\x00"])


def test_speech_wav_decodes_with_the_standard_library() -> None:
    pcm = speech_pcm("Hello there, general.")
    assert pcm and len(pcm) % 2 == 0
    with wave.open(io.BytesIO(wav_bytes(pcm, "Hello there, general."))) as reader:
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (1, 2, SAMPLE_RATE)
        assert reader.readframes(reader.getnframes()) == pcm


def test_speech_is_deterministic_scales_with_speed_and_is_bounded() -> None:
    assert speech_pcm("one two three") == speech_pcm("one two three")
    assert speech_pcm("one two three") != speech_pcm("one two four")
    normal, fast = len(speech_pcm("one two three")), len(speech_pcm("one two three", speed=2.0))
    assert fast < normal * 0.6
    assert len(speech_pcm("word " * 10_000)) == MAX_SPEECH_SECONDS * SAMPLE_RATE * 2
    assert speech_pcm("")  # a short silence, still valid audio


def test_transcript_of_llmts_speech_is_the_spoken_text() -> None:
    text = "Book a table for two. At eight, please!"
    audio = wav_bytes(speech_pcm(text), text)
    duration, embedded = read_wav(audio)
    assert embedded == text and duration is not None and duration > 1
    assert generated_transcript(audio) == (text, round(duration, 3))


def test_transcript_of_other_uploads_names_size_and_digest() -> None:
    text, duration = generated_transcript(b"\x00" * 32_000)
    assert text.startswith("Transcribed audio: 32000 bytes, sha256 ")
    assert duration == 2.0
    assert generated_transcript(b"x")[1] == 0.1  # at least 0.1 s
    plain = wav_bytes(speech_pcm("hi"))  # a WAV without llmts's text chunk: its own duration
    assert generated_transcript(plain)[0].startswith("Transcribed audio: ")
    assert read_wav(b"RIFF\xff\xff\xff\xffWAVEjunk") == (None, None)  # a broken WAV is not an error


def test_timed_segments_and_words_cover_the_duration() -> None:
    segments = timed_segments("One two. Three four five?", 5.0)
    assert [s.text for s in segments] == ["One two.", "Three four five?"]
    assert segments[0].start == 0 and segments[-1].end == 5.0 and segments[0].end == segments[1].start
    words = timed_words("One two. Three", 3.0)
    assert [w.text for w in words] == ["One", "two", "Three"]
    assert words[-1].end == 3.0 and all(w.start < w.end for w in words)


def test_srt_and_vtt() -> None:
    cues = (TimedText(0.0, 1.5, "Hello there."), TimedText(1.5, 3661.25, "General\nKenobi --> now"))
    assert timestamp(3661.25, ",") == "01:01:01,250"
    assert srt(cues) == (
        "1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n"
        "2\n00:00:01,500 --> 01:01:01,250\nGeneral Kenobi -> now\n\n"
    )
    assert vtt(cues) == (
        "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n\n"
        "00:00:01.500 --> 01:01:01.250\nGeneral Kenobi -> now\n\n"
    )
