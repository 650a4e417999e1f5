"""Generated media: images (PNG, SVG; WebP, JPEG, GIF with Pillow), speech (WAV, PCM; MP3, Opus, AAC, FLAC
with PyAV) and transcripts of uploads, all deterministic in what they are derived from (docs/images.md,
docs/audio.md). Pillow and PyAV are the optional extra ``llmts[media]``, imported on first use."""

from __future__ import annotations

__all__: list[str] = []
