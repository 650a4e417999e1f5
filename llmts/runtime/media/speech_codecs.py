"""Generated speech in OpenAI's compressed formats, encoded from llmts's 24 kHz mono PCM with PyAV
(ffmpeg's encoders; the optional extra ``llmts[media]``, imported on first use):

* ``mp3``: MPEG-2 Layer III (LAME), 64 kbit/s, with ID3v2 and Xing headers;
* ``opus``: Opus (libopus) in an Ogg file, 32 kbit/s;
* ``aac``: AAC-LC (ffmpeg's encoder) in ADTS frames, 64 kbit/s;
* ``flac``: FLAC, 16-bit, lossless.

Every file but ADTS (which has no metadata) carries ``SPEECH_TAG`` (an ID3 ``TXXX`` frame, a Vorbis
comment), so a transcription of llmts's own speech returns the spoken text
(``llmts.runtime.media.transcript``). Output is bit-exact (ffmpeg's ``bitexact`` flags: no random Ogg
serial number, no library versions), so the same input gives the same bytes.
"""

from __future__ import annotations

import io
from fractions import Fraction
from typing import NamedTuple

from llmts.runtime.media.audio import SAMPLE_RATE, SPEECH_TAG
from llmts.runtime.media.extras import media_module

__all__ = ["SPEECH_CODECS", "encode_speech"]


class _Codec(NamedTuple):
    container: str
    codec: str
    bit_rate: int | None
    options: dict[str, str]


SPEECH_CODECS: dict[str, _Codec] = {
    "mp3": _Codec("mp3", "libmp3lame", 64_000, {"compression_level": "7"}),
    "opus": _Codec("ogg", "libopus", 32_000, {"compression_level": "5"}),
    "aac": _Codec("adts", "aac", 64_000, {}),
    "flac": _Codec("flac", "flac", None, {}),
}
_BITEXACT = {"fflags": "+bitexact"}


def encode_speech(fmt: str, pcm: bytes, tag: str | None) -> bytes:
    """``pcm`` (24 kHz mono signed 16-bit little-endian) as a ``fmt`` file carrying ``tag``."""
    codec = SPEECH_CODECS[fmt]
    av = media_module("av", "PyAV", f"{fmt} speech", "response_format")
    out = io.BytesIO()
    with av.open(out, "w", format=codec.container, container_options=_BITEXACT) as container:
        if tag is not None:
            container.metadata[SPEECH_TAG] = tag
        stream = container.add_stream(codec.codec, rate=SAMPLE_RATE, layout="mono")
        if codec.bit_rate is not None:
            stream.codec_context.bit_rate = codec.bit_rate
        stream.codec_context.options = {**codec.options, "flags": "+bitexact"}
        # One frame of all the samples: the encoder's own resampler cuts it into the codec's frame size.
        samples = len(pcm) // 2
        if samples:
            frame = av.AudioFrame(format="s16", layout="mono", samples=samples)
            frame.planes[0].update(pcm[: samples * 2])
            frame.sample_rate = SAMPLE_RATE
            frame.time_base = Fraction(1, SAMPLE_RATE)
            frame.pts = 0
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()
