"""The pytest plugin (``plugin``, registered as ``llmts`` through the ``pytest11`` entry point) and what it
is made of: the ``llmts_expect`` marker's expectations (``verify``) and record/replay of fixture files
(``recording``). These run in the user's test process, beside ``llmts.client``."""

from __future__ import annotations

__all__: list[str] = []
