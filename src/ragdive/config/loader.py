"""YAML -> ExperimentConfig, with ${ENV_VAR} interpolation and errors that name the field path."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..redaction import is_path_field, register_config_secrets, register_secret
from ..registry import did_you_mean
from .experiment import ExperimentConfig

C = TypeVar("C", bound=BaseModel)

# ${NAME} or ${NAME:-default}
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate_env(value: Any, environ: Mapping[str, str] | None = None, path: str = "") -> Any:
    """Replace ${VAR} / ${VAR:-default} in every string of a parsed YAML tree. A missing variable without a
    default is a ConfigError naming where it was used."""
    env = os.environ if environ is None else environ
    if isinstance(value, dict):
        out = {k: interpolate_env(v, env, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
        key = value.get("api_key")
        if isinstance(key, str) and _ENV.search(key) and "api_key_from_env" not in value and _is_model_spec(path):
            out["api_key_from_env"] = key  # the ${VAR} as written (never its value), named if the key is refused
        return out
    if isinstance(value, list):
        return [interpolate_env(v, env, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            if not is_path_field(path.rsplit(".", 1)[-1]):
                register_secret(env[name])  # masked by value wherever ragdive writes or prints it
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"{path or 'config'}: environment variable {name} is not set")

    return _ENV.sub(substitute, value)


def _is_model_spec(path: str) -> bool:
    """``models.judge`` (also inside a sweep's base or axes): a model binding, the one section with api_key_from_env."""
    parts = path.split(".")
    return (
        len(parts) >= 2 and parts[-2] == "models" and parts[-1] in {"default", "user", "validator", "judge", "target"}
    )


def format_validation_error(exc: ValidationError, source: str, model: type[BaseModel] | None = None) -> str:
    """One line per problem: `file: a.b[2].c: got 'x' — <what is allowed>`. ``model`` (the validated class) lets an
    unknown field's line name the closest allowed one."""
    lines = []
    for err in _flatten(exc.errors(), (), model):
        loc = _format_loc(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            allowed = _fields_at(err.get("model"), err["loc"][:-1])
            hint = did_you_mean(str(err["loc"][-1]), allowed) if allowed else ""
            lines.append(f"{source}: {loc}: unknown field{hint or ' (check the spelling)'}")
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


def _flatten(errors: list[Any], prefix: tuple[Any, ...], model: type[BaseModel] | None) -> list[dict[str, Any]]:
    """Each error with its full path; a section validated by a registry entry's own class (``target:``) carries its
    errors nested, and they are shown under the section's path, with that class to look allowed fields up in."""
    out: list[dict[str, Any]] = []
    for err in errors:
        nested = (err.get("ctx") or {}).get("error")
        inner = getattr(nested, "error", None)
        if err["type"] == "value_error" and isinstance(inner, ValidationError):
            out += _flatten(inner.errors(), prefix + tuple(err["loc"]), _model_named(inner.title))
            continue
        out.append({**err, "loc": prefix + tuple(err["loc"]), "model": model})
    return out


def _model_named(title: str) -> type[BaseModel] | None:
    from .target_types import TARGET_TYPES

    for name in TARGET_TYPES.names():
        config = TARGET_TYPES.get(name).config
        if config.__name__ == title:
            return config
    return None


def _fields_at(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The field names allowed at ``loc`` under ``model`` (following nested sections, lists and dicts)."""
    current: Any = model
    for part in loc:
        if not isinstance(part, str) or current is None:
            continue  # a list index or a dict key: the items' model is what the annotation held
        field = current.model_fields.get(part) if _is_model(current) else None
        current = _model_in(field.annotation) if field is not None else current
    return list(current.model_fields) if _is_model(current) else []


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _model_in(annotation: Any) -> Any:
    """The BaseModel inside ``X | None``, ``list[X]``, ``dict[str, X]`` (the only one, or None)."""
    if _is_model(annotation):
        return annotation
    found = [m for m in (_model_in(a) for a in get_args(annotation)) if m is not None]
    return found[0] if len(found) == 1 else None


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "[" in str(part) or str(part).startswith("function-"):
            # pydantic puts a union member's tag or a validator's name in the path; it is noise for the user
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
    register_config_secrets(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source, model)) from exc


class _UniqueKeys(yaml.SafeLoader):
    """YAML's last-wins for a repeated key silently dropped a setting (two ``judge:`` entries, one forgotten):
    a repeated key is an error naming it and both lines. Keys merged in with ``<<`` may be overridden, as YAML
    intends."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: yaml's own error follows
                continue
            if first is not None:
                where = f"lines {first} and {line}" if first != line else f"twice on line {line}"
                raise _DuplicateKey(f"key {key!r} is repeated ({where}); keep one")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


class _DuplicateKey(Exception):
    pass


def load_yaml(path: Path | str, what: str = "config file") -> Any:
    """A user's YAML file (``what`` names it in errors: a config file, a persona file): a missing, unreadable or
    binary file, invalid YAML and a repeated key are each one ConfigError naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"{what} {path} does not exist") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{what} {path} is a directory") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {path} is not UTF-8 text (byte {exc.start}): is it a YAML file?") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from exc
    try:
        return yaml.load(text, Loader=_UniqueKeys)  # noqa: S506 - a SafeLoader
    except _DuplicateKey as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f": line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}{where}: invalid YAML: {problem}") from exc


def load_config(path: Path | str, model: type[C] = ExperimentConfig) -> C:  # type: ignore[assignment]
    """Load, interpolate and validate a YAML config. Every problem is a ConfigError with the field path."""
    return validate_config(load_yaml(path), model, source=str(path))
