"""Named migrations of the run-directory format, applied when a run is read.

A run records the format it was written in (manifest ``schema_version``). Reading one:
- a newer or unknown version is one clear StoreError (upgrade ragdive): guessing at a format this ragdive does
  not know would misread it silently;
- an older one is brought to the current version by the migrations below, in order, in memory. A reader never
  rewrites the run; its next writer (the run recorder) writes the current version.

To change the format: bump records.manifest.SCHEMA_VERSION and append one (from_version, name, function) here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._version import __version__
from ..errors import StoreError
from ..records import SCHEMA_VERSION

ManifestData = dict[str, Any]
Migration = tuple[int, str, Callable[[ManifestData], ManifestData]]


def _rejection_ids_and_spend(data: ManifestData) -> ManifestData:
    """v1 → v2: rejection lines gain a stable ``id`` and totals gain ``rejections_by_category`` and ``spend``.
    Nothing to rewrite: a v1 rejection line gets the same id on read (from conversation, turn and attempt), and
    the run recorder recounts the totals from the files at its next write (v1 spend stays in the run's total
    tokens and cost, not attributed to a role)."""
    return data


def _replay_runs(data: ManifestData) -> ManifestData:
    """v2 → v3: a manifest may be of kind ``replay`` and gains ``source_run`` and ``note`` (both None before).
    Nothing to rewrite: a v2 run is never a replay, and the new fields default to None."""
    return data


def _unknowns_and_unscored_kinds(data: ManifestData) -> ManifestData:
    """v3 → v4: unknown is a value. ``totals.rejections`` may be null (an imported run's source kept no validator
    history), turns' ``unanswerable`` and ``validator_overruled`` may be null, and scores gain ``unscored_kind``.
    Nothing to rewrite: a v3 imported run's 0 rejections is read as unknown (records.known_rejections), and an
    unscored line without a kind is classified from its reason on read (records.kind_of_unscored)."""
    return data


def _incomplete_status(data: ManifestData) -> ManifestData:
    """v4 → v5: a run may end ``incomplete`` (conversations in error or judge failures, with the counts). Nothing
    to rewrite: a v4 run that finished so keeps ``finished`` until it is scored or resumed again."""
    return data


def _stop_reasons(data: ManifestData) -> ManifestData:
    """v5 → v6: conversations record how they stopped (``stop_reason`` max_turns or user, and the simulated user's
    ``user_end_reason`` under ``simulation.stop: satisfied``). Nothing to rewrite: a v5 conversation line reads
    with both None (not recorded; a v5 run's finished conversations all reached max_turns, as analyses say)."""
    return data


def _steered_turns(data: ManifestData) -> ManifestData:
    """v6 → v7: turns may be planned (``origin`` fixed or prefix, simulation.plans) and drafted turns may carry
    the plan's ``instruction``. Nothing to rewrite: a v6 turn reads with both None (drafted, no instruction)."""
    return data


MIGRATIONS: list[Migration] = [
    (1, "rejection ids, rejections by category and spend per model", _rejection_ids_and_spend),
    (2, "replay runs: kind replay, source_run and note", _replay_runs),
    (3, "unknowns as null and unscored kinds", _unknowns_and_unscored_kinds),
    (4, "status incomplete", _incomplete_status),
    (5, "conversations record how they stopped", _stop_reasons),
    (6, "steered turns: origin and instruction", _steered_turns),
]
"""Ordered by from_version: each takes a manifest of that version to the next one."""


def migrate_manifest(data: ManifestData, source: str) -> tuple[ManifestData, list[str]]:
    """``data`` at the current schema version, and the names of the migrations that took it there."""
    version = data.get("schema_version", 1)  # manifests have always written it; absent means the first format
    if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSION:
        raise StoreError(
            f"{source} has run format schema_version {version!r}, newer than or unknown to ragdive {__version__} "
            f"(it reads up to {SCHEMA_VERSION}); upgrade ragdive to read this run"
        )
    applied: list[str] = []
    for from_version, name, migrate in MIGRATIONS:
        if from_version == version:
            data = {**migrate(dict(data)), "schema_version": version + 1}
            applied.append(name)
            version += 1
    if version != SCHEMA_VERSION:
        raise StoreError(f"{source} has run format schema_version {version}, which no migration of ragdive reads")
    return data, applied
