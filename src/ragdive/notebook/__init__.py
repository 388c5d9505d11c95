"""Results in a notebook: a readable repr and an HTML table (``_repr_html_``) for RunResult, Comparison and
SweepResult, and ``to_pandas()`` with stable, documented column names (frames.py). The result classes in
ragdive.api take these views as base classes; nothing here runs anything, it reads the run store."""

from .views import ComparisonView, RunResultView, SweepResultView

__all__ = ["ComparisonView", "RunResultView", "SweepResultView"]
