"""A run as the `--json` document of `run`, `evaluate`, `runs show` (records.outputs.RunJson) and an entry of
`runs list`: the manifest's counts and the per-metric summary the terminal's table shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records.manifest import RunManifest
from ..records.outputs import Interval, MetricJson, RunEntryJson, RunJson, SweepCellJson, SweepJson
from ..store import RunStore
from ..store.sweep_index import SweepStore
from .summary import RunScores, summarize_run


def run_document(
    store: RunStore, *, status: str | None = None, read: RunScores | None = None, metrics: list[str] | None = None
) -> RunJson:
    """``status``: as shown (`stale` for a dead `running` run); ``read``: the run's scores when already read."""
    manifest = store.read_manifest()
    scores = read or RunScores.from_store(store)
    summaries = summarize_run(scores, metrics) if scores.scores or metrics else []
    return RunJson(
        run_dir=str(store.path),
        run_id=manifest.run_id,
        name=manifest.name,
        kind=manifest.kind,
        status=status or manifest.status,
        error=manifest.error,
        totals=manifest.totals.model_dump(mode="json"),
        metrics=[
            MetricJson(
                metric=s.metric,
                mean=s.mean,
                ci=Interval.of(s.ci),
                n_scored=s.n_scored,
                n_unscored=s.n_unscored,
                unscored_reasons=dict(s.unscored_reasons),
            )
            for s in summaries
        ],
    )


def run_entry(store: RunStore, manifest: RunManifest, status: str) -> RunEntryJson:
    t = manifest.totals
    return RunEntryJson(
        run_dir=str(store.path),
        run_id=manifest.run_id,
        name=manifest.name,
        kind=manifest.kind,
        status=status,
        created=manifest.created.isoformat(),
        conversations=t.conversations,
        turns=t.turns,
        scores=t.scores,
        unscored=t.unscored,
        cost_usd=t.cost_usd,
    )


def sweep_document(sweep_dir: Path, tables: dict[str, Any]) -> SweepJson:
    """`sweep --json`: the sweep index as it stands (each cell's axes and runs with their status) and the tables
    the terminal prints (as tables.json holds them)."""
    index = SweepStore.open(sweep_dir).read()
    return SweepJson(
        sweep_dir=str(sweep_dir),
        name=index.name,
        status=index.status,
        baseline=index.baseline,
        cells=[
            SweepCellJson(
                cell=cell.cell,
                axes=cell.axes,
                runs=[{"run_id": r.run_id, "repeat": r.repeat, "status": r.status} for r in cell.runs],
            )
            for cell in index.cells
        ],
        tables=tables,
    )
