"""Personas: the built-in library (personas/*.yaml in this package) and custom ones from the user's YAML files.

A persona file holds one persona (a mapping), several (a list), or ``{personas: [...]}``. Each persona has a
name, a one-sentence description, concrete instructions (given verbatim to the generator and to the validator,
which checks them) and the question types it leans towards.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..config import load_yaml
from ..errors import ConfigError
from ..records import SIMULATED_TYPES, Persona

_FIELDS = set(Persona.model_fields)
_TYPES = {t.value for t in SIMULATED_TYPES}


def builtin_personas() -> dict[str, Persona]:
    """The library shipped with ragdive: precise, attentive, confused, skeptical, explorer."""
    folder = resources.files("ragdive.simulation") / "personas"
    out: dict[str, Persona] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            for persona in _parse(yaml.safe_load(entry.read_text(encoding="utf-8")), f"built-in {entry.name}"):
                out[persona.name] = persona
    return out


def load_persona_file(path: Path | str) -> list[Persona]:
    # the config's loader: a binary file is one line (not a UnicodeDecodeError), a repeated key an error naming it
    # (YAML's last-wins silently dropped a persona's second `instructions:`)
    path = Path(path)
    return _parse(load_yaml(path, "persona file"), f"persona file {path}")


def _parse(data: Any, source: str) -> list[Persona]:
    if isinstance(data, dict) and set(data) == {"personas"}:
        data = data["personas"]
    items = data if isinstance(data, list) else [data]
    personas = []
    for number, item in enumerate(items, start=1):
        where = f"{source} (persona {number})" if len(items) > 1 else source
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: expected a mapping with name, description, instructions")
        unknown = set(item) - _FIELDS
        if unknown:  # Persona records keep extra fields; a typo in a user's file must not be silently ignored
            raise ConfigError(
                f"{where}: unknown field(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(_FIELDS))}"
            )
        try:
            persona = Persona.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(persona)"
            raise ConfigError(f"{where}: {loc}: {first['msg']}") from exc
        if not persona.name.strip() or not persona.instructions:
            raise ConfigError(f"{where}: a persona needs a name and at least one instruction")
        bad = [t for t in persona.preferred_question_types if t not in _TYPES]
        if bad:
            raise ConfigError(f"{where}: unknown question type(s) {', '.join(bad)}; use {', '.join(sorted(_TYPES))}")
        personas.append(persona)
    return personas


def available_personas(persona_files: list[str] | None = None, *, base_dir: Path | None = None) -> dict[str, Persona]:
    """Built-ins plus the personas of ``persona_files`` (relative paths resolve against ``base_dir``); a custom
    persona with a built-in's name replaces it."""
    known = builtin_personas()
    for file in persona_files or []:
        path = Path(file)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        for persona in load_persona_file(path):
            known[persona.name] = persona
    return known


def resolve_personas(
    names: list[str], persona_files: list[str] | None = None, *, base_dir: Path | None = None
) -> list[Persona]:
    """The personas named in the config, in order. An unknown name is a ConfigError listing the known ones."""
    known = available_personas(persona_files, base_dir=base_dir)
    missing = [n for n in names if n not in known]
    if missing:
        raise ConfigError(f"unknown persona {missing[0]!r}; known personas: {', '.join(sorted(known))}")
    return [known[n] for n in names]
