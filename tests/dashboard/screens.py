"""Screenshot and layout checks of the dashboard's test-run views (tests/dashboard/): each screenshot is
saved under the test's ``tmp_path`` (and, with ``LLMTS_DASHBOARD_SCREENSHOTS``, for the docs) and checked
to be a real full-width picture; the layout checks measure what a reader would see."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from tests.dashboard.browser import shot

__all__ = ["GREEN", "capture", "colour", "fits_the_viewport"]

GREEN = "rgb(31, 138, 76)"  # --good in style.css: the colour of a badge that says "all delivered"


def capture(page: Any, folder: Path, name: str, *, for_docs: bool = True) -> Path:
    """A screenshot of the page as shown, saved as ``folder/name.png`` and, ``for_docs``, as the docs'
    ``dashboard-name.png`` when ``LLMTS_DASHBOARD_SCREENSHOTS`` asks for them."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    viewport = page.viewport_size
    assert (width, height) == (viewport["width"], viewport["height"])
    assert len(data) > 10_000, f"{name}.png is {len(data)} bytes: an empty page?"
    if for_docs:
        shot(page, name)
    return path


def colour(locator: Any) -> str:
    """The computed text colour of an element."""
    return str(locator.evaluate("element => getComputedStyle(element).color"))


def fits_the_viewport(page: Any) -> bool:
    """No horizontal scrolling: the page is no wider than the window."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))
