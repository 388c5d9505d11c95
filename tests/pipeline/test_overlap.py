"""`ragdive run` scores each conversation as soon as it is written, while the others are still being simulated; a
run killed (SIGKILL) in the middle of both, then resumed, loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from ragdive.cli.main import main
from ragdive.config import load_config
from ragdive.pipeline import RunOptions, prepare_experiment, run_experiment
from ragdive.records import Score
from ragdive.store import RunStore, score_key

from .helpers import answer, judge, scripted, write_experiment
from .test_run import ROOT, assert_consistent

CONVERSATIONS = 4
# 4 conversations x 2 turns x 4 per-turn metrics + 4 conversations x 2 conversation metrics
ALL_SCORES = CONVERSATIONS * 2 * 4 + CONVERSATIONS * 2


async def slow_answer(message: str) -> dict[str, Any]:
    """The helpers' target, a little slow (awaited, like a real system): judging has time to overlap."""
    await asyncio.sleep(float(os.environ.get("OVERLAP_TARGET_S", "0.3")))
    return answer(message)


EVENTS: list[str] = []
"""What the recording target and judge below saw, in order (one test at a time fills it)."""


async def recording_answer(message: str) -> dict[str, Any]:
    EVENTS.append("target")
    return await slow_answer(message)


async def recording_judge(messages: list[Any], schema: Any) -> Any:
    EVENTS.append("judge")
    return await judge(messages, schema)


def slow_experiment(tmp_path: Path, concurrency: int = 1) -> Path:
    config = write_experiment(tmp_path, conversations=CONVERSATIONS, concurrency=concurrency)
    text = config.read_text().replace("tests.pipeline.helpers:answer", "tests.pipeline.test_overlap:slow_answer")
    config.write_text(text)
    return config


def test_a_conversation_is_scored_while_later_ones_are_still_being_simulated(tmp_path: Path) -> None:
    config = load_config(slow_experiment(tmp_path))
    on_disk_at_score: list[int] = []

    async def go() -> RunStore:
        async with AsyncExitStack() as resources:
            prepared = await prepare_experiment(config, resources, RunOptions(no_cache=True))
            store = prepared.store

            def scored(score: Score) -> None:
                on_disk_at_score.append(len(store.conversations().records))

            outcome = await run_experiment(prepared, on_score=scored)
            assert outcome.status == "finished"
            return store

    store = asyncio.run(go())
    assert len(on_disk_at_score) == ALL_SCORES
    assert min(on_disk_at_score) < CONVERSATIONS  # judging began before the simulation ended
    scores = store.scores().records
    assert len(scores) == ALL_SCORES == len({score_key(s) for s in scores})
    assert store.read_manifest().status == "finished"
    assert_consistent(store)


def test_a_turn_is_judged_while_its_conversation_goes_on_and_written_only_with_its_line(tmp_path: Path) -> None:
    """One conversation of three turns: the judge works on turn 1 while the target answers turn 2, yet no score
    line reaches the disk before the conversation's, and every score is stamped with that line."""
    config_path = write_experiment(
        tmp_path,
        conversations=1,
        max_turns=3,
        judge_model=scripted("judge", "tests.pipeline.test_overlap:recording_judge"),
    )
    config_path.write_text(
        config_path.read_text().replace("tests.pipeline.helpers:answer", "tests.pipeline.test_overlap:recording_answer")
    )
    config = load_config(config_path)
    EVENTS.clear()
    conversations_at_score: list[int] = []

    async def go() -> RunStore:
        async with AsyncExitStack() as resources:
            prepared = await prepare_experiment(config, resources, RunOptions(no_cache=True))
            store = prepared.store

            def scored(score: Score) -> None:
                conversations_at_score.append(len(store.conversations().records))
                assert len(store.conversations().records) == 1  # the line is on disk before any score counts

            outcome = await run_experiment(prepared, on_score=scored)
            assert outcome.status == "finished"
            return store

    store = asyncio.run(go())
    assert EVENTS.count("target") == 3
    last_target = len(EVENTS) - 1 - EVENTS[::-1].index("target")
    assert "judge" in EVENTS[:last_target]  # judging began before the conversation's last turn was answered
    (conversation,) = store.conversations().records
    scores = store.scores().records
    assert len(scores) == 3 * 4 + 2 == len({score_key(s) for s in scores}) == len(conversations_at_score)
    assert {s.conversation_finished for s in scores} == {conversation.finished}
    assert_consistent(store)


def lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def test_sigkill_while_simulating_and_scoring_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    config = slow_experiment(tmp_path)
    script = "import sys; from ragdive.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", script, "run", str(config)],  # the cache on: its batched writes are killed too
        cwd=ROOT,
        env={**os.environ, "PIPETEST_SLOW_JUDGE": "1", "OVERLAP_TARGET_S": "0.5"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    overlapped = False
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            runs = list((tmp_path / "runs").glob("*"))
            if runs and lines(runs[0] / "evaluations.jsonl") >= 2:
                overlapped = lines(runs[0] / "conversations.jsonl") < CONVERSATIONS
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    run_dir = next((tmp_path / "runs").glob("*"))
    store = RunStore(run_dir)
    assert overlapped, "the kill came after the simulation: the overlap was not exercised"
    assert store.read_manifest().status == "running"  # nobody could record how it stopped
    before = {score_key(s) for s in store.scores().records}
    assert 2 <= len(before) < ALL_SCORES

    assert main(["run", str(config), "--resume", str(run_dir)]) == 0
    conversations = store.conversations().records
    assert len(conversations) == CONVERSATIONS == len({c.id for c in conversations})  # none simulated twice
    scores = store.scores().records
    assert len(scores) == ALL_SCORES == len({score_key(s) for s in scores})  # every item once, none lost
    assert before <= {score_key(s) for s in scores}
    assert store.read_manifest().status == "finished"
    assert_consistent(store)


def test_the_judges_spend_reaches_the_manifest_while_scoring_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only when scoring ends: a SIGKILL then loses at most SPEND_EVERY_S of the judge's spend, and a resumed
    run's budget counts the rest (here every score records it)."""
    from ragdive.evaluation import evaluator

    monkeypatch.setattr(evaluator, "SPEND_EVERY_S", 0.0)
    config = load_config(write_experiment(tmp_path, conversations=2))
    seen: list[int] = []

    async def go() -> RunStore:
        async with AsyncExitStack() as resources:
            prepared = await prepare_experiment(config, resources, RunOptions(no_cache=True))
            store = prepared.store

            def scored(score: Score) -> None:
                spend = store.read_manifest().totals.spend
                seen.append(sum(line.calls for line in spend if line.role == "judge"))

            outcome = await run_experiment(prepared, on_score=scored)
            assert outcome.status == "finished"
            return store

    store = asyncio.run(go())
    assert seen[1] >= 1  # recorded while scoring went on (the manifest before the second score counted)
    assert seen == sorted(seen)  # added as it grew, never twice
    (judge,) = [line for line in store.read_manifest().totals.spend if line.role == "judge"]
    assert judge.calls == len(store.scores().records) == ALL_SCORES // CONVERSATIONS * 2


def test_static_mode_scores_each_answer_while_later_questions_are_still_being_asked(tmp_path: Path) -> None:
    from ragdive.pipeline.overlap import AskingHooks
    from ragdive.pipeline.static import run_static

    config_path = slow_experiment(tmp_path)
    dataset = tmp_path / "questions.csv"
    dataset.write_text("question,answer\n" + "".join(f"What is item {i}?,Item {i} is a harbour.\n" for i in range(4)))
    config = load_config(config_path)
    on_disk_at_score: list[int] = []

    async def go() -> RunStore:
        async with AsyncExitStack() as resources:
            holder: dict[str, RunStore] = {}

            def scored(score: Score) -> None:
                on_disk_at_score.append(len(holder["store"].conversations().records))

            hooks = AskingHooks(on_created=lambda store, total: holder.setdefault("store", store), on_score=scored)
            outcome = await run_static(config, dataset, resources, hooks=hooks)
            return outcome.store

    store = asyncio.run(go())
    assert len(on_disk_at_score) == 4 * 4 == len({score_key(s) for s in store.scores().records})
    assert min(on_disk_at_score) < 4  # scoring began before the last question was answered
    assert store.read_manifest().status == "finished"
    assert_consistent(store)
