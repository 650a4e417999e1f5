"""The adapters of the registered providers (``llmts/catalog/registry.py``), loaded from each package's
``adapter.py`` and checked against the namespaces its ``info.py`` declared."""

from __future__ import annotations

from importlib import import_module

from llmts.catalog.registry import CATALOG, Catalog
from llmts.providers.base import ProviderAdapter

__all__ = ["ADAPTERS", "in_stream_surfaces", "load_adapters", "unmarked_stream_surfaces"]


def load_adapters(catalog: Catalog) -> tuple[ProviderAdapter, ...]:
    """``<package>.adapter.ADAPTERS`` of every registered package, in registry order."""
    adapters: list[ProviderAdapter] = []
    for package in catalog.packages:
        declared: tuple[ProviderAdapter, ...] = import_module(f"{package}.adapter").ADAPTERS
        adapters.extend(declared)
    if tuple(adapter.info for adapter in adapters) != catalog.providers:
        raise RuntimeError(
            "the registered adapters do not serve the namespaces their info.py declares: "
            f"{[a.namespace for a in adapters]} != {[i.namespace for i in catalog.providers]}"
        )
    return tuple(adapters)


def in_stream_surfaces(adapters: tuple[ProviderAdapter, ...]) -> frozenset[tuple[str, str]]:
    """Every (namespace, operation) whose streams in-stream delivery plans act on, as the routes declare."""
    return frozenset().union(*(adapter.in_stream_operations() for adapter in adapters))


def unmarked_stream_surfaces(adapters: tuple[ProviderAdapter, ...]) -> frozenset[tuple[str, str]]:
    """Every (namespace, operation) whose streams end at EOF without a terminal marker."""
    return frozenset().union(*(adapter.unmarked_stream_operations() for adapter in adapters))


ADAPTERS: tuple[ProviderAdapter, ...] = load_adapters(CATALOG)
