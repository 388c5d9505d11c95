"""YAML -> ExperimentConfig, with ${ENV_VAR} interpolation and errors that name the field path."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .experiment import ExperimentConfig

C = TypeVar("C", bound=BaseModel)

# ${NAME} or ${NAME:-default}
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate_env(value: Any, environ: Mapping[str, str] | None = None, path: str = "") -> Any:
    """Replace ${VAR} / ${VAR:-default} in every string of a parsed YAML tree. A missing variable without a
    default is a ConfigError naming where it was used."""
    env = os.environ if environ is None else environ
    if isinstance(value, dict):
        return {k: interpolate_env(v, env, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_env(v, env, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"{path or 'config'}: environment variable {name} is not set")

    return _ENV.sub(substitute, value)


def format_validation_error(exc: ValidationError, source: str) -> str:
    """One line per problem: `file: a.b[2].c: got 'x' — <what is allowed>`."""
    lines = []
    for err in exc.errors():
        loc = _format_loc(err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            lines.append(f"{source}: {loc}: unknown field (check the spelling; allowed fields are documented)")
            continue
        if err["type"] == "missing":
            lines.append(f"{source}: {loc}: required field is missing")
            continue
        got = err.get("input")
        shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
        if len(shown) > 60:
            shown = shown[:57] + "..."
        lines.append(f"{source}: {loc}: got {shown}: {msg}")
    return "\n".join(lines)


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("http", "openai-chat", "python", "langchain", "reference") or "[" in str(part):
            # pydantic puts the union member's tag in the path; it is noise for the user
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def validate_config(data: Any, model: type[C] = ExperimentConfig, source: str = "config") -> C:  # type: ignore[assignment]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of settings at the top level, got {type(data).__name__}")
    data = interpolate_env(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from exc


def load_yaml(path: Path | str) -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}:{where}: invalid YAML: {problem}") from exc


def load_config(path: Path | str, model: type[C] = ExperimentConfig) -> C:  # type: ignore[assignment]
    """Load, interpolate and validate a YAML config. Every problem is a ConfigError with the field path."""
    return validate_config(load_yaml(path), model, source=str(path))
