"""The control API under ``/admin-api`` (sessions, configuration, journal, conversations, recording,
verification), who may use it (``auth``), the dashboard's files and login, and ``/metrics``."""

from __future__ import annotations

__all__: list[str] = []
