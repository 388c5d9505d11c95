"""Interop: a run's turns and scores in the formats other tools read (CSV, Parquet, Ragas samples)."""

from .export import FORMATS, conversation_rows, export_run, ragas_samples, turn_rows

__all__ = ["FORMATS", "conversation_rows", "export_run", "ragas_samples", "turn_rows"]
