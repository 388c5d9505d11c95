"""A repeat is a new sample: the same config again is served from the cache, `--repeat N` calls every role anew
(user, validator, judge) with new sampling seeds, on the same seed documents and conversation ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.store import RunStore

from .helpers import write_experiment


def _run(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> RunStore:
    assert main(["run", str(config), *extra]) == 0
    return RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))


def _calls(store: RunStore) -> dict[str, int]:
    return {s.role: s.calls for s in store.read_manifest().totals.spend}


def test_the_same_config_is_cached_and_a_repeat_is_sampled_anew(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_experiment(tmp_path)
    first = _run(config, capsys)
    assert set(_calls(first)) >= {"user", "validator", "judge"} and all(_calls(first).values())

    again = _run(config, capsys)
    assert sum(_calls(again).values()) == 0  # the identical run: every call from the cache

    repeat = _run(config, capsys, "--repeat", "1")
    calls = _calls(repeat)
    assert all(calls.get(role, 0) > 0 for role in ("user", "validator", "judge")), calls  # nothing collapsed
    assert repeat.read_manifest().config["repeat"] == 1
    one, other = first.conversations().records, repeat.conversations().records
    assert [c.id for c in one] == [c.id for c in other]  # repeats pair by conversation...
    assert [c.document_ids for c in one] == [c.document_ids for c in other]  # ...on the same seed documents
    assert all(a.seed != b.seed for a, b in zip(one, other, strict=True))  # but sample with their own seeds

    assert sum(_calls(_run(config, capsys, "--repeat", "1")).values()) == 0  # a repeat is itself repeatable


def test_a_scored_run_ends_with_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_experiment(tmp_path)
    assert main(["run", str(config)]) == 0
    captured = capsys.readouterr()
    store = RunStore.open(Path(captured.out.strip().splitlines()[-1]))
    assert f"report: {store.report_path}" in captured.err
    html = store.report_path.read_text(encoding="utf-8")
    assert "<html" in html and store.path.name in html
