"""Every error class names its status and when it is raised in a one-line docstring
(docs/architecture.md, "Layers")."""

from __future__ import annotations

import inspect

import llmts.errors as errors


def _error_classes() -> list[type[errors.LlmtsError]]:
    return [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.LlmtsError) and cls.__module__ == errors.__name__
    ]


def test_every_error_class_has_a_one_line_docstring_naming_its_status() -> None:
    problems = []
    for cls in _error_classes():
        doc = cls.__dict__.get("__doc__")
        if not doc:
            problems.append(f"{cls.__name__}: no docstring")
            continue
        first_line = doc.strip().splitlines()[0]
        expected = "The scripted status" if cls is errors.ScriptedError else f"{cls.http_status}"
        if not first_line.startswith(expected):
            problems.append(f"{cls.__name__}: docstring does not start with {expected!r}: {first_line!r}")
    assert problems == []


def test_error_codes_are_unique() -> None:
    # A subclass may share its parent's code (a narrower cause of the same wire error); a class that
    # declares a code of its own must not reuse another's.
    codes = [cls.code for cls in _error_classes() if "code" in cls.__dict__]
    assert len(codes) == len(set(codes))
