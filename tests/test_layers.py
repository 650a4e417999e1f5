"""The import direction of ARCHITECTURE.md, checked mechanically by parsing every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "llmts"

# layer -> llmts layers it may import (itself always allowed)
ALLOWED = {
    "errors": set(),
    "schema": {"errors"},
    "runtime": {"schema", "errors"},
    "providers": {"runtime", "schema", "errors"},
    "transport": {"schema", "errors"},
    "client": {"schema", "errors"},
    "pytest_plugin": {"client", "pytest_verify", "schema", "errors"},
    "pytest_verify": {"client", "schema", "errors"},
}
FORBIDDEN_THIRD_PARTY = {
    "runtime": {"werkzeug", "gunicorn", "gevent", "socket"},
    "providers": {"werkzeug", "gunicorn", "gevent", "socket"},
}


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_layers_import_only_downwards() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        layer = _layer(path)
        if layer not in ALLOWED:
            continue
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "llmts" and name != "llmts":
                target = name.split(".")[1]
                if target != layer and target not in ALLOWED[layer]:
                    violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if top in FORBIDDEN_THIRD_PARTY.get(layer, set()):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_providers_do_not_import_each_other() -> None:
    providers = PACKAGE / "providers"
    modules = {
        p.name.removesuffix(".py")
        for p in providers.iterdir()
        if p.name not in ("__init__.py", "base.py", "__pycache__")
    }
    violations = []
    for path in providers.rglob("*.py"):
        own = path.relative_to(providers).parts[0].removesuffix(".py")
        for name in _imports(path):
            parts = name.split(".")
            if (
                parts[:2] == ["llmts", "providers"]
                and len(parts) > 2
                and parts[2] in modules
                and parts[2] != own
                and own != "__init__"
            ):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []
