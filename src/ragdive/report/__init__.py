"""Single-file HTML reports of a run and of a sweep, built from the store and the analysis library only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..importing import lazy_names
from .data import report_data
from .html import prepare, render_report, write_report

if TYPE_CHECKING:
    from .sweep import write_sweep_report

__all__ = ["prepare", "render_report", "report_data", "write_report", "write_sweep_report"]


# a run's report needs neither the sweep's report nor the sweep's tables records it reads (~15 ms of every
# `ragdive run`, on the interpreter lock while the run's report parts were made meanwhile)
__getattr__ = lazy_names(__name__, {"sweep": ("write_sweep_report",)})
