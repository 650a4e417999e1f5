"""SRT and WebVTT renderings of transcript segments (the ``srt`` and ``vtt`` ``response_format`` of
OpenAI's ``/audio/transcriptions`` and ``/audio/translations``)."""

from __future__ import annotations

from collections.abc import Sequence

from llmts.schema.media import TimedText

__all__ = ["srt", "timestamp", "vtt"]


def timestamp(seconds: float, separator: str) -> str:
    """``HH:MM:SS<separator>mmm`` (SRT uses ``,``, WebVTT ``.``)."""
    millis = max(0, round(seconds * 1000))
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{millis:03d}"


def srt(segments: Sequence[TimedText]) -> str:
    """Numbered cues separated by blank lines."""
    return "".join(
        f"{number}\n{timestamp(cue.start, ',')} --> {timestamp(cue.end, ',')}\n{_one_line(cue.text)}\n\n"
        for number, cue in enumerate(segments, start=1)
    )


def vtt(segments: Sequence[TimedText]) -> str:
    """``WEBVTT``, then one cue per segment."""
    cues = "".join(
        f"{timestamp(cue.start, '.')} --> {timestamp(cue.end, '.')}\n{_one_line(cue.text)}\n\n"
        for cue in segments
    )
    return "WEBVTT\n\n" + cues


def _one_line(text: str) -> str:
    # A blank line ends a cue in both formats, and "-->" starts a timing line: keep a cue's text one line.
    return " ".join(text.split()).replace("-->", "->")
