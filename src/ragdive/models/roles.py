"""Binding roles (user, validator, judge, target) to models, from the config and the command line."""

from __future__ import annotations

from ..config.models import ROLES, ModelsConfig, ModelSpec
from ..errors import ConfigError
from .context import ModelContext
from .model import Model, get_model


def apply_model_overrides(models: ModelsConfig, overrides: list[str]) -> ModelsConfig:
    """`--model judge=openai/gpt-4o-mini` binds one role; `--model X` (no `=`) binds every role. Later wins."""
    updated = models.model_copy(deep=True)
    for item in overrides:
        role, sep, name = item.partition("=")
        if not sep:
            role, name = "default", item
            for r in ROLES:
                setattr(updated, r, None)  # one model for all roles replaces per-role bindings
        role, name = role.strip(), name.strip()
        if role != "default" and role not in ROLES:
            raise ConfigError(f"--model {item!r}: unknown role {role!r}; roles are {', '.join(ROLES)}")
        if "/" not in name:
            raise ConfigError(f"--model {item!r}: name the model as provider/model")
        current = getattr(updated, role)
        spec = current.model_copy(update={"model": name}) if current else ModelSpec(model=name)
        setattr(updated, role, spec)
    return updated


def models_for_roles(
    models: ModelsConfig, roles: list[str] | tuple[str, ...], *, context: ModelContext | None = None
) -> dict[str, Model]:
    """Build the wrapped model of each role asked for; a role with no binding is a ConfigError.

    The models share ``context`` (cache, usage ledger, budget, per-endpoint limits); without one they share a
    fresh context with no cache and no budget — pass `ModelContext.from_config(config)` in a real run.
    Each role gets its own backend object (a scripted double's queue stays per role); the llamacpp backend
    still loads its weights once per process.
    """
    context = context or ModelContext()
    out: dict[str, Model] = {}
    for role in roles:
        spec = models.for_role(role)
        if spec is None:
            raise ConfigError(f"no model for role {role!r}: set models.{role} or models.default, or --model")
        out[role] = get_model(spec, role=role, context=context)
    return out
