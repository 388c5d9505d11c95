"""The run store: the only code that writes run files."""

from . import lock, migrations
from .counts import FileCounts, count_files
from .jsonl import JsonlAppender, ReadResult, read_jsonl
from .latest import ScoreKey, latest, latest_rejections, latest_scores, score_key
from .liveness import process_alive, shown_status, this_process
from .lock import LOCK_FILE, WriterLocked, writer_lock
from .recorder import RunRecorder, spend_since
from .run import (
    ANNOTATIONS,
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
from .session import Ending, RunSession, decide_ending
from .spend_journal import SPEND, read_journal
from .sweep_index import SWEEP_INDEX, TABLES, SweepStore

__all__ = [
    "ANNOTATIONS",
    "CONVERSATIONS",
    "EVALUATIONS",
    "LOCK_FILE",
    "MANIFEST",
    "REJECTIONS",
    "REPORT",
    "SPEND",
    "SWEEP_INDEX",
    "TABLES",
    "Ending",
    "FileCounts",
    "JsonlAppender",
    "ReadResult",
    "RunRecorder",
    "RunSession",
    "RunStore",
    "SweepStore",
    "WriterLocked",
    "ScoreKey",
    "latest",
    "lock",
    "latest_rejections",
    "latest_scores",
    "count_files",
    "decide_ending",
    "list_runs",
    "migrations",
    "new_run_id",
    "process_alive",
    "read_jsonl",
    "score_key",
    "read_journal",
    "shown_status",
    "spend_since",
    "this_process",
    "write_json_atomic",
    "writer_lock",
]
