"""Single-file HTML reports of a run and of a sweep, built from the store and the analysis library only."""

from .data import report_data
from .html import prepare, render_report, write_report
from .sweep import write_sweep_report

__all__ = ["prepare", "render_report", "report_data", "write_report", "write_sweep_report"]
