"""Fields' descriptions read once per module (ragdive/attribute_docs.py) are pydantic's own: every JSON schema of
every ragdive model (those sent to models are in cache keys) is the same bytes with and without it, and pydantic's
walk of the call stack is no longer what finds the source of ragdive's classes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragdive

# Imports every ragdive module that imports here (optional extras missing: skipped, alike on both sides), then
# prints, for every pydantic model class of ragdive, its JSON schema's text and its fields' descriptions.
SNAPSHOT = """
import importlib, json, pkgutil, sys
{setup}
import pytest

import ragdive
from pydantic import BaseModel
for info in pkgutil.walk_packages(ragdive.__path__, "ragdive."):
    if not info.name.endswith("__main__"):
        try:
            importlib.import_module(info.name)
        except Exception:
            pass

def every(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every(sub)

out = {{}}
for cls in every(BaseModel):
    if cls.__module__.startswith("ragdive."):
        try:
            schema = json.dumps(cls.model_json_schema())
        except Exception as exc:
            schema = f"no schema: {{type(exc).__name__}}"
        descriptions = {{name: field.description for name, field in cls.model_fields.items()}}
        out[f"{{cls.__module__}}.{{cls.__qualname__}}"] = [schema, descriptions]
print(json.dumps(out))
"""

WITHOUT = (
    "from pydantic._internal import _fields\n"
    "pydantics = _fields.extract_docstrings_from_cls\n"
    "import ragdive.attribute_docs\n"
    "_fields.extract_docstrings_from_cls = pydantics  # pydantic's own extraction for every class\n"
)


def snapshot(setup: str) -> dict[str, list[object]]:
    env = {**os.environ, "PYTHONPATH": str(Path(ragdive.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", SNAPSHOT.format(setup=setup)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env=env,
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_every_schema_is_the_same_bytes_with_and_without_the_per_module_reading() -> None:
    fast, pydantics = snapshot(""), snapshot(WITHOUT)
    assert fast.keys() == pydantics.keys()
    assert len(fast) > 100
    described = [key for key, (_, descriptions) in fast.items() if any(descriptions.values())]  # type: ignore[attr-defined]
    assert len(described) > 40  # records, config sections, the models' outputs
    for key in fast:
        assert fast[key] == pydantics[key], key


def test_ragdives_classes_are_described_without_walking_the_call_stack() -> None:
    probe = (
        "from pydantic._internal import _docs_extraction\n"
        "walked = []\n"
        "original = _docs_extraction._extract_source_from_frame\n"
        "_docs_extraction._extract_source_from_frame = lambda cls: walked.append(cls) or original(cls)\n"
        "import ragdive.records, ragdive.config, ragdive.records.outputs\n"
        "from ragdive.records import Turn\n"
        "print(len(walked), bool(Turn.model_fields['rag_input'].description))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(ragdive.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["0", "True"]


def test_a_call_of_another_shape_goes_to_pydantic_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A later pydantic calling the extraction with other arguments gets its own function's answer (here: its
    TypeError for an argument it does not know, or its own reading), never this reading's guess."""
    from pydantic._internal import _fields

    from ragdive import attribute_docs
    from ragdive.records import Turn

    (pydantics,) = attribute_docs._installed
    calls: list[tuple[object, ...]] = []

    def recorded(cls: type, *args: object, **kwargs: object) -> dict[str, str]:
        calls.append((cls, args, kwargs))
        return {"sentinel": "pydantic's"}

    monkeypatch.setattr(attribute_docs, "_installed", [recorded])
    assert pydantics is not _fields.extract_docstrings_from_cls  # the reading is installed in front of it
    extract = _fields.extract_docstrings_from_cls
    assert extract(Turn, use_inspect=True) == {"sentinel": "pydantic's"}
    assert extract(Turn, use_inspect=False, later_option=1) == {"sentinel": "pydantic's"}
    assert extract(Turn, True) == {"sentinel": "pydantic's"}
    assert len(calls) == 3
