"""Shared test helpers, one module each: ``in_process`` (the app in the test process, SDK clients bound
to it), ``servers`` (dedicated gunicorn servers started ahead and stopped in the background),
``server_template`` (the fork server they start from), ``worker_zygote`` (the fork server of the run's
xdist workers), ``inner_pytest`` (inner pytest runs),
``configure`` (one-scenario configurations), ``journal`` (waiting for a completed journal entry), ``sse``
(parsing event streams), ``envelopes`` (the error envelopes), ``docs`` (headings, sections and tables of
the Markdown documents) and ``control_routes`` (the control API's routes). Which depth a test runs at is in
docs/contributing.md ("Which depth for which test")."""

from __future__ import annotations

__all__: list[str] = []
