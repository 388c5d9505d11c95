"""A run as the `--json` document of `run`, `evaluate`, `runs show` (records.outputs.RunJson) and an entry of
`runs list`: the manifest's counts and the per-metric summary the terminal's table shows."""

from __future__ import annotations

from ..records.manifest import RunManifest
from ..records.outputs import Interval, MetricJson, RunEntryJson, RunJson
from ..store import RunStore
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
