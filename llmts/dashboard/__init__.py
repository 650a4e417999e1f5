"""The dashboard's own files (``static/``: plain ES modules, CSS, the page), a leaf every layer may read.

The server serves them at ``/dashboard`` (``llmts.server.api.dashboard``); the pytest plugin inlines the
same files into a test's trace file, so a trace shows the dashboard's own views (docs/dashboard.md). This
package imports nothing from llmts.
"""

from __future__ import annotations

__all__: list[str] = []
