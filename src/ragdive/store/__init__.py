"""The run store: the only code that writes run files."""

from .jsonl import JsonlAppender, ReadResult, read_jsonl
from .latest import ScoreKey, latest, latest_rejections, latest_scores, score_key
from .liveness import process_alive, shown_status, this_process
from .run import (
    CONVERSATIONS,
    EVALUATIONS,
    MANIFEST,
    REJECTIONS,
    REPORT,
    RunStore,
    list_runs,
    new_run_id,
    write_json_atomic,
)

__all__ = [
    "CONVERSATIONS",
    "EVALUATIONS",
    "MANIFEST",
    "REJECTIONS",
    "REPORT",
    "JsonlAppender",
    "ReadResult",
    "RunStore",
    "ScoreKey",
    "latest",
    "latest_rejections",
    "latest_scores",
    "list_runs",
    "new_run_id",
    "process_alive",
    "read_jsonl",
    "score_key",
    "shown_status",
    "this_process",
    "write_json_atomic",
]
