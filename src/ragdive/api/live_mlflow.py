"""A run logged live to MLflow (`run --mlflow URI`, `observability.mlflow_tracking_uri`): an Observer that passes
everything on to the caller's observer and makes the run an MLflow run from the moment it exists: params (the
config, flattened) and tags at once; its progress (conversations, turns, rejections, tokens, cost, scores and
unscored items) as metrics at increasing steps while it goes, at most every PROGRESS_EVERY_S; and when it ends
what `ragdive export --format mlflow` logs (per-metric means and CIs, per-turn curves, the turn table, tables,
manifest, report) with MLflow's own status: FINISHED, KILLED for an interrupted run, FAILED otherwise (the
ragdive status is the tag ``ragdive.status``)."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..records import Conversation, Score, Totals
from ..store import RunStore
from .observer import Observer, Relay

PROGRESS_EVERY_S = 2.0
MLFLOW_STATUS = {"finished": "FINISHED", "interrupted": "KILLED"}


class LiveMlflow(Relay):
    def __init__(self, inner: Observer, tracking_uri: str, experiment: str | None = None) -> None:
        from ..interop.mlflow_export import _mlflow

        super().__init__(inner)
        _mlflow()  # a missing extra is a ConfigError before anything runs
        self.tracking_uri = tracking_uri
        self.experiment = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or "ragdive"
        self.run_dir: Path | None = None
        self.run: Any = None
        """The MLflow run (interop.mlflow_export.ClientRun), once started."""
        self.counts: Counter[str] = Counter()
        self.totals: Totals | None = None
        self.step = 0
        self.logged_at = 0.0

    def run_created(self, run_dir: Path, to_do: int | None = None) -> None:
        from ..interop.mlflow_export import ClientRun, log_params, run_tags

        manifest = RunStore.open(run_dir).read_manifest()
        name = manifest.name or manifest.run_id
        self.run = ClientRun(self.tracking_uri, self.experiment, name, run_tags(manifest))
        self.run_dir = run_dir
        log_params(self.run, manifest.config or {})
        super().run_created(run_dir, to_do)

    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        self.counts["conversations"] += 1
        self.totals = totals
        self._progress()
        super().conversation(conversation, totals)

    def scored(self, score: Score) -> None:
        self.counts["scores" if score.scored else "unscored"] += 1
        self._progress()
        super().scored(score)

    def _progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.run is None or (not force and now - self.logged_at < PROGRESS_EVERY_S):
            return
        self.logged_at, self.step = now, self.step + 1
        values = {f"progress/{k}": float(v) for k, v in self.counts.items()}
        if self.totals is not None:
            t = self.totals
            for name, value in (("turns", t.turns), ("rejections", t.rejections)):
                if value is not None:
                    values[f"progress/{name}"] = float(value)
            if t.prompt_tokens is not None and t.completion_tokens is not None:
                values["progress/tokens"] = float(t.prompt_tokens + t.completion_tokens)
            if t.cost_usd is not None:  # unknown is left out, never logged as 0
                values["progress/cost_usd"] = t.cost_usd
        if values:
            self.run.log_metrics(values, step=self.step)

    def close(self) -> None:
        """Log the ended run's results into its MLflow run and end it with the status the run ended with."""
        if self.run is None or self.run_dir is None:
            return
        from ..interop.mlflow_export import log_contents

        store = RunStore.open(self.run_dir)
        status = store.read_manifest().status
        try:
            self._progress(force=True)
            self.run.set_tag("ragdive.status", status)
            log_contents(self.run, store)
        finally:
            self.run.end(MLFLOW_STATUS.get(status, "FAILED"))
