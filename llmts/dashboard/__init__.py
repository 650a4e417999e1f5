"""The dashboard's own files (``static/``: plain ES modules, CSS, the page), a leaf every layer may read.

The server serves them at ``/dashboard`` (``llmts.server.api.dashboard``); the pytest plugin inlines the
same files into a test's trace file, so a trace shows the dashboard's own views (docs/dashboard.md). This
package imports nothing from llmts.
"""

from __future__ import annotations

__all__ = ["TRACE_DATA_ID", "TRACE_FORMAT"]

# A trace file's format marker, and the id of the element holding its data (docs/dashboard.md, "Trace
# files"): written by ``trace.py``, read by ``llmts show`` and named in the export the client collects.
TRACE_FORMAT = "llmts-trace/1"
TRACE_DATA_ID = "llmts-trace-data"
