"""`ragdive simulate` end to end: a real config file, a tiny corpus on disk, a python target, and scripted models
registered as the `simtest` provider in this process (the scripted backend's responder cannot come from YAML)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.errors import BudgetExceeded
from ragdive.models import ScriptedModel, register_backend
from ragdive.models import registry as model_registry
from ragdive.store import RunStore

from .helpers import DOCS, good_draft

ROOT = Path(__file__).resolve().parents[2]


def answer(message: str, history: list[dict[str, str]]) -> dict[str, object]:
    """The python target: a deliberately simple 'RAG system'."""
    if os.environ.get("SIMTEST_SLOW_TARGET"):
        time.sleep(0.2)
    return {"answer": f"I think: {message}", "contexts": [{"text": DOCS[0].text[:80], "source": "harbour"}]}


async def block_after_first(message: str, conversation_id: str) -> dict[str, object]:
    """Answers the first conversation; with SIMTEST_BLOCK set, every later one waits until the run is stopped, so
    a signal sent once the first conversation is on disk finds exactly one finished, whenever it arrives."""
    if os.environ.get("SIMTEST_BLOCK") and not conversation_id.startswith("c0000-"):
        await asyncio.sleep(3600)
    return answer(message, [])


def simtest_backend(name: str, **options: object) -> ScriptedModel:
    kind = name.split("/", 1)[1]
    if kind == "user":
        return ScriptedModel(name, responder=good_draft)
    if kind == "validator":
        return ScriptedModel(name, responder=lambda m: {"reason": "ok", "failed_checks": [], "valid": True})
    if kind == "strict":
        return ScriptedModel(
            name, responder=lambda m: {"reason": "no", "failed_checks": ["wrong_type"], "valid": False}
        )
    if kind == "budget":  # the model layer raises BudgetExceeded once the run's cap is reached
        calls = {"n": 0}

        def spend(messages: list[object], schema: object) -> object:
            calls["n"] += 1
            if calls["n"] > 5:
                raise BudgetExceeded("budget of 1000 tokens spent")
            return good_draft(messages)  # type: ignore[arg-type]

        return ScriptedModel(name, responder=spend)
    raise ValueError(name)


def register() -> None:
    register_backend("simtest", simtest_backend)


@pytest.fixture
def simtest() -> Iterator[None]:
    register()
    yield
    model_registry.unregister_backend("simtest")


def write_setup(
    tmp_path: Path,
    corpus_options: str = "",
    target: str = "tests.simulation.test_cli_simulate:answer",
    **simulation: object,
) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for doc in DOCS:
        (corpus / f"{doc.id}.md").write_text(f"# {doc.title}\n\n{doc.text}\n")
    sim = {"conversations": 4, "max_turns": 2, "personas": ["precise", "skeptical"], "concurrency": 2, **simulation}
    config = tmp_path / "experiment.yaml"
    config.write_text(
        "name: cli-test\nseed: 3\n"
        f"cache: {{dir: {tmp_path / 'cache'}}}\n"
        f"output_dir: {tmp_path / 'runs'}\n"
        "models: {user: simtest/user, validator: simtest/validator}\n"
        f"corpus: {{path: {corpus}{corpus_options}}}\n"
        f"simulation: {sim}\n".replace("'", "")
        + f"target: {{type: python, callable: {target}}}\n"
    )
    return config


def test_simulate_end_to_end(tmp_path: Path, simtest: None, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_setup(tmp_path)
    out = tmp_path / "elsewhere"
    assert main(["simulate", str(config), "--conversations", "3", "--max-turns", "2", "--output", str(out)]) == 0
    captured = capsys.readouterr()
    run_dir = Path(captured.out.strip().splitlines()[-1])
    assert run_dir.parent == out
    assert "finished: 3 conversations, 6 turns, 0 rejections" in captured.err

    store = RunStore.open(run_dir)
    manifest = store.read_manifest()
    assert manifest.status == "finished" and manifest.seed == 3 and manifest.name == "cli-test"
    assert manifest.models == {"user": "simtest/user", "validator": "simtest/validator"}
    assert manifest.target == "python tests.simulation.test_cli_simulate:answer"
    conversations = store.conversations().records
    assert sorted(c.index for c in conversations) == [0, 1, 2]
    assert {c.persona for c in conversations} == {"precise", "skeptical"}
    for conv in conversations:
        assert [t.index for t in conv.turns] == [0, 1]
        assert conv.turns[1].answer == f"I think: {conv.turns[1].rag_input}"
        assert conv.turns[0].contexts[0].source == "harbour"

    # --resume with settings that decide the conversations changed is refused: one run, one experiment
    assert main(["simulate", str(config), "--resume", str(run_dir), "--model", "validator=simtest/strict"]) == 2
    assert "models (validator) (run: 'simtest/validator', config: 'simtest/strict')" in capsys.readouterr().err
    assert main(["simulate", str(config), "--resume", str(run_dir), "--conversations", "3", "--max-turns", "3"]) == 2
    assert "simulation.max_turns (run: 2, config: 3)" in capsys.readouterr().err
    assert len(store.conversations().records) == 3  # nothing was added by a refused resume

    # --resume with more conversations (the config says 4) adds the missing one and skips the rest
    assert main(["simulate", str(config), "--resume", str(run_dir), "--max-turns", "2"]) == 0
    capsys.readouterr()
    assert sorted(c.index for c in store.conversations().records) == [0, 1, 2, 3]
    assert store.read_manifest().config["simulation"]["conversations"] == 4
    assert store.read_manifest().totals.conversations == 4

    # --model rebinds a role in a new run; progress shows rejections by category on stderr only
    assert main(["simulate", str(config), "--conversations", "1", "--model", "validator=simtest/strict"]) == 0
    captured = capsys.readouterr()
    assert "turns 2 | rejections 6 (wrong_type 6)" in captured.err
    assert "wrong_type" not in captured.out
    strict = RunStore.open(Path(captured.out.strip().splitlines()[-1]))
    [conv] = strict.conversations().records
    assert conv.turns[0].validator_overruled and len(conv.turns[0].attempts) == 3
    assert strict.read_manifest().totals.rejections == 6


def test_a_spent_budget_exits_3_with_finished_work_kept(
    tmp_path: Path, simtest: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_setup(tmp_path, concurrency=1)
    assert main(["simulate", str(config), "--model", "user=simtest/budget"]) == 3
    captured = capsys.readouterr()
    store = RunStore.open(Path(captured.out.strip().splitlines()[-1]))
    manifest = store.read_manifest()
    assert manifest.status == "budget_exceeded" and "budget of 1000 tokens spent" in manifest.error
    assert "--resume" in captured.err
    # 5 drafts = 2 whole conversations of 2 turns; the third was in flight and is not written
    assert [len(c.turns) for c in store.conversations().records] == [2, 2] == [2] * manifest.totals.conversations


def test_related_sampling_gives_each_conversation_both_documents(
    tmp_path: Path, simtest: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_setup(tmp_path, ", sampling: related, group_size: 2", max_document_chars=200)
    assert main(["simulate", str(config), "--conversations", "2", "--max-turns", "3"]) == 0
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    conversations = store.conversations().records
    assert [sorted(c.document_ids) for c in conversations] == [["bridge", "harbour"]] * 2
    # documents were cut to 200 characters before the models saw them: the scripted user quotes the third
    # "sentence" of what it was shown, which for the harbour document is cut mid-word
    quotes = {q for c in conversations for t in c.turns for q in t.evidence}
    assert "The lighthouse at its entrance is painted red and wh." in quotes
    assert not any("red and white" in q for q in quotes)


def test_user_errors_are_one_line(tmp_path: Path, simtest: None, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_setup(tmp_path, personas=["precise", "grumpy"])
    assert main(["simulate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "unknown persona 'grumpy'" in err and "explorer" in err and err.strip().count("\n") == 0
    assert not (tmp_path / "runs").exists()  # nothing was created for a bad config

    (tmp_path / "b").mkdir()
    config = write_setup(tmp_path / "b")
    assert main(["simulate", str(config), "--model", "user=nosuch/model"]) == 2
    assert "unknown model provider 'nosuch'" in capsys.readouterr().err
    assert not (tmp_path / "b" / "runs").exists()

    run = RunStore.create(tmp_path / "runs2", seed=99)
    assert main(["simulate", str(config), "--resume", str(run.path)]) == 2
    assert "seed 99" in capsys.readouterr().err


SIMULATE_SCRIPT = (
    "import sys; from tests.simulation.test_cli_simulate import register; register(); "
    "from ragdive.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def start_simulate(config: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """`ragdive simulate` in its own interpreter (with the simtest models registered), as a user runs it."""
    return subprocess.Popen(
        [sys.executable, "-c", SIMULATE_SCRIPT, "simulate", str(config)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_conversations(runs: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        files = list(runs.glob("*/conversations.jsonl"))
        if files and files[0].read_text().count("\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} conversation(s) written under {runs} within 60 s")


def test_ctrl_c_keeps_finished_conversations_and_resume_completes(tmp_path: Path, simtest: None) -> None:
    config = write_setup(tmp_path, conversations=6, max_turns=2, concurrency=1)
    proc = start_simulate(config, {"SIMTEST_SLOW_TARGET": "1"})
    wait_for_conversations(tmp_path / "runs", 1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "--resume" in stderr
    run_dir = Path(stdout.strip().splitlines()[-1])
    store = RunStore.open(run_dir)
    written = len(store.conversations().records)
    assert store.read_manifest().status == "interrupted" and 1 <= written < 6

    assert main(["simulate", str(config), "--resume", str(run_dir)]) == 0
    ids = [c.id for c in store.conversations().records]
    assert len(ids) == 6 == len(set(ids))
    assert store.read_manifest().status == "finished"


BLOCKING_TARGET = "tests.simulation.test_cli_simulate:block_after_first"


def test_sigterm_marks_the_run_interrupted_exits_143_and_resume_completes(tmp_path: Path, simtest: None) -> None:
    config = write_setup(tmp_path, target=BLOCKING_TARGET, conversations=3, max_turns=2, concurrency=1)
    proc = start_simulate(config, {"SIMTEST_BLOCK": "1"})
    wait_for_conversations(tmp_path / "runs", 1)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    store = RunStore.open(Path(stdout.strip().splitlines()[-1]))
    manifest = store.read_manifest()
    assert manifest.status == "interrupted" and manifest.totals.conversations == 1
    assert manifest.process is not None and manifest.process.pid == proc.pid
    assert [c.index for c in store.conversations().records] == [0]

    assert main(["simulate", str(config), "--resume", str(store.path)]) == 0  # no SIMTEST_BLOCK here
    assert sorted(c.index for c in store.conversations().records) == [0, 1, 2]
    assert store.read_manifest().status == "finished"


def test_a_killed_run_shows_as_stale(tmp_path: Path, simtest: None, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_setup(tmp_path, target=BLOCKING_TARGET, conversations=3, max_turns=2, concurrency=1)
    proc = start_simulate(config, {"SIMTEST_BLOCK": "1"})
    wait_for_conversations(tmp_path / "runs", 1)
    [run_dir] = (tmp_path / "runs").iterdir()
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    assert " running " in capsys.readouterr().out  # alive: the manifest is right
    proc.kill()  # SIGKILL: the process cannot record anything
    proc.communicate(timeout=60)
    store = RunStore.open(run_dir)
    assert store.read_manifest().status == "running"
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    assert " stale " in capsys.readouterr().out
    assert main(["runs", "show", str(run_dir)]) == 0
    assert "status stale" in capsys.readouterr().out
    assert store.read_manifest().status == "running"  # shown, never rewritten by a reader
