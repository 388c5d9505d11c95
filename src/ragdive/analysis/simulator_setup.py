"""Whether compared runs were simulated and judged alike: the user, validator and judge models, their generation
parameters, prompt profiles and prompt fingerprints (manifest ``roles``). Runs whose simulated user or validator
differ did not ask the same kind of questions, and a different judge scores differently: such differences can move
the scores more than the change to the target that is being compared, so every comparison says so first."""

from __future__ import annotations

from collections.abc import Sequence

from ..records import RoleSetup

COMPARED_ROLES = ("user", "validator", "judge")
_FIELDS = (("model", "model"), ("params", "parameters"), ("prompt_profile", "prompt profile"), ("prompts", "prompts"))


def setup_differences(runs: Sequence[tuple[str, dict[str, RoleSetup]]]) -> list[str]:
    """One sentence per role and field that differs between the named runs (first run = the reference), and one
    per run that did not record its roles (written before ragdive did, or imported) when others did."""
    if len(runs) < 2 or not any(roles for _, roles in runs):
        return []  # nothing recorded anywhere (runs of an older ragdive): nothing to compare, nothing to say
    notes = [f"{name}: its manifest does not record the roles' models and prompts" for name, roles in runs if not roles]
    recorded = [(name, roles) for name, roles in runs if roles]
    if len(recorded) < 2:
        return notes
    base_name, base = recorded[0]
    for role in COMPARED_ROLES:
        for attr, label in _FIELDS:
            reference = _value(base.get(role), attr)
            for name, roles in recorded[1:]:
                value = _value(roles.get(role), attr)
                if value != reference:
                    notes.append(f"the {role} differs in {label}: {reference} ({base_name}) vs {value} ({name})")
    return notes


def _value(setup: RoleSetup | None, attr: str) -> str:
    if setup is None:
        return "none"
    value = getattr(setup, attr)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(value.items())) + "}" if value else "{}"
    return "unknown" if value is None else str(value)
