"""Every kind of run writes the same spend twice: one spend.jsonl line per request as it is counted, and the
manifest's per-(role, model) sums. The two agree, for every role a run pays for (a static run's target generator
too), so a resumed session's recovery from the journal never adds what the manifest already holds or misses
what it does not."""

from __future__ import annotations

from pathlib import Path

import yaml

from ragdive.cli.main import main
from ragdive.store import RunStore
from ragdive.store.spend_journal import read_journal

from .sweep_helpers import base_experiment, write_sweep

FIGURES = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "retries")


def test_each_run_s_manifest_spend_is_its_journal_s(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, repeats=1, axes={"target.history": ["full", "none"]})
    out = tmp_path / "out"
    assert main(["sweep", str(path), "-o", str(out), "--no-cache"]) == 0
    runs = sorted(p.parent for p in out.rglob("manifest.json") if (p.parent / "conversations.jsonl").is_file())
    # a replay of one of them to the same target (its generator a model too)
    target = tmp_path / "target.yaml"
    target.write_text(yaml.safe_dump(base_experiment(tmp_path)))
    dynamic = next(run for run in runs if RunStore.open(run).read_manifest().kind != "static")
    assert main(["replay", str(dynamic), "--target", str(target), "-o", str(tmp_path / "replays")]) == 0
    runs += [p.parent for p in (tmp_path / "replays").glob("*/manifest.json")]
    kinds = {RunStore.open(run).read_manifest().kind for run in runs}
    assert {"static", "replay"} < kinds and len(runs) == 5  # 2 cells x (1 dynamic repeat + 1 static run), 1 replay
    for run in runs:
        manifest = RunStore.open(run).read_manifest()
        journal = read_journal(run)
        spend = {(s.role, s.model): s for s in manifest.totals.spend}
        assert set(spend) == set(journal), (run.name, set(spend), set(journal))
        for key, lines in journal.items():
            sums = {f: sum(getattr(line, f) for line in lines) for f in FIGURES}
            assert {f: getattr(spend[key], f) for f in FIGURES} == sums, (run.name, key)
            assert spend[key].journal_lines == len(lines), (run.name, key)
        assert any(role == "target" for role, _ in journal) or manifest.kind not in ("static", "replay")
