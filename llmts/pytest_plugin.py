"""``llmts.pytest_plugin``, the plugin's name before it moved to ``llmts.pytest.plugin``: the same module
object (not a copy, so pytest never registers the plugin's hooks twice)."""

from __future__ import annotations

import sys

from llmts.pytest import plugin

__all__: list[str] = []

sys.modules[__name__] = plugin
