"""Resuming a run with the config that made it. A resumed run appends to the same files and keeps the first
manifest, so a different corpus, turn count or user model would silently mix two experiments in one run: what
decides the conversations must match, what only paces or prices them (concurrency, budget, cache, output folder,
the judge) may change. One exception: more conversations extend the run (and the manifest then says so)."""

from __future__ import annotations

from typing import Any

from ..config import ExperimentConfig
from ..errors import ConfigError
from ..redaction import redact

# config sections and the fields that decide which conversations are simulated and how
DECIDING = {
    "corpus": (
        "path",
        "format",
        "sampling",
        "group_size",
        "max_documents",
        "encoding",
        "max_document_tokens",
        "on_oversize",
    ),
    "simulation": (
        "conversations",
        "max_turns",
        "stop",
        "min_turns",
        "plans",
        "personas",
        "persona_files",
        "max_attempts",
        "on_exhausted",
        "history_window",
        "unanswerable_rate",
        "max_document_chars",
        "evidence_threshold",
    ),
}
ROLES = ("user", "validator", "target")
# a target's fields that only pace it
TARGET_PACING = {"timeout_s", "max_concurrency", "retries"}


def differences(stored: dict[str, Any], config: ExperimentConfig) -> list[str]:
    """``path (run: x, config: y)`` for each deciding field that differs. A field the stored config lacks (written
    by an older ragdive) is not compared: nothing says what it was."""
    current = redact(config.model_dump(mode="json"))
    found: list[str] = []

    def compare(path: str, before: Any, now: Any) -> None:
        if before != now:
            found.append(f"{path} (run: {_short(before)}, config: {_short(now)})")

    if "repeat" in stored:
        compare("repeat", stored["repeat"], current.get("repeat"))
    for section, fields in DECIDING.items():
        old, new = stored.get(section) or {}, current.get(section) or {}
        for name in fields:
            if (section, name) == ("simulation", "conversations") and _grows(old.get(name), new.get(name)):
                continue  # more conversations extend the run: plans are drawn by index, the first ones unchanged
            if name in old:
                compare(f"{section}.{name}", old[name], new.get(name))
    old_target, new_target = stored.get("target") or {}, current.get("target") or {}
    for name in sorted(old_target.keys() - TARGET_PACING):
        compare(f"target.{name}", old_target[name], new_target.get(name))
    for role in ROLES:
        compare(f"models ({role})", _role_model(stored, role), _role_model(current, role))
    return found


def check_resumable(stored: dict[str, Any], config: ExperimentConfig, run: object) -> None:
    found = differences(stored, config)
    if found:
        raise ConfigError(
            f"{run} was simulated with another config: {'; '.join(found)}. Resume with the run's settings "
            "(the same config and command-line options), or start a new run"
        )


def _grows(before: Any, now: Any) -> bool:
    return isinstance(before, int) and isinstance(now, int) and now >= before


def _role_model(config: dict[str, Any], role: str) -> str | None:
    """The model bound to ``role`` (its own binding, else the default), as the config names it."""
    models = config.get("models") or {}
    spec = models.get(role) or models.get("default") or {}  # as ModelsConfig.for_role binds it
    return spec.get("model") if isinstance(spec, dict) else spec


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
