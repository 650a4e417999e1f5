"""The import direction of docs/architecture.md ("Layers"), checked mechanically by parsing every
module's imports."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "llmts"

# layer -> llmts layers it may import (itself always allowed)
ALLOWED = {
    "errors": set(),
    # PEP 562 names for package modules (``llmts``, ``llmts.schema``): standard library only.
    "lazy_names": set(),
    "catalog": set(),
    "schema": {"errors", "lazy_names"},
    "runtime": {"schema", "errors"},
    "providers": {"runtime", "schema", "errors"},
    # MCP servers and A2A agents: sans-IO protocol engines (docs/architecture.md, "The agent's peers").
    "peers": {"runtime", "schema", "errors"},
    "transport": {"schema", "errors"},
    "client": {"schema", "errors", "dashboard"},
    # The dashboard's files: a leaf the server serves and the pytest plugin inlines into trace files.
    "dashboard": set(),
    "pytest": {"client", "schema", "errors", "dashboard"},
    # The plugin's module before it moved (an alias of llmts.pytest.plugin).
    "pytest_plugin": {"pytest"},
}
# Forwarding to upstreams is I/O: the server holds the HTTP client, never the runtime (docs/architecture.md,
# "Record and replay"). (A provider's SDK factory may build an SDK's own client: it runs in the test process.)
_HTTP_CLIENTS = {"urllib3", "httpx", "requests", "http"}
FORBIDDEN_THIRD_PARTY = {
    "runtime": {"werkzeug", "gunicorn", "gevent", "socket"} | _HTTP_CLIENTS,
    "providers": {"werkzeug", "gunicorn", "gevent", "socket"},
    "peers": {"werkzeug", "gunicorn", "gevent", "socket"} | _HTTP_CLIENTS,
}


# The provider metadata leaf (docs/architecture.md, "Layers"): what a provider declares as plain data
# (namespaces, default model, SDK clients) and the registry that lists the packages. Every layer may read
# it; it imports nothing from llmts but itself, so reading it never loads the runtime or an adapter.
_SHARED_PROVIDER_MODULES = {
    "__init__",
    "base",
    "adapters",
    "strict",
    "tool_messages",
    "operations",
    "signing",
    "realtime",
}
# Wire formats several providers speak (docs/architecture.md, "Shared wire modules"): any provider may
# import them, they import no provider package. (Bedrock's InvokeModel carries Anthropic Messages bodies
# and Cohere's embed and rerank bodies.)
_SHARED_WIRE_PACKAGES = {"chat_completions", "anthropic_messages", "cohere_retrieval"}


def _is_metadata(name: str) -> bool:
    """``name`` (a module, or ``module.attribute``) lies in the provider metadata leaf."""
    parts = name.split(".")
    if parts[:2] == ["llmts", "catalog"]:
        return True
    if parts[:2] != ["llmts", "providers"]:
        return False
    if len(parts) == 2:  # the import-free package module itself
        return True
    if not (PACKAGE / "providers" / parts[2]).is_dir():  # base, adapters, or a module beside them
        return False
    return len(parts) == 3 or parts[3] == "info"  # a provider package's import-free __init__, or its info


def _is_metadata_file(path: Path) -> bool:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0] in ("catalog", "providers") and _is_metadata(
        ".".join(("llmts", *parts)).removesuffix(".__init__")
    )


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


@functools.cache  # three tests read every module's imports
def _imports(path: Path) -> frozenset[str]:
    """Imported modules; ``from a.b import c`` counts as ``a.b.c`` (c may be a module or a name in a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


def test_layers_import_only_downwards() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        layer = _layer(path)
        if layer not in ALLOWED:
            continue
        for name in _imports(path):
            top = name.split(".")[0]
            if _is_metadata(name):
                continue
            if top == "llmts" and name != "llmts":
                target = name.split(".")[1]
                if target != layer and target not in ALLOWED[layer]:
                    violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if top in FORBIDDEN_THIRD_PARTY.get(layer, set()):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_provider_metadata_is_a_leaf() -> None:
    """``llmts/catalog/``, ``providers/__init__.py`` and each provider package's ``__init__``/``info``
    import only each other (and the standard library), so the schema and the Python API may read them."""
    violations = []
    files = [
        p
        for folder in ("catalog", "providers")
        for p in (PACKAGE / folder).rglob("*.py")
        if _is_metadata_file(p)
    ]
    assert {p.relative_to(PACKAGE).as_posix() for p in files} >= {
        "providers/__init__.py",
        "catalog/__init__.py",
        "catalog/info.py",
        "catalog/registry.py",
    }
    for path in files:
        for name in _imports(path):
            if name.split(".")[0] == "llmts" and not _is_metadata(name):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if name.split(".")[0] in ("pydantic", "orjson", "werkzeug", "gevent"):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_client_import_loads_no_runtime() -> None:
    """``import llmts.client`` (and the pytest plugin) reads provider metadata but loads no adapter,
    runtime, transport or server module."""
    code = (
        "import sys, llmts.client, llmts.pytest.plugin\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('llmts.runtime', 'llmts.server', "
        "'llmts.transport', 'llmts.providers.base', 'llmts.providers.adapters')) or m.endswith('.adapter'))\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_providers_do_not_import_each_other() -> None:
    """Provider packages import no other provider package; shared wire packages import none at all."""
    providers = PACKAGE / "providers"
    modules = {
        p.name.removesuffix(".py")
        for p in providers.iterdir()
        if p.name.removesuffix(".py") not in _SHARED_PROVIDER_MODULES | _SHARED_WIRE_PACKAGES
        and p.name != "__pycache__"
    }
    assert {p.name for p in providers.iterdir() if p.is_dir()} >= _SHARED_WIRE_PACKAGES
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
                and own not in _SHARED_PROVIDER_MODULES
            ):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _packages_above(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def _import_graph() -> dict[str, set[str]]:
    """Each llmts module and the llmts modules importing it runs, including the ``__init__`` of each
    package above an imported module that is not also above the importer (``llmts.runtime.compat``
    importing ``llmts.runtime.recording.match`` runs ``runtime/recording/__init__.py`` and whatever that
    re-exports)."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        own = _packages_above(name) | {name}
        targets: set[str] = set()
        for imported in _imports(path):
            for target in {imported, imported.rpartition(".")[0]} & modules.keys():
                targets |= {target} | (_packages_above(target) - own) & modules.keys()
        graph[name] = targets - {name}
    return graph


def test_no_module_imports_itself_through_others() -> None:
    """No import circle between llmts's modules (also none under ``TYPE_CHECKING`` or inside a function,
    and none through a package's ``__init__``): a module that needs a type from one that imports it takes
    a ``Protocol`` instead (``client/conversations.py``, ``client/control.py``)."""
    graph = _import_graph()
    circles: list[list[str]] = []
    for start in sorted(graph):
        # A path from one of ``start``'s imports back to ``start`` is a circle through it.
        seen: set[str] = set()
        trail: dict[str, str] = {}
        frontier = sorted(graph[start])
        for first in frontier:
            trail.setdefault(first, start)
        while frontier:
            current = frontier.pop()
            if current == start:
                circle = [start]
                step = trail[start]
                while step != start:
                    circle.append(step)
                    step = trail[step]
                circles.append(circle[::-1])
                break
            if current in seen:
                continue
            seen.add(current)
            for target in sorted(graph[current]):
                if target not in seen:
                    trail.setdefault(target, current)
                    frontier.append(target)
    assert circles == []


def test_the_arbiter_imports_neither_the_schema_nor_the_app() -> None:
    """What gunicorn's arbiter of ``llmts serve`` imports (the CLI, the gunicorn embedding, the worker
    class) loads no gevent, pydantic, werkzeug, schema, runtime or provider adapter: the worker imports
    those after the fork, and the arbiter stays at ~21 MiB of the idle server's ~80 (benchmarks/README.md)."""
    # The last three: only with --tls or the gevent_pywsgi worker class (ssl: server/process/deferred_ssl.py).
    heavy_roots = ("pydantic", "werkzeug", "regex", "yaml", "gevent", "cryptography", "ssl", "_ssl")
    heavy_llmts = ("llmts.schema", "llmts.runtime", "llmts.client", "llmts.providers.base")
    heavy_server = ("llmts.providers.adapters", "llmts.server.app", "llmts.server.api")
    # The client commands' modules (``llmts serve`` parses its arguments without them), and the provider
    # registry (the logger classes read the providers' secret headers in the worker).
    elsewhere = (
        "llmts.server.cli_session",
        "llmts.server.cli_show",
        "llmts.catalog.sdk_env",
        "llmts.catalog.registry",
    )
    code = (
        "import sys, llmts.server.cli, llmts.server.process.gunicorn_app, llmts.server.worker\n"
        "import llmts.server.http.log_text\n"
        "llmts.server.cli._parser(only_serve=True).parse_args(['serve', '--port', '0'])\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy_roots!r} "
        f"or m.startswith({heavy_llmts + heavy_server + elsewhere!r}))\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_lazy_packages_resolve_every_public_name_from_its_home() -> None:
    """``llmts`` and ``llmts.schema`` load their public names on first use (PEP 562): each name in
    ``__all__`` has a home, and resolves to the object that home defines."""
    code = (
        "import importlib, llmts, llmts.schema\n"
        "for package in (llmts, llmts.schema):\n"
        "    homes = {name: home for home, names in package._HOMES.items() for name in names}\n"
        "    assert set(homes) == set(package.__all__) - {'__version__'}, set(homes) ^ set(package.__all__)\n"
        "    for name, home in homes.items():\n"
        "        assert getattr(package, name) is getattr(importlib.import_module(home), name), name\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
