"""Generated images (``llmts.runtime.media.png.Grid``) in every ``output_format`` OpenAI answers:

* ``png``: llmts's own encoder (``llmts.runtime.media.png``);
* ``webp`` (lossless), ``jpeg`` (quality 90) and ``gif`` (an animation, ``_animation``) with Pillow, the
  optional extra ``llmts[media]``, imported on first use;
* ``svg``: one ``rect`` per cell, written here (it is text).

WebP is lossless at the lowest effort: the grid's flat colours compress to a few KiB, exactly, and a
3840x2160 image takes about 50 ms (lossy WebP takes several times longer for a larger file).
"""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

from llmts.runtime.media.extras import media_module
from llmts.runtime.media.png import UNREVEALED, Grid, generated_png, grid

__all__ = ["IMAGE_FORMATS", "draw_image"]

IMAGE_FORMATS = ("png", "webp", "jpeg", "gif", "svg")
_PILLOW_FORMATS = {"webp": "WEBP", "jpeg": "JPEG", "gif": "GIF"}
_SAVE_OPTIONS: dict[str, dict[str, Any]] = {
    "WEBP": {"lossless": True, "quality": 0, "method": 0},
    "JPEG": {"quality": 90},
}


def _svg(drawn: Grid) -> bytes:
    width, height = drawn.width, drawn.height
    rects = "".join(
        f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
        f'fill="#{"".join(f"{channel:02x}" for channel in drawn.palette[index])}"/>'
        for left, top, right, bottom, index in drawn.boxes()
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" shape-rendering="crispEdges">{rects}</svg>\n'
    ).encode()


def _animation(drawn: Grid, count: int) -> list[Grid]:
    """A GIF's ``count`` frames: frame ``i`` shows the first ``visible * (i + 1) // count`` visible cells
    (row by row) and greys the rest, so the last frame is the image itself. Pillow merges a frame equal to
    the one before it, so a frame that shows no new cell (an image under 8 pixels a side has fewer visible
    cells than frames) darkens the grey instead: every frame differs from its predecessor, and only those
    frames change the unrevealed area (repainting it in every frame would cost the encoder several times
    more)."""
    visible = drawn.visible()
    grey = drawn.palette[UNREVEALED][0]
    frames, shown_before = [], -1
    for index in range(count):
        shown = len(visible) * (index + 1) // count
        if shown == shown_before:
            grey -= 8
        shown_before = shown
        hidden = set(visible[shown:])
        palette = (*drawn.palette[:UNREVEALED], (grey, grey, grey))
        cells = bytes(UNREVEALED if cell in hidden else colour for cell, colour in enumerate(drawn.cells))
        frames.append(replace(drawn, palette=palette, cells=cells))
    return frames


def _pillow_image(image_module: Any, drawn: Grid) -> Any:
    image = image_module.new("P", (drawn.width, drawn.height))
    image.putpalette(bytes(channel for colour in drawn.palette for channel in colour))
    for left, top, right, bottom, index in drawn.boxes():
        image.paste(index, (left, top, right, bottom))
    return image


def draw_image(
    fmt: str,
    width: int,
    height: int,
    key: bytes,
    *,
    reveal: float = 1.0,
    frame_count: int = 1,
    frame_duration_ms: int = 200,
) -> bytes:
    """The generated image for ``key`` as a ``fmt`` file (``frame_count`` frames for a ``gif``, each shown
    ``frame_duration_ms``)."""
    if fmt == "png":
        return generated_png(width, height, key, reveal)
    if fmt == "svg":
        return _svg(grid(width, height, key, reveal))
    pillow = _PILLOW_FORMATS[fmt]
    image_module = media_module("PIL.Image", "Pillow", f"{fmt} images", "output_format")
    out = io.BytesIO()
    if pillow == "GIF":
        drawn = grid(width, height, key, reveal)
        frames = [_pillow_image(image_module, frame) for frame in _animation(drawn, max(1, frame_count))]
        frames[0].save(
            out, "GIF", save_all=True, append_images=frames[1:], duration=frame_duration_ms, loop=0
        )
    else:
        image = _pillow_image(image_module, grid(width, height, key, reveal)).convert("RGB")
        image.save(out, pillow, **_SAVE_OPTIONS[pillow])
    return out.getvalue()
