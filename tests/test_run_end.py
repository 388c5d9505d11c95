"""What the end of `ragdive run` loads: only what it uses. Each of these imports once cost every run's tail (scipy
for the summary's bootstrap ~1 s and for themes ~0.2 s, the gate package ~0.05 s without --gate, the reference
RAG's server for the table's lower-is-better note ~0.05 s) or its start-up (the analyses the summary does not
use), and the report's fixed parts are made while the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragdive.records import Totals
from tests.pipeline.helpers import write_experiment

ROOT = Path(__file__).resolve().parents[1]
UNUSED = (
    "scipy",
    "ragdive.gate",
    "ragdive.pipeline.serve",
    "ragdive.targets.reference",
    # the analyses a run does not use, once loaded by `ragdive.analysis` for its summary (~5 ms of start-up)
    "ragdive.analysis.annotations",
    "ragdive.analysis.calibration",
    "ragdive.analysis.compare",
    "ragdive.analysis.human",
    "ragdive.analysis.repeats",
    # a sweep's report and the sweep tables it reads (~15 ms), the uniqueness calibration, replay and static mode
    "ragdive.report.sweep",
    "ragdive.records.sweep_tables",
    "ragdive.analysis.conversations.uniqueness_calibration",
    "ragdive.pipeline.replay",
    "ragdive.pipeline.static",
)


def test_a_scored_run_imports_no_scipy_gate_or_reference_server(tmp_path: Path) -> None:
    config = write_experiment(tmp_path)
    probe = (
        "import sys; from ragdive.cli.main import main; code = main(['run', sys.argv[1]]); "
        f"print(code, sorted(m for m in sys.modules if m.startswith({UNUSED!r}))); "
        "from ragdive.report.html import packed_plotly_js as p; i = p.cache_info(); print(i.misses, i.hits)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(config)], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2] == "0 []", done.stdout
    run_dir = Path(lines[-3])
    assert (run_dir / "report.html").is_file()  # the end still writes the report (its imports are its own)
    # the report's fixed parts were made while the run went on (cli._experiment), and used by the end as made
    assert lines[-1] == "1 1", done.stdout


def test_the_live_observer_tells_once_that_the_simulation_started() -> None:
    from ragdive.cli.epilogue import LiveObserver
    from ragdive.records import Totals

    calls: list[int] = []
    live = LiveObserver(simulating=True, on_started=lambda: calls.append(1))
    try:
        assert calls == []  # not at creation: start-up is busy on the same interpreter lock
        live.started(4, 0, Totals())
        live.started(4, 2, Totals())  # a stage starting again (resume) does not start it twice
        assert calls == [1]
    finally:
        live.stop()


def test_a_command_runs_on_uvloop_where_it_is_installed() -> None:
    """The command line's one event loop is uvloop's (a cached re-run is its thread busy from end to end: ~5 % less
    CPU at 200 x 5), the result and the live lines as before."""
    pytest.importorskip("uvloop")
    import asyncio

    from ragdive.cli.epilogue import LiveObserver, run_command

    seen: list[str] = []

    async def work(live: LiveObserver) -> Any:
        seen.append(type(asyncio.get_running_loop()).__module__)
        return SimpleNamespace(totals=Totals())

    live = LiveObserver()
    result = run_command(work, live)
    assert seen and seen[0].startswith("uvloop") and result.totals == Totals()


def test_every_command_and_the_sync_api_share_one_kind_of_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """sync_edge.run_loop is the one loop every command and the sync API run on: uvloop's, also in the thread the
    sync API starts inside a running loop (a notebook), and asyncio's own when RAGDIVE_EVENT_LOOP=asyncio."""
    pytest.importorskip("uvloop")
    import asyncio

    from ragdive.sync_edge import run_loop, run_sync

    async def kind() -> str:
        return type(asyncio.get_running_loop()).__module__

    async def inside_a_running_loop() -> str:
        return run_sync(kind)  # a fresh thread with its own loop

    assert run_sync(kind).startswith("uvloop")
    assert run_loop(inside_a_running_loop()).startswith("uvloop")
    monkeypatch.setenv("RAGDIVE_EVENT_LOOP", "asyncio")
    assert run_sync(kind) == "asyncio.unix_events"


def test_a_run_against_openai_compatible_servers_imports_no_httpx(tmp_path: Path) -> None:
    """Its models' and its target's calls go through aiohttp directly (http_client.JsonSession): httpx, with
    httpx-aiohttp and the CLI httpx brings (click, pygments), was ~0.03 s of CPU in every run's start-up."""
    from ragdive.testing import StubServer
    from ragdive.testing.role_replies import ragdive_roles

    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "harbour.md").write_text("Veldmark harbour lies at the mouth of the river Ost. Built in 1852.\n")
    with StubServer(reply=ragdive_roles) as stub:
        model = f"{{model: openai/stub, base_url: '{stub.base_url}', max_retries: 0}}"
        config = tmp_path / "experiment.yaml"
        config.write_text(
            f"name: no-httpx\noutput_dir: {tmp_path / 'runs'}\ncorpus: {{path: {corpus}}}\n"
            f"models: {{default: {model}}}\nsimulation: {{conversations: 1, max_turns: 1}}\n"
            f"target: {{type: openai-chat, base_url: '{stub.base_url}', model: rag}}\n"
        )
        probe = (
            "import sys; from ragdive.cli.main import main; code = main(['run', sys.argv[1]]); "
            "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'httpx', 'httpx_aiohttp'}))"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        done = subprocess.run(
            [sys.executable, "-c", probe, str(config)], capture_output=True, text=True, timeout=120, env=env
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout
    assert stub.request_count > 3  # the run did call the models and the target
