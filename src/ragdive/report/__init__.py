"""The single-file HTML report of a run, built from the run store and the analysis library only."""

from .data import report_data
from .html import render_report, write_report

__all__ = ["render_report", "report_data", "write_report"]
