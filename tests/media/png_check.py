"""Decode a PNG the way a strict reader does: signature, chunk CRCs, IHDR, PLTE, zlib, filters."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

__all__ = ["DecodedPng", "decode_png"]


@dataclass
class DecodedPng:
    width: int
    height: int
    colour_type: int
    palette: list[tuple[int, int, int]]
    rows: list[bytes]  # unfiltered palette indexes (colour type 3) or raw samples


def _unfilter(kind: int, line: bytearray, previous: bytes, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        up_left = previous[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - up_left
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
            pred = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
            line[i] = (line[i] + pred) & 0xFF
        elif kind != 0:
            raise AssertionError(f"unknown filter type {kind}")


def decode_png(data: bytes) -> DecodedPng:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature"
    offset, chunks = 8, []
    while offset < len(data):
        (length,) = struct.unpack_from(">I", data, offset)
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack_from(">I", data, offset + 8 + length)
        assert zlib.crc32(kind + body) == crc, f"CRC of {kind!r}"
        chunks.append((kind, body))
        offset += 12 + length
    assert offset == len(data), "no bytes after the last chunk"
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    width, height, depth, colour_type, compression, filter_method, interlace = struct.unpack(
        ">IIBBBBB", chunks[0][1]
    )
    assert depth == 8 and compression == 0 and filter_method == 0 and interlace == 0
    palette: list[tuple[int, int, int]] = []
    for kind, body in chunks:
        if kind == b"PLTE":
            assert len(body) % 3 == 0
            palette = [tuple(body[i : i + 3]) for i in range(0, len(body), 3)]  # type: ignore[misc]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour_type]
    stride = width * bpp
    assert len(raw) == height * (stride + 1), "IDAT holds exactly height filtered rows"
    rows, previous = [], bytes(stride)
    for row in range(height):
        start = row * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], line, previous, bpp)
        previous = bytes(line)
        rows.append(previous)
    if colour_type == 3:
        assert palette and max(max(row) for row in rows) < len(palette), "indexes inside the palette"
    return DecodedPng(width, height, colour_type, palette, rows)
