"""Fields' descriptions from their attribute docstrings, read once per module (pydantic's
``use_attribute_docstrings``, which records, config and the models' outputs use: the descriptions are in the JSON
schemas sent to models, so in cache keys, and in the config's schema).

Why: pydantic finds each class's source through the call stack on every class it builds (``inspect.getmodule`` of
every frame, which rescans ``sys.modules`` while modules are being imported, then tokenizes the class's block and
parses it): ~0.05 s of every `ragdive run`'s start-up for ~50 classes (issue 27). Here a module of ragdive is
parsed once, and each of its top-level classes gets the docstrings pydantic's own visitor finds in that class's
statement, the very node pydantic would have parsed from the same source. Anything else (a class made inside a
function, by ``create_model``, or outside ragdive, or a pydantic version without these internals) goes to
pydantic's own extraction unchanged. tests/test_attribute_docs.py checks the descriptions against pydantic's for
every class and every JSON schema's bytes with and without this.
"""

from __future__ import annotations

import ast
import linecache
import sys
from collections.abc import Callable
from typing import Any

_Index = dict[str, list[tuple[int, int, dict[str, str]]]]
"""Per module: class name -> (first line, last line, docstrings) of each top-level class statement of that name."""

_indexes: dict[str, _Index] = {}
_installed: list[Callable[..., dict[str, str]]] = []


def install() -> None:
    """Put the per-module reading in front of pydantic's extraction (once per process; a pydantic without the
    expected internals keeps its own)."""
    if _installed:
        return
    try:
        from pydantic._internal import _docs_extraction, _fields
    except ImportError:
        return
    original = getattr(_fields, "extract_docstrings_from_cls", None)
    if original is None or not hasattr(_docs_extraction, "DocstringVisitor"):
        return
    _installed.append(original)

    def extract_docstrings_from_cls(cls: type[Any], *args: Any, **kwargs: Any) -> dict[str, str]:
        # the call this reading answers is pydantic's own today, (cls, use_inspect=False); any other shape (a
        # later pydantic's) goes to pydantic unchanged, so an upgrade can slow start-up but never break it
        plain = not args and kwargs in ({}, {"use_inspect": False})
        found = _from_module_index(cls) if plain else None
        return _installed[0](cls, *args, **kwargs) if found is None else found  # pydantic's own (saved above)

    _fields.extract_docstrings_from_cls = extract_docstrings_from_cls


def _from_module_index(cls: type[Any]) -> dict[str, str] | None:
    """The docstrings of ``cls`` when it is a ragdive class whose top-level statement is running now (the module's
    own frame is the innermost one of that module on the stack, at a line of a class statement of that name), else
    None (pydantic's extraction decides)."""
    name = cls.__module__
    module = sys.modules.get(name)
    if not name.startswith("ragdive.") or module is None or cls.__qualname__ != cls.__name__:
        return None
    namespace = vars(module)
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals is not namespace:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_code.co_name != "<module>":
        return None
    line = frame.f_lineno
    index = _indexes.get(name)
    if index is None:
        index = _indexes[name] = _index(module)
    for first, last, docs in index.get(cls.__name__, ()):
        if first <= line <= last:
            return dict(docs)
    return None


def _index(module: Any) -> _Index:
    from pydantic._internal._docs_extraction import DocstringVisitor

    source = "".join(linecache.getlines(module.__file__, vars(module)))  # what pydantic reads (inspect.findsource)
    index: _Index = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            visitor = DocstringVisitor()
            visitor.generic_visit(node)
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            index.setdefault(node.name, []).append((first, node.end_lineno or node.lineno, visitor.attrs))
    return index


install()  # on import: records/ and config/ import this module before any of their classes
