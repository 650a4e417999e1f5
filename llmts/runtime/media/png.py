"""A small PNG encoder (8-bit palette, standard-library zlib) and the images llmts generates.

Generated images (docs/images.md) are a grid of coloured cells whose palette and layout derive from a key
(seed, prompt, size, image index), so the same request draws the same bytes. ``Grid`` is that drawing;
``generated_png`` encodes it here, ``llmts.runtime.media.image_codecs`` in the other formats. Rows are
written with PNG's "Up" filter after each cell row's first scanline, so the compressor sees runs of zeros
and a 1024x1024 image costs a few milliseconds; the raw image is never held whole (one cell row at a time).
Why hand-written: docs/architecture.md, "Hand-written code and why".
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_IMAGE_EDGE",
    "MAX_IMAGE_PIXELS",
    "PNG_SIGNATURE",
    "UNREVEALED",
    "Grid",
    "encode_palette_png",
    "generated_png",
    "grid",
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Bounds of a generated image (the largest size OpenAI's image models draw is 3840x2160).
MAX_IMAGE_EDGE = 3840
MAX_IMAGE_PIXELS = 3840 * 2160

_GRID = 8  # cells per edge
_COLOURS = 6  # palette entries drawn from the key
UNREVEALED = _COLOURS  # the palette index of unrevealed cells (the last entry: grey)
_GREY = (128, 128, 128)
_FILTER_NONE = b"\x00"
_FILTER_UP = b"\x02"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_palette_png(
    width: int, height: int, palette: Sequence[tuple[int, int, int]], scanlines: Iterable[bytes]
) -> bytes:
    """A PNG of 8-bit palette indexes: ``scanlines`` are the filtered rows (filter byte + ``width``
    indexes), ``height`` of them in total, fed to zlib as they come."""
    if width < 1 or height < 1 or not 1 <= len(palette) <= 256:
        raise ValueError("a PNG needs a positive size and 1 to 256 palette colours")
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)  # 8-bit, palette, deflate, no interlace
    compressor = zlib.compressobj(6)
    parts = [compressor.compress(line) for line in scanlines]
    parts.append(compressor.flush())
    return b"".join(
        (
            PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", b"".join(bytes(colour) for colour in palette)),
            _chunk(b"IDAT", b"".join(parts)),
            _chunk(b"IEND", b""),
        )
    )


def _edges(length: int) -> tuple[int, ...]:
    """Cell boundaries along one edge: ``_GRID`` cells, the last ones one pixel shorter if it must."""
    return tuple(length * index // _GRID for index in range(_GRID + 1))


@dataclass(frozen=True, slots=True)
class Grid:
    """One generated image, format-free: ``cells[row * 8 + column]`` is the palette index of that cell,
    which spans ``columns[column]..columns[column + 1]`` and ``rows[row]..rows[row + 1]`` (pixels)."""

    width: int
    height: int
    palette: tuple[tuple[int, int, int], ...]
    columns: tuple[int, ...]
    rows: tuple[int, ...]
    cells: bytes

    def visible(self) -> list[int]:
        """The indexes of the cells at least one pixel wide and high (all 64 from 8x8 pixels up)."""
        return [
            row * _GRID + column
            for row in range(_GRID)
            for column in range(_GRID)
            if self.columns[column + 1] > self.columns[column] and self.rows[row + 1] > self.rows[row]
        ]

    def boxes(self) -> Iterator[tuple[int, int, int, int, int]]:
        """Each visible cell as (left, top, right, bottom, palette index), row by row."""
        for index in self.visible():
            row, column = divmod(index, _GRID)
            left, right = self.columns[column], self.columns[column + 1]
            top, bottom = self.rows[row], self.rows[row + 1]
            yield left, top, right, bottom, self.cells[index]


def grid(width: int, height: int, key: bytes, reveal: float = 1.0) -> Grid:
    """The generated image for ``key``: a ``_GRID`` x ``_GRID`` grid of cells coloured from the key's
    digest. ``reveal`` < 1 draws a partial image: only that share of the cell rows (from the top) is
    coloured, the rest grey, as a progressive preview would be."""
    if (
        not (1 <= width <= MAX_IMAGE_EDGE and 1 <= height <= MAX_IMAGE_EDGE)
        or width * height > MAX_IMAGE_PIXELS
    ):
        raise ValueError(f"a generated image is at most {MAX_IMAGE_EDGE} pixels a side")
    colours = hashlib.sha256(key).digest()
    digest = hashlib.sha512(b"cells\x00" + key).digest()  # one byte per cell of the 8 x 8 grid
    palette = tuple((colours[3 * i], colours[3 * i + 1], colours[3 * i + 2]) for i in range(_COLOURS))
    revealed = round(_GRID * max(0.0, min(1.0, reveal)))
    cells = bytes(
        digest[cell] % _COLOURS if cell // _GRID < revealed else UNREVEALED for cell in range(_GRID * _GRID)
    )
    return Grid(width, height, (*palette, _GREY), _edges(width), _edges(height), cells)


def generated_png(width: int, height: int, key: bytes, reveal: float = 1.0) -> bytes:
    """``grid(width, height, key, reveal)`` as a PNG."""
    drawn = grid(width, height, key, reveal)
    columns, rows = drawn.columns, drawn.rows

    def scanlines() -> Iterable[bytes]:
        zero = _FILTER_UP + bytes(width)
        for row in range(_GRID):
            cell_height = rows[row + 1] - rows[row]
            if cell_height == 0:
                continue
            line = b"".join(
                bytes((drawn.cells[row * _GRID + column],)) * (columns[column + 1] - columns[column])
                for column in range(_GRID)
            )
            yield _FILTER_NONE + line
            if cell_height > 1:
                yield zero * (cell_height - 1)

    return encode_palette_png(width, height, drawn.palette, scanlines())
