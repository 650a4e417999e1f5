"""The ``bedrock`` provider: Bedrock Runtime ``converse``, ``converse-stream``, ``invoke`` and
``invoke-with-response-stream`` under ``/bedrock`` (docs/providers.md, "AWS Bedrock").

This module imports nothing: the schema and the Python API import the package to read ``info.py``.
"""

from __future__ import annotations

__all__: list[str] = []
