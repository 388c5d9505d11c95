"""DataFrames of a run, a comparison and a sweep. Column names are stable (documented in the README):

- turns: the columns of the CSV export's turns.csv (interop.export.TURN_COLUMNS, then ``score_<metric>`` and
  ``unscored_<metric>`` per metric, then ``annotations`` when the run has human ratings); ``turn`` counts from 1.
- conversations: those of conversations.csv, likewise.
- scores: one row per score: run_id, conversation_id, turn (1-based; empty for a conversation's score), metric,
  value (empty when unscored), unscored_reason, judge_failed, reason, judge_model, metric_version,
  prompt_fingerprint.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import ConfigError

TABLES = ("turns", "conversations", "scores")
SCORE_COLUMNS = [
    "run_id",
    "conversation_id",
    "turn",
    "metric",
    "value",
    "unscored_reason",
    "judge_failed",
    "reason",
    "judge_model",
    "metric_version",
    "prompt_fingerprint",
]


def data_frame(rows: Iterable[dict[str, Any]], columns: list[str]) -> Any:
    try:
        import pandas as pd
    except ImportError as exc:
        raise ConfigError(f"to_pandas() needs pandas: pip install pandas ({exc})") from exc
    return pd.DataFrame(list(rows), columns=columns)


def run_frame(run_dir: Path, table: str = "turns") -> Any:
    """One of a run's tables (``turns``, ``conversations``, ``scores``) as a DataFrame."""
    if table not in TABLES:
        raise ConfigError(f"to_pandas(table={table!r}): choose {', '.join(TABLES)}")
    from ..interop.export import read_run_data  # the export's readers: imported when a table is asked for
    from ..store import RunStore

    run = read_run_data(RunStore.open(run_dir))
    if table != "scores":
        columns, rows = run.tables[table]
        return data_frame(rows, columns)
    return data_frame(
        (
            {
                "run_id": run.run_id,
                "conversation_id": s.conversation_id,
                "turn": None if s.turn_index is None else s.turn_index + 1,
                "metric": s.metric,
                "value": s.value,
                "unscored_reason": s.unscored_reason,
                "judge_failed": bool(s.details.get("judge_failed")) if not s.scored else False,
                "reason": s.reason,
                "judge_model": s.judge_model,
                "metric_version": s.metric_version,
                "prompt_fingerprint": s.prompt_fingerprint,
            }
            for s in run.scores
        ),
        SCORE_COLUMNS,
    )


COMPARISON_COLUMNS = [
    "baseline",
    "candidate",
    "metric",
    "baseline_mean",
    "band_min",
    "band_max",
    "mean",
    "outside_band",
    "change",
    "relative_change",
    "arrow",
    "better",
    "n_scored",
    "n_unscored",
    "n_pairs",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "effect_size",
    "verdict",
    "paired_on",
]


def comparison_rows(baseline: str, candidate: str, metrics: list[Any]) -> list[dict[str, Any]]:
    rows = []
    for m in metrics:
        p = m.paired
        rows.append(
            {
                "baseline": baseline,
                "candidate": candidate,
                "metric": m.metric,
                "baseline_mean": m.baseline_mean,
                "band_min": m.band[0] if m.band else None,
                "band_max": m.band[1] if m.band else None,
                "mean": m.mean,
                "outside_band": m.outside_band,
                "change": m.change,
                "relative_change": m.relative_change,
                "arrow": m.arrow,
                "better": m.better,
                "n_scored": m.n_scored,
                "n_unscored": m.n_unscored,
                "n_pairs": p.n_pairs,
                "mean_diff": p.mean_diff,
                "ci_low": p.ci[0] if p.ci else None,
                "ci_high": p.ci[1] if p.ci else None,
                "p_value": p.p_value,
                "effect_size": p.effect_size,
                "verdict": p.verdict,
                "paired_on": m.paired_on,
            }
        )
    return rows


SWEEP_TABLES = ("runs", "table2", "table4", "table5", "pass_k")


def sweep_frame(runs: dict[str, str], tables: dict[str, Any], table: str = "table4") -> Any:
    """``runs``: run_id, status; the others: the rows of tables.json's table (as the sweep report shows them)."""
    if table not in SWEEP_TABLES:
        raise ConfigError(f"to_pandas(table={table!r}): choose {', '.join(SWEEP_TABLES)}")
    if table == "runs":
        return data_frame(({"run_id": r, "status": s} for r, s in runs.items()), ["run_id", "status"])
    found = tables.get(table)
    if found is None:
        raise ConfigError(f"this sweep has no {table} (table5: a static arm; pass_k: pass thresholds)")
    rows = found.get("rows", []) if isinstance(found, dict) else found
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return data_frame(rows, columns)
