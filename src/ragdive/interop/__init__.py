"""Interop: a run's turns and scores in the formats other tools read (CSV, Parquet, Ragas samples), and the human
annotation sheets (export for raters, import of their ratings)."""

from .annotation_import import read_annotations
from .annotation_rows import annotation_items, sample_turns
from .annotation_sheet import rater_names, sheet_paths, write_sheets
from .export import EXPORTERS, FORMATS, Exporter, RunData, conversation_rows, export_run, ragas_samples, turn_rows

__all__ = [
    "EXPORTERS",
    "FORMATS",
    "Exporter",
    "RunData",
    "annotation_items",
    "conversation_rows",
    "export_run",
    "ragas_samples",
    "rater_names",
    "read_annotations",
    "sample_turns",
    "sheet_paths",
    "turn_rows",
    "write_sheets",
]
