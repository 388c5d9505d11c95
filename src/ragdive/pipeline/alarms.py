"""A scored run's validity alarms, computed from its files and recorded in its manifest (by the run recorder),
so the terminal, the report and `runs show` say the same thing. See analysis/alarms.py for what each one means."""

from __future__ import annotations

from ..analysis import RunScores, alarm_limits, validity_alarms
from ..config import AlarmsConfig
from ..records import Alarm
from ..store import RunRecorder, RunStore


def record_alarms(store: RunStore, limits: AlarmsConfig | None = None, run: RunScores | None = None) -> list[Alarm]:
    """Compute the run's alarms from its files (``run``: what the caller already read of them) and write them
    into its manifest; ``limits`` default to the run's own configured thresholds."""
    if limits is None:
        limits = alarm_limits(store.read_manifest().config)
    alarms = validity_alarms(run if run is not None else RunScores.from_store(store), limits)
    RunRecorder(store).record(alarms=alarms)
    return alarms
