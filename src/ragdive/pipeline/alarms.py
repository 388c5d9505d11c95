"""A scored run's validity alarms, computed from its files and written into its manifest with its final status
(by its run session), so the terminal, the report and `runs show` say the same thing. See analysis/alarms.py for
what each one means."""

from __future__ import annotations

from typing import Any

from ..analysis import RunScores, alarm_limits, validity_alarms
from ..config import AlarmsConfig
from ..records import Alarm
from ..store import RunStore


def alarm_fields(store: RunStore, limits: AlarmsConfig | None = None) -> dict[str, Any]:
    """The manifest fields of the run's alarms, computed from its files (``limits``: the thresholds to use; by
    default the run's own configured ones). Written by the run session with the final status."""
    if limits is None:
        limits = alarm_limits(store.read_manifest().config)
    alarms: list[Alarm] = validity_alarms(RunScores.from_store(store), limits)
    return {"alarms": alarms}
