"""What the Ray tests compare: a run's records without ids and times, and "the same work" after a cut and resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragdive.store import RunStore

VOLATILE = {"id", "started", "finished", "latency_s", "conversation_finished", "created", "updated", "process"}
SPEND = ("prompt_tokens", "completion_tokens", "cost_usd", "spend")


def _drop(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_drop(v) for v in value]
    return value


def run_records(run_dir: Path) -> dict[str, Any]:
    """A run's conversations, rejections, scores and manifest status/totals, without ids and times (a
    conversation id has a random suffix; a score names its conversation by the conversation's index here)."""
    store = RunStore.open(run_dir)
    conversations = sorted(store.current_conversations(), key=lambda c: c.index)
    index = {c.id: c.index for c in conversations}
    scores = sorted(
        (index[s.conversation_id], s.turn_index if s.turn_index is not None else -1, s.metric, s.value, s.reason)
        for s in store.current_scores()
    )
    manifest = store.read_manifest()
    return {
        "conversations": [_drop(c.model_dump(mode="json")) for c in conversations],
        "rejections": sorted(json.dumps(_drop(r.model_dump(mode="json"))) for r in store.current_rejections()),
        "scores": scores,
        "lines": len(store.scores().records),
        "status": manifest.status,
        "totals": _drop(manifest.totals.model_dump(mode="json")),
    }


def same_work(cut: dict[str, Any], whole: dict[str, Any], *, all_spend_recorded: bool = True) -> None:
    """Runs cut off and resumed hold the records of runs that ran whole (by name). Their spend may be larger, never
    smaller: a conversation in flight when the cut came is dropped, and redone (and paid for again) on resume. A
    SIGKILL gives nobody the time to record the last second of the judge's spend (``all_spend_recorded=False``)."""
    assert without_spend(cut) == without_spend(whole)
    for name, run in cut.items() if all_spend_recorded else ():
        calls = {(s["role"], s["model"]): s["calls"] for s in run["totals"]["spend"]}
        for line in whole[name]["totals"]["spend"]:
            assert calls.get((line["role"], line["model"]), 0) >= line["calls"], (name, line)


def without_spend(records: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {**run, "totals": {k: v for k, v in run["totals"].items() if k not in SPEND}}
        for name, run in records.items()
    }
