"""Ray on two nodes (slow; root): the second node runs in a mount namespace of its own where the driver's input
folder is an empty tmpfs, so it has nothing at the driver's paths. A run split among workers there gets the local
run's records: the corpus and the index folder come with the orders through the object store
(executors/ray_inputs). The head has no CPU, so every part runs on the second node."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ragdive.cli.main import main

from ..pipeline.sweep_helpers import base_experiment
from .records import run_records

pytest.importorskip("ray", reason="the Ray executor's tests need the extra: pip install 'ragdive[ray]'")
pytestmark = pytest.mark.slow

CHECK = """
import os, sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR")
at = ray.remote(num_cpus=1)(lambda p: os.path.exists(p))
print(len([n for n in ray.nodes() if n["Alive"]]), ray.get(at.remote(sys.argv[2])))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs in a mount namespace of its own"
    if shutil.which("unshare") is None or shutil.which("ray") is None:
        return "needs unshare (util-linux) and the ray command"
    return None


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """(address, the input folder node 2 cannot see, the environment to talk to the cluster with)."""
    why = _why_not()
    if why:
        pytest.skip(why)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    address = f"127.0.0.1:{_free_port()}"
    temp = tempfile.mkdtemp(prefix="rdray-")  # short: Ray's unix socket paths must stay under 108 characters
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "disabled",  # else a token in ~/.ray turns authentication on for the whole cluster
        "RAY_USAGE_STATS_ENABLED": "0",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),  # workers resolve the tests' responders
    }
    common = ["--node-ip-address=127.0.0.1", f"--temp-dir={temp}", "--disable-usage-stats", "--block"]
    head = subprocess.Popen(
        ["ray", "start", "--head", f"--port={address.rsplit(':', 1)[1]}", "--num-cpus=0", "--include-dashboard=false"]
        + common,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    node_cmd = " ".join(["exec ray start", f"--address={address}", "--num-cpus=2", *common])
    node = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", f"mount -t tmpfs tmpfs {inputs} && {node_cmd}"],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield address, inputs, env
    finally:
        for proc in (node, head):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=15)
                    break
                except subprocess.TimeoutExpired:
                    continue
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for_two_nodes(address: str, probe: Path, env: dict[str, str]) -> str:
    """Node count and whether a worker sees ``probe``, once both nodes are up."""
    deadline = time.monotonic() + 90
    last = ""
    while time.monotonic() < deadline:
        done = subprocess.run(
            [sys.executable, "-c", CHECK, address, str(probe)], env=env, capture_output=True, text=True, timeout=60
        )
        last = done.stdout.strip() or done.stderr.strip()[-300:]
        if done.returncode == 0 and last.startswith("2 "):
            return last
        time.sleep(2)
    pytest.fail(f"the two-node cluster did not come up: {last}")


def test_a_run_split_on_a_node_without_the_driver_s_paths_gets_the_local_run_s_records(
    two_nodes: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    address, inputs, env = two_nodes
    data = base_experiment(inputs)  # corpus, index folder and cache under the folder node 2 cannot see
    data["simulation"].update({"conversations": 4, "max_turns": 2, "concurrency": 2})
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(yaml.safe_dump(data, sort_keys=False))
    corpus = Path(data["corpus"]["path"])
    assert _wait_for_two_nodes(address, corpus, env) == "2 False"  # the premise: node 2 has no corpus there

    assert main(["run", str(experiment), "--output", str(tmp_path / "local"), "--no-cache"]) == 0
    out = tmp_path / "ray"
    args = ["run", str(experiment), "--output", str(out), "--no-cache", "--executor", "ray", "--address", address]
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", *args, "--shards", "2"], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (local,) = [p for p in (tmp_path / "local").iterdir() if (p / "manifest.json").is_file()]
    (distributed,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    records = run_records(distributed)
    assert records["status"] == "finished" and len(records["conversations"]) == 4
    assert records == run_records(local)
