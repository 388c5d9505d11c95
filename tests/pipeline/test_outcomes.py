"""A run that did not do its job never looks finished (issue 24's "Done when"): real `ragdive run`s against the
fault stub on loopback, each role its own server. A judge whose key is refused stops the run (failed, exit 2,
one line naming role, model, status and the key's source); a validator failing half its transport calls leaves
conversations in error (incomplete, exit 4, the --resume hint, an alarm, means over finished conversations only);
a judge answering in the wrong shape leaves items unscored (incomplete, exit 4, the --retry-failed hint, alarms)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragdive.cli.main import main
from ragdive.records import kind_of_unscored
from ragdive.store import RunStore
from ragdive.testing import FaultRates, StubServer
from ragdive.testing.offline import stub_reply

CORPUS = Path(__file__).resolve().parents[2] / "src" / "ragdive" / "demo" / "corpus"
METRICS = ["faithfulness", "correctness", "forgetfulness"]


@pytest.fixture
def servers() -> Iterator[dict[str, StubServer]]:
    with ExitStack() as stack:
        yield {
            role: stack.enter_context(StubServer(reply=stub_reply, api_key="right-key"))
            for role in ("user", "validator", "judge", "target")
        }


def write_config(tmp_path: Path, servers: dict[str, StubServer], **roles: dict[str, Any]) -> Path:
    def model(role: str) -> dict[str, Any]:
        spec = {"model": "openai/stub-model", "base_url": servers[role].base_url, "api_key": "right-key"}
        return {**spec, "timeout_s": 1.0, "backoff_s": 0.01, **roles.get(role, {})}

    config = {
        "name": "outcomes",
        "seed": 5,
        "models": {role: model(role) for role in ("user", "validator", "judge")},
        "corpus": {"path": str(CORPUS)},
        "simulation": {"conversations": 8, "max_turns": 2, "personas": ["precise"]},
        "target": {"type": "openai-chat", "base_url": servers["target"].base_url, "api_key": "right-key"},
        "evaluation": {"metrics": METRICS},
        "cache": {"enabled": False},
        "output_dir": str(tmp_path / "runs"),
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def the_run(tmp_path: Path) -> RunStore:
    (run,) = [p for p in (tmp_path / "runs").iterdir() if (p / "manifest.json").exists()]
    return RunStore.open(run)


def printed_means(out: str) -> dict[str, float]:
    return {m: float(v) for m, v in re.findall(r"^\s*(\w+)\s+([01]\.\d{3}) \(n=", out, re.M)}


def test_a_refused_judge_key_fails_the_run_with_one_line(
    tmp_path: Path, servers: dict[str, StubServer], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "wrong-key")
    # one judge slot: then "refused once is refused" is exact (with more slots, calls sent beside the first 401
    # before it came back are legitimate, and how many depends on the machine's load)
    config = write_config(tmp_path, servers, judge={"api_key": "${JUDGE_KEY}", "max_concurrency": 1})
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert "the judge model openai/stub-model stopped the run" in line and "HTTP 401" in line
    assert "credential: ${JUDGE_KEY} (api_key in the model's config)" in line and "wrong-key" not in err
    manifest = the_run(tmp_path).read_manifest()
    assert manifest.status == "failed" and "judge model" in (manifest.error or "")
    assert servers["judge"].request_count == 1  # refused once is refused: the calls queued behind it never sent


def test_half_the_validators_transport_calls_failing_leaves_the_run_incomplete(
    tmp_path: Path, servers: dict[str, StubServer], capsys: pytest.CaptureFixture[str]
) -> None:
    servers["validator"].chaos(FaultRates(transport=0.5, seed=3, hang_s=1.5))
    # no retries, so half the requests fail for good; the stop rule raised (the model does answer, half the time)
    config = write_config(tmp_path, servers, validator={"max_retries": 0, "stop_after_failures": 1000})
    assert main(["run", str(config)]) == 4
    captured = capsys.readouterr()
    store = the_run(tmp_path)
    manifest = store.read_manifest()
    conversations = store.current_conversations()
    in_error = [c for c in conversations if c.status == "error"]
    assert in_error and manifest.status == "incomplete"
    assert f"{len(in_error)} of {len(conversations)} conversations in error" in (manifest.error or "")
    assert f"continue with: ragdive run {config} --resume {store.path}" in captured.err
    assert "! error_share" in captured.out and "error_share" in {a.code for a in manifest.alarms or []}
    # the summary's means: over the finished conversations' whole-conversation scores and every answered turn
    cut = {c.id for c in in_error}
    expected: dict[str, list[float]] = {}
    for s in store.current_scores():
        if s.value is not None and not (s.turn_index is None and s.conversation_id in cut):
            expected.setdefault(s.metric, []).append(s.value)
    shown = printed_means(captured.out)
    assert shown and shown == {m: round(sum(v) / len(v), 3) for m, v in expected.items() if m in shown}


def test_a_judge_answering_in_the_wrong_shape_leaves_the_run_incomplete(
    tmp_path: Path, servers: dict[str, StubServer], capsys: pytest.CaptureFixture[str]
) -> None:
    servers["judge"].chaos(FaultRates(content=1.0, seed=1))
    config = write_config(tmp_path, servers)
    assert main(["run", str(config)]) == 4
    captured = capsys.readouterr()
    store = the_run(tmp_path)
    manifest = store.read_manifest()
    unusable = [s for s in store.current_scores() if kind_of_unscored(s) == "judge_unusable"]
    assert unusable and manifest.status == "incomplete"
    assert f"{len(unusable)} of {len(store.current_scores())} items unscored because the judge failed" in (
        manifest.error or ""
    )
    assert f"continue with: ragdive evaluate {store.path} --retry-failed" in captured.err
    assert "! judge_failure_share" in captured.out and "! empty_metric" in captured.out
    assert "judge_unusable" in captured.out  # the summary groups the unscored by kind
    codes = {a["code"] for a in json.loads((store.path / "manifest.json").read_text())["alarms"]}
    assert {"judge_failure_share", "empty_metric"} <= codes
