"""Start-up settings: the fixtures file for the ``default`` session (JSON or YAML); ``llmts session`` and
``llmts env --new-session`` read their ``--config`` files with the same reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from llmts.errors import ConfigurationInvalid
from llmts.schema.config import SessionConfig
from llmts.schema.validation import parse_session_config

__all__ = ["FixturesFileError", "load_fixtures_file", "read_fixtures_file"]


class FixturesFileError(Exception):
    """The fixtures file cannot be used; the message names the file, the field path and the problem."""


def read_fixtures_file(path: str | Path) -> Any:
    """The file's data, unvalidated: YAML for a ``.yaml``/``.yml`` file, else JSON."""
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise FixturesFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml  # on first use: a YAML fixtures file (every worker would carry it otherwise)

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise FixturesFileError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise FixturesFileError(f"{path}: not valid JSON: {exc}") from None


def _yaml_problem(error: Any) -> str:
    """PyYAML's multi-line message as one line: the problem and where (1-based line and column)."""
    problem, mark = getattr(error, "problem", None), getattr(error, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(error).split())


def load_fixtures_file(path: str | Path) -> SessionConfig:
    path = Path(path)
    data = read_fixtures_file(path)
    try:
        return parse_session_config(data if data is not None else {})
    except ConfigurationInvalid as exc:
        problems = "; ".join(f"{d['path'] or '<root>'}: {d['message']}" for d in exc.details) or exc.message
        raise FixturesFileError(f"{path}: invalid configuration: {problems}") from None
