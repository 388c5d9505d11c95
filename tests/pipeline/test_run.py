"""`ragdive run CONFIG`: simulation and evaluation in one run directory, one budget, both stages resumable."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.store import RunStore, latest_scores, score_key

from .helpers import write_experiment

ROOT = Path(__file__).resolve().parents[2]
# 2 conversations x 2 turns x 4 per-turn metrics + 2 conversations x 2 conversation metrics
ALL_SCORES = 2 * 2 * 4 + 2 * 2


def last_line(text: str) -> Path:
    return Path(text.strip().splitlines()[-1])


def assert_consistent(store: RunStore) -> None:
    """The manifest's totals agree with what is on disk; every score is a value in [0, 1] or unscored with a
    reason."""
    manifest = store.read_manifest()
    conversations = store.conversations().records
    scores = latest_scores(store.scores().records)
    t = manifest.totals
    assert t.conversations == len(conversations)
    assert t.turns == sum(len(c.turns) for c in conversations)
    assert t.scores == len(scores) and t.unscored == sum(not s.scored for s in scores)
    for s in scores:
        assert (s.value is not None and 0.0 <= s.value <= 1.0) or (s.value is None and s.unscored_reason), s


def test_run_simulates_and_scores_into_one_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_experiment(tmp_path, conversations=5, max_turns=3)
    out = tmp_path / "elsewhere"
    args = ["--conversations", "2", "--max-turns", "2", "--output", str(out), "--no-cache"]
    assert main(["run", str(config), *args]) == 0
    captured = capsys.readouterr()
    run_dir = last_line(captured.out)
    assert run_dir.parent == out
    assert (run_dir / "conversations.jsonl").is_file() and (run_dir / "evaluations.jsonl").is_file()
    assert "per-metric summary" in captured.out and "context_recall" in captured.out
    assert f"{ALL_SCORES} scores written (0 unscored), 0 already scored, {ALL_SCORES} judge calls" in captured.err
    assert f"{ALL_SCORES}/{ALL_SCORES}" in captured.err  # scoring progress knew the total up front

    store = RunStore.open(run_dir)
    manifest = store.read_manifest()
    assert manifest.status == "finished" and manifest.error is None
    assert manifest.models == {"user": "scripted/user", "validator": "scripted/validator", "judge": "scripted/judge"}
    assert len(store.conversations().records) == 2 and manifest.totals.turns == 4
    scores = store.scores().records
    assert len(scores) == ALL_SCORES == len({score_key(s) for s in scores})
    # the judge saw the real data: the target always answers the harbour's first sentence, with the document
    # and the rule judge checks whether the ground truth is in the answer / the contexts
    harbour = {c.id: c.document_ids == ["harbour"] for c in store.conversations().records}
    for s in scores:
        if s.metric == "context_recall":
            assert s.value == (1.0 if harbour[s.conversation_id] else 0.0)
        if s.metric == "correctness":  # turn 1 of a harbour conversation asks for exactly the first sentence
            assert s.value == (1.0 if harbour[s.conversation_id] and s.turn_index == 0 else 0.0)
    assert_consistent(store)

    # the manifest's tokens cover both stages: more than the same simulation alone spends
    assert main(["simulate", str(config), *args]) == 0
    simulated_only = RunStore.open(last_line(capsys.readouterr().out)).read_manifest().totals
    assert manifest.totals.conversations == simulated_only.conversations
    both = manifest.totals.prompt_tokens + manifest.totals.completion_tokens
    assert both > simulated_only.prompt_tokens + simulated_only.completion_tokens > 0


@pytest.mark.parametrize(
    ("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_resume_of_a_run_interrupted_while_scoring_finishes_the_evaluation(
    tmp_path: Path, signum: int, exit_code: int
) -> None:
    config = write_experiment(tmp_path)
    script = "import sys; from ragdive.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", script, "run", str(config), "--no-cache"],
        cwd=ROOT,
        env={**os.environ, "PIPETEST_SLOW_JUDGE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        files = list((tmp_path / "runs").glob("*/evaluations.jsonl"))
        if files and files[0].read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == exit_code, stderr
    assert "--resume" in stderr
    store = RunStore.open(last_line(stdout))
    assert store.read_manifest().status == "interrupted"
    assert len(store.conversations().records) == 2  # the simulation had finished
    written = len(store.scores().records)
    assert 2 <= written < ALL_SCORES
    assert_consistent(store)

    assert main(["run", str(config), "--resume", str(store.path), "--no-cache"]) == 0
    scores = store.scores().records
    assert len(scores) == ALL_SCORES == len({score_key(s) for s in scores})  # nothing scored twice
    assert len(store.conversations().records) == 2  # nothing simulated twice
    assert store.read_manifest().status == "finished"
    assert_consistent(store)


def _tokens(store: RunStore) -> int:
    t = store.read_manifest().totals
    return t.prompt_tokens + t.completion_tokens


def test_the_budget_covers_both_stages_and_resume_with_a_larger_one_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # what the simulation alone spends (scripted models are deterministic)
    config = write_experiment(tmp_path)
    assert main(["simulate", str(config), "--no-cache"]) == 0
    simulation_tokens = _tokens(RunStore.open(last_line(capsys.readouterr().out)))

    # a cap the simulation stays under but the judge reaches: the run stops while scoring, exit 3. The judge
    # judges each turn as it is answered, beside the simulation: with scripted models that answer at once, how
    # much it spends before the simulation ends is a matter of loop turns, so here its calls take 0.15 s each
    # (the simulation's ~12 calls do not wait) and the simulation ends first, as it does when a judge call
    # takes a model's time
    (tmp_path / "limited").mkdir()
    limited = write_experiment(tmp_path / "limited", extra=f"budget: {{max_tokens: {simulation_tokens + 300}}}\n")
    with pytest.MonkeyPatch.context() as slow:
        slow.setenv("PIPETEST_SLOW_JUDGE", "1")
        assert main(["run", str(limited), "--no-cache"]) == 3
    captured = capsys.readouterr()
    store = RunStore.open(last_line(captured.out))
    manifest = store.read_manifest()
    assert manifest.status == "budget_exceeded" and "while scoring" in (manifest.error or "")
    assert "--resume" in captured.err
    assert len(store.conversations().records) == 2
    written = len(store.scores().records)
    assert 0 < written < ALL_SCORES
    assert not any("budget" in (s.unscored_reason or "") for s in store.scores().records)  # never unscored for it
    # past the cap only by the calls in flight when it was reached: the simulation is over and the judge's
    # concurrency is 1, so one judge call (this judge's prompts are well under 300 words, its tokens)
    assert simulation_tokens + 300 <= _tokens(store) < simulation_tokens + 600
    assert_consistent(store)

    # the budget spans sessions: resumed with the same cap, nothing more may be called
    assert main(["run", str(limited), "--resume", str(store.path), "--no-cache"]) == 3
    capsys.readouterr()
    assert len(store.scores().records) == written

    # a larger cap finishes the scoring without redoing anything (the same corpus and settings, another budget)
    larger = limited.with_name("larger.yaml")
    larger.write_text(limited.read_text().replace(f"max_tokens: {simulation_tokens + 300}", "max_tokens: 10000000"))
    assert main(["run", str(larger), "--resume", str(store.path), "--no-cache"]) == 0
    capsys.readouterr()
    assert len(store.scores().records) == ALL_SCORES == len({score_key(s) for s in store.scores().records})
    assert store.read_manifest().status == "finished"
    assert_consistent(store)


def test_a_budget_spent_while_simulating_leaves_scoring_for_later(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_experiment(tmp_path, extra="budget: {max_tokens: 1}\n")
    assert main(["run", str(config), "--no-cache"]) == 3
    captured = capsys.readouterr()
    store = RunStore.open(last_line(captured.out))
    assert store.read_manifest().status == "budget_exceeded"
    assert store.conversations().records == [] and store.scores().records == []
    assert "per-metric summary" not in captured.out


def test_a_budget_stop_shows_one_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Calls in flight when the cap is reached still finish and are recorded: every cost on the screen is the
    final one (the live line is settled to the run's totals; the stop message names the cap, not a spend taken
    before those calls ended)."""
    config = write_experiment(
        tmp_path, conversations=4, max_turns=3, concurrency=4, extra="budget: {max_cost_usd: 0.5}\n"
    )
    priced = "{price: {input_per_1m: 100, output_per_1m: 100}, model: scripted/"
    config.write_text(config.read_text().replace("{model: scripted/", priced))
    assert main(["run", str(config), "--no-cache"]) == 3
    captured = capsys.readouterr()
    manifest = RunStore.open(last_line(captured.out)).read_manifest()
    assert manifest.status == "budget_exceeded" and manifest.totals.cost_usd is not None
    assert manifest.totals.cost_usd > 0.5  # in-flight calls went past the cap before the stop
    dollars = set(re.findall(r"\$(\d+\.\d{4})", captured.err))  # every figure printed, the cap's aside
    assert dollars - {"0.0000", "0.5000"} == {f"{manifest.totals.cost_usd:.4f}"}, captured.err
    assert "max_cost_usd $0.5000 reached" in captured.err


def test_user_errors_are_one_line_and_create_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_experiment(tmp_path, judge_model="")  # no judge bound and no default
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "no judge model" in err and err.strip().count("\n") == 0
    assert not (tmp_path / "runs").exists()  # found before the simulation spent anything

    (tmp_path / "b").mkdir()
    config = write_experiment(tmp_path / "b", extra="")
    config.write_text(config.read_text().replace("evaluation: {concurrency: 1}", "evaluation: {metrics: [recall]}"))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "unknown metric" in err and err.strip().count("\n") == 0
    assert not (tmp_path / "b" / "runs").exists()

    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_a_resumed_simulation_keeps_the_score_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_experiment(tmp_path)
    assert main(["run", str(config), "--no-cache"]) == 0
    store = RunStore.open(last_line(capsys.readouterr().out))
    assert store.read_manifest().totals.scores == ALL_SCORES
    assert main(["simulate", str(config), "--resume", str(store.path), "--no-cache"]) == 0
    assert store.read_manifest().totals.scores == ALL_SCORES  # the simulation does not own (or zero) them
    assert_consistent(store)
