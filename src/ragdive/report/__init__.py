"""Single-file HTML reports of a run and of a sweep, built from the store and the analysis library only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .data import report_data
from .html import prepare, render_report, write_report

if TYPE_CHECKING:
    from .sweep import write_sweep_report

__all__ = ["prepare", "render_report", "report_data", "write_report", "write_sweep_report"]


def __getattr__(name: str) -> Any:
    """The sweep's report on first use: a run's report does not need it, nor the sweep's tables records it reads
    (~15 ms of every `ragdive run`, on the interpreter lock while the run's report parts were made meanwhile)."""
    if name != "write_sweep_report":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .sweep import write_sweep_report

    globals()[name] = write_sweep_report
    return write_sweep_report
