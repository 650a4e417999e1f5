"""Generated media: PNG images, speech audio (WAV, PCM) and transcripts of uploads, all deterministic in
what they are derived from (docs/images.md, docs/audio.md). Standard library only."""

from __future__ import annotations

__all__: list[str] = []
