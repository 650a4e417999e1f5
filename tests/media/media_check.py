"""Decode llmts's generated media with decoders that share no code with its encoders: libsndfile
(``soundfile``: libFLAC, libopus, mpg123) for speech PyAV encoded, ffmpeg's own decoders (``av``) for the
images Pillow encoded, a walk of the ADTS frame headers for AAC (which libsndfile cannot read), and the
standard library's XML parser for SVG."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from fractions import Fraction

import av
import soundfile

__all__ = [
    "MAGIC",
    "DecodedAudio",
    "DecodedImage",
    "decode_audio",
    "decode_image",
]

# How each format's file starts (the container's magic).
MAGIC = {
    "mp3": (b"ID3",),  # the ID3v2 tag that carries the speech tag, then MPEG frames
    "opus": (b"OggS",),
    "aac": (b"\xff\xf1", b"\xff\xf9"),  # ADTS sync word, MPEG-4 or MPEG-2, no CRC
    "flac": (b"fLaC",),
    "wav": (b"RIFF",),
    "png": (b"\x89PNG\r\n\x1a\n",),
    "webp": (b"RIFF",),
    "jpeg": (b"\xff\xd8\xff",),
    "gif": (b"GIF89a", b"GIF87a"),
    "svg": (b"<?xml", b"<svg"),
}
_ADTS_RATES = (96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350)


@dataclass
class DecodedAudio:
    sample_rate: int
    channels: int
    seconds: float
    decoder: str


@dataclass
class DecodedImage:
    width: int
    height: int
    frames: int
    frame_seconds: list[float]
    rgb: list[bytes]  # each frame's RGB pixels, row by row (empty for SVG)

    def pixel(self, x: int, y: int, frame: int = 0) -> tuple[int, int, int]:
        at = (y * self.width + x) * 3
        red, green, blue = self.rgb[frame][at : at + 3]
        return red, green, blue


def _adts(data: bytes) -> DecodedAudio:
    """Walk every ADTS frame header to the last byte: sync word, AAC-LC, one rate and channel layout."""
    offset, samples, rates, channels = 0, 0, set(), set()
    while offset < len(data):
        header = data[offset : offset + 7]
        sync = len(header) == 7 and header[0] == 0xFF and header[1] & 0xF6 == 0xF0
        assert sync, f"no ADTS frame at {offset}"
        assert (header[2] >> 6) == 1, "not AAC-LC"
        rates.add(_ADTS_RATES[(header[2] >> 2) & 0x0F])
        channels.add(((header[2] & 0x01) << 2) | (header[3] >> 6))
        length = ((header[3] & 0x03) << 11) | (header[4] << 3) | (header[5] >> 5)
        assert length >= 7
        samples += 1024 * ((header[6] & 0x03) + 1)
        offset += length
    assert offset == len(data) and len(rates) == len(channels) == 1
    (rate,), (channel_count,) = rates, channels
    return DecodedAudio(rate, channel_count, samples / rate, "adts headers")


def decode_audio(fmt: str, data: bytes) -> DecodedAudio:
    """Decode ``data`` fully; AAC is also decoded by ffmpeg (its sample count must match the headers')."""
    assert data.startswith(MAGIC[fmt]), f"{fmt} does not start with its magic: {data[:8]!r}"
    if fmt == "aac":
        walked = _adts(data)
        with av.open(io.BytesIO(data), format="aac") as container:
            decoded = sum(frame.samples for frame in container.decode(audio=0))
        assert decoded == round(walked.seconds * walked.sample_rate)
        return walked
    samples, rate = soundfile.read(io.BytesIO(data), dtype="int16", always_2d=True)
    return DecodedAudio(rate, samples.shape[1], samples.shape[0] / rate, "libsndfile")


def decode_image(fmt: str, data: bytes) -> DecodedImage:
    """Decode every frame of ``data`` with ffmpeg (SVG: parse it and read its cells)."""
    assert data.startswith(MAGIC[fmt]), f"{fmt} does not start with its magic: {data[:8]!r}"
    if fmt == "webp":
        assert data[8:12] == b"WEBP"
    if fmt == "svg":
        root = ElementTree.fromstring(data)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        width, height = int(root.attrib["width"]), int(root.attrib["height"])
        assert root.attrib["viewBox"] == f"0 0 {width} {height}"
        return DecodedImage(width, height, 1, [0.0], [])
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        frames = list(container.decode(stream))
        base = stream.time_base or Fraction(1, 1)
        starts = [float(frame.pts * base) if frame.pts is not None else 0.0 for frame in frames]
        rgb = [frame.to_ndarray(format="rgb24").tobytes() for frame in frames]
    return DecodedImage(frames[0].width, frames[0].height, len(frames), starts, rgb)
