"""Export a run: one row per turn and one per conversation (stable column names, scores beside the turn they
judge, human ratings in an ``annotations`` column when the run has any), Ragas samples (``SingleTurnSample`` per
turn, ``MultiTurnSample`` per conversation) as JSONL, and DeepEval test cases as JSON (deepeval_cases.py).

Reads only the run store. A score column holds the value or is empty when unscored; its ``unscored_<metric>``
column says why and its ``unscored_kind_<metric>`` column gives the stable code to group by
(records.UNSCORED_KINDS), so a judge failure is never mistaken for a 0. What the run's source did not record
(an imported turn's attempts, overruled and unanswerable flags, an empty ground truth) is null, never 0 or False.
Turns are numbered from 1, as everywhere a user reads them."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, writing_to
from ..records import Conversation, Score, kind_of_unscored
from ..registry import Registry
from ..safe_text import csv_safe
from ..store import RunStore
from .annotations import ratings_by_item
from .deepeval_cases import deepeval_cases

TURN_COLUMNS = [
    "run_id",
    "conversation_id",
    "persona",
    "document_ids",
    "turn",
    "question_type",
    "unanswerable",
    "rag_input",
    "standalone_question",
    "ground_truth",
    "answer",
    "contexts",
    "context_sources",
    "attempts",
    "validator_overruled",
    "latency_s",
    "error",
]
CONVERSATION_COLUMNS = [
    "run_id",
    "conversation_id",
    "persona",
    "document_ids",
    "status",
    "turns",
    "end_reason",
    "stop_reason",
    "user_end_reason",
]


def _score_columns(scores: Iterable[Score], per_turn: bool) -> list[str]:
    names = sorted({s.metric for s in scores if (s.turn_index is not None) == per_turn})
    return [column for name in names for column in (f"score_{name}", f"unscored_{name}", f"unscored_kind_{name}")]


def turn_rows(
    run_id: str, conversations: list[Conversation], scores: list[Score]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and one row per turn, its per-turn scores beside it."""
    by_turn = {(s.conversation_id, s.turn_index, s.metric): s for s in scores if s.turn_index is not None}
    score_columns = _score_columns(scores, per_turn=True)
    rows = []
    for conversation in conversations:
        for turn in conversation.turns:
            row: dict[str, Any] = {
                "run_id": run_id,
                "conversation_id": conversation.id,
                "persona": conversation.persona,
                "document_ids": "|".join(conversation.document_ids),
                "turn": turn.index + 1,
                "question_type": str(turn.question_type),
                "unanswerable": turn.unanswerable,  # None: the source did not say
                "rag_input": turn.rag_input,
                "standalone_question": turn.standalone_question,
                "ground_truth": turn.ground_truth or None,  # empty: unknown
                "answer": turn.answer,
                "contexts": json.dumps([c.text for c in turn.contexts], ensure_ascii=False),
                "context_sources": "|".join(c.source or "" for c in turn.contexts),
                "attempts": len(turn.attempts) or None,  # no attempts recorded: unknown (imported, static)
                "validator_overruled": turn.validator_overruled,
                "latency_s": turn.latency_s,
                "error": turn.error,
            }
            _put_scores(row, score_columns, lambda m, c=conversation, t=turn.index: by_turn.get((c.id, t, m)))
            rows.append(row)
    return TURN_COLUMNS + score_columns, rows


