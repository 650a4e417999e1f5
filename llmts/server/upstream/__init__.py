"""Forwarding to a session's upstream (record and replay): the HTTP client and what is forwarded."""

from __future__ import annotations

__all__: list[str] = []