def conversation_rows(
    run_id: str, conversations: list[Conversation], scores: list[Score]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and one row per conversation, its whole-conversation scores beside it."""
    by_conversation = {(s.conversation_id, s.metric): s for s in scores if s.turn_index is None}
    score_columns = _score_columns(scores, per_turn=False)
    rows = []
    for conversation in conversations:
        row: dict[str, Any] = {
            "run_id": run_id,
            "conversation_id": conversation.id,
            "persona": conversation.persona,
            "document_ids": "|".join(conversation.document_ids),
            "status": conversation.status,
            "turns": len(conversation.turns),
            "end_reason": conversation.end_reason or conversation.error,
            "stop_reason": conversation.stop_reason,
            "user_end_reason": conversation.user_end_reason,
        }
        _put_scores(row, score_columns, lambda m, c=conversation: by_conversation.get((c.id, m)))
        rows.append(row)
    return CONVERSATION_COLUMNS + score_columns, rows


def _put_scores(row: dict[str, Any], columns: list[str], find: Any) -> None:
    for column in columns[::3]:
        metric = column.removeprefix("score_")
        score: Score | None = find(metric)
        row[column] = None if score is None else score.value
        row[f"unscored_{metric}"] = None if score is None or score.scored else score.unscored_reason
        row[f"unscored_kind_{metric}"] = None if score is None else kind_of_unscored(score)


def ragas_samples(conversation: Conversation) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Ragas's ``SingleTurnSample`` fields per answered turn, and its ``MultiTurnSample`` of the conversation."""
    singles = [
        {
            "user_input": turn.standalone_question,
            "response": turn.answer,
            "retrieved_contexts": [c.text for c in turn.contexts],
            "reference": turn.ground_truth,
        }
        for turn in conversation.turns
        if turn.answer is not None
    ]
    messages: list[dict[str, str]] = []
    for turn in conversation.turns:
        messages.append({"type": "human", "content": turn.rag_input})
        if turn.answer is not None:
            messages.append({"type": "ai", "content": turn.answer})
    reference = " ".join(turn.ground_truth for turn in conversation.turns)
    return singles, {"user_input": messages, "reference": reference}


@dataclass(frozen=True)
class RunData:
    """A run as every exporter reads it, read once for all the formats asked for."""

    store: RunStore
    run_id: str
    conversations: list[Conversation]
    scores: list[Score]
    tables: dict[str, tuple[list[str], list[dict[str, Any]]]]
    """``turns`` and ``conversations``: (columns, rows) as in the CSV export, ``annotations`` included."""
    csv_formulas_as_text: bool = True
    """CSV cells starting with = + - @, tab or CR get a leading single quote (OWASP), so no spreadsheet runs a
    target's or a judge's text as a formula; False (``export --raw-csv``) writes them as they are."""


@dataclass(frozen=True)
class Exporter:
    """An export format: ``write(run, folder)`` writes (or sends) the run and returns the files it wrote."""

    name: str
    write: Callable[[RunData, Path], list[Path]]
    summary: str


def _csv(run: RunData, folder: Path) -> list[Path]:
    return [
        _write_csv(folder / f"{name}.csv", columns, rows, safe=run.csv_formulas_as_text)
        for name, (columns, rows) in run.tables.items()
    ]


def _parquet(run: RunData, folder: Path) -> list[Path]:
    return [_write_parquet(folder / f"{name}.parquet", columns, rows) for name, (columns, rows) in run.tables.items()]


def _ragas(run: RunData, folder: Path) -> list[Path]:
    singles, multis = [], []
    for conversation in run.conversations:
        turns, whole = ragas_samples(conversation)
        singles += turns
        multis.append(whole)
    return [
        _write_jsonl(folder / "ragas_single_turn.jsonl", singles),
        _write_jsonl(folder / "ragas_multi_turn.jsonl", multis),
    ]


def _deepeval(run: RunData, folder: Path) -> list[Path]:
    cases, dialogues = [], []
    by_conversation: dict[str, list[Score]] = {}
    for score in run.scores:  # grouped once: a pass over every score per conversation is quadratic
        by_conversation.setdefault(score.conversation_id, []).append(score)
    for conversation in run.conversations:
        turns, whole = deepeval_cases(run.run_id, conversation, by_conversation.get(conversation.id, []))
        cases += turns
        dialogues.append(whole)
    return [
        _write_json(folder / "deepeval_test_cases.json", cases),
        _write_json(folder / "deepeval_conversations.json", dialogues),
    ]


def _otlp(run: RunData, folder: Path) -> list[Path]:
    """Sends rather than writes: the collector is OTEL_EXPORTER_OTLP_ENDPOINT (`export --endpoint` sets it)."""
    from .otlp import export_traces

    export_traces(run.run_id, run.store.read_manifest().models, run.conversations, run.scores)
    return []


def _mlflow(run: RunData, folder: Path) -> list[Path]:
    """Logs to MLFLOW_TRACKING_URI, experiment MLFLOW_EXPERIMENT_NAME (`export --tracking-uri/--experiment`)."""
    from .mlflow_export import log_run

    log_run(run)
    return []


EXPORTERS: Registry[Exporter] = Registry(
    "exporters",
    noun="export format",
    builtins={
        e.name: e
        for e in (
            Exporter("csv", _csv, "turns.csv and conversations.csv"),
            Exporter("parquet", _parquet, "turns.parquet and conversations.parquet (extra `export`)"),
            Exporter("ragas", _ragas, "Ragas single- and multi-turn samples, JSONL"),
            Exporter("deepeval", _deepeval, "DeepEval test cases and conversational test cases, JSON"),
            Exporter("otlp", _otlp, "OpenTelemetry traces to an OTLP/HTTP collector (extra `otel`)"),
            Exporter("mlflow", _mlflow, "an MLflow run: params, metrics, tables and report (extra `mlflow`)"),
        )
    },
)
"""Export formats by name; a plug-in adds one with an entry point in ``ragdive.exporters`` naming an Exporter."""

FORMATS = tuple(EXPORTERS.builtin_names())
"""The built-in formats (for help texts; EXPORTERS.names() adds installed plug-ins')."""


def read_run_data(store: RunStore) -> RunData:
    """The run's records and its two tables, as every exporter reads them."""
    run_id, conversations, scores = store.read_manifest().run_id, store.current_conversations(), store.current_scores()
    tables = {
        "turns": turn_rows(run_id, conversations, scores),
        "conversations": conversation_rows(run_id, conversations, scores),
    }
    ratings = ratings_by_item(store.path, conversations)
    if ratings:  # a run without human ratings keeps the columns it always had
        for name, (columns, rows) in tables.items():
            for row in rows:
                turn = row["turn"] - 1 if name == "turns" else None
                found = ratings.get((row["conversation_id"], turn))
                # criterion -> rater -> yes/no, as JSON text: one stable column whatever raters and criteria exist
                row["annotations"] = json.dumps(found, ensure_ascii=False, sort_keys=True) if found else None
            columns.append("annotations")
    return RunData(store, run_id, conversations, scores, tables)


def export_run(
    store: RunStore, folder: Path, formats: Iterable[str], *, csv_formulas_as_text: bool = True
) -> list[Path]:
    """Write the run in each of ``formats`` under ``folder``; returns the files written."""
    wanted = list(dict.fromkeys(formats))
    if not wanted:
        raise ConfigError(f"name an export format: {', '.join(EXPORTERS.names())}")
    exporters = [EXPORTERS.get(name) for name in wanted]  # every name checked before anything is written
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"-o {folder} is a file; export writes several files: give a folder")
    folder.mkdir(parents=True, exist_ok=True)
    run = read_run_data(store)  # the run is read once; every format is written from the same records
    if not csv_formulas_as_text:
        run = dataclasses.replace(run, csv_formulas_as_text=False)
    written: list[Path] = []
    for exporter in exporters:
        written += exporter.write(run, folder)
    return written


def _write_json(path: Path, data: Any) -> Path:
    with writing_to(path):
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, Any]], *, safe: bool = True) -> Path:
    with writing_to(path), open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(({k: csv_safe(v) for k, v in row.items()} for row in rows) if safe else rows)
    return path


def _write_parquet(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> Path:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(f"parquet export needs pyarrow: pip install 'ragdive[export]' ({exc})") from exc
    table = pa.Table.from_pylist(rows, schema=None) if rows else pa.table({c: [] for c in columns})
    with writing_to(path):
        pq.write_table(table.select(columns) if rows else table, path)
    return path


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    with writing_to(path), open(path, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
