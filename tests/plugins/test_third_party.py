"""A third-party distribution adds a metric, a target type and an executor through entry points, without editing
ragdive: it is built from its own pyproject.toml, pip-installed into a folder, and `ragdive run` (a fresh process
with that folder on its path) runs them from YAML and `--executor`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragdive.config import TARGET_TYPES, validate_config
from ragdive.errors import ConfigError
from ragdive.evaluation.metrics import METRICS

PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "ragdive-echo-plugin"
version = "0.1.0"

[project.entry-points."ragdive.metrics"]
mentions_question = "ragdive_echo_plugin.metrics:MentionsQuestion"

[project.entry-points."ragdive.targets"]
echo = "ragdive_echo_plugin.target:ECHO"

[project.entry-points."ragdive.executors"]
journal = "ragdive_echo_plugin.executor:JOURNAL"

[tool.hatch.build.targets.wheel]
packages = ["ragdive_echo_plugin"]
"""

METRIC = """
from pydantic import BaseModel

from ragdive.evaluation.metrics import Outcome, TurnMetric, metric


class MentionsVerdict(BaseModel):
    reason: str = ""
    mentions: bool


@metric("mentions_question", kind="turn", inputs=("question", "answer"), version=2,
        prompt="ragdive_echo_plugin:mentions_question")
class MentionsQuestion(TurnMetric):
    needs_contexts = False

    async def measure(self, judge, turn):
        verdict = await judge.ask("ragdive_echo_plugin:mentions_question", MentionsVerdict,
                                  question=turn.standalone_question, answer=turn.answer)
        return Outcome(1.0 if verdict.mentions else 0.0, verdict.reason)
"""

TARGET = '''
from typing import Literal

from ragdive.config import TargetSection, TargetType
from ragdive.records import Context, TargetReply
from ragdive.targets.base import Target


class EchoConfig(TargetSection):
    type: Literal["echo"] = "echo"
    prefix: str = "You asked:"
    """Put before the echoed message."""


class EchoTarget(Target):
    def __init__(self, config):
        self.config = config

    async def respond(self, conversation, user_message):
        return TargetReply(answer=f"{self.config.prefix} {user_message}",
                           contexts=[Context(text=user_message, source="echo")])


def build(config, **context):
    return EchoTarget(config)


ECHO = TargetType(config=EchoConfig, build=build)
'''

JUDGE = '''
from ragdive.testing import offline


def judge(messages, schema):
    """The offline judge, plus this plug-in's verdict (read from the plug-in's own prompt)."""
    if schema is not None and schema.__name__ == "MentionsVerdict":
        prompt = messages[-1].content
        question = prompt.split("QUESTION:\\n", 1)[1].split("\\n", 1)[0]
        answer = prompt.split("ANSWER:\\n", 1)[1]
        return {"reason": "checked by string", "mentions": question.lower() in answer.lower()}
    return offline.judge(messages, schema)
'''

EXECUTOR = '''
import os
from pathlib import Path

from ragdive.executors import Executor, ExecutorType


class JournalExecutor(Executor):
    """Runs the work in this process, one run at a time, and journals what it was given and how each run ended."""

    def __init__(self, request):
        super().__init__(request)
        self.concurrency = 1
        self.journal = Path(os.environ["ECHO_JOURNAL"])

    def write(self, line):
        with self.journal.open("a") as out:
            out.write(line + "\\n")

    def start(self):
        self.write("start")
        return "journal: one run at a time, in this process"

    async def run_experiment(self, job):
        self.write(f"run {job.prepared.store.path.name} {len(job.prepared.simulation.runner.plans)} conversations")
        outcome = await job.run_here()
        self.write(f"ended {outcome.status}")
        return outcome

    async def run(self, job):
        self.write(f"sweep run {job.planned.run_id}")
        status, error = await job.run_here()
        self.write(f"ended {status}")
        return status, error

    def close(self):
        self.write("close")


JOURNAL = ExecutorType("one run at a time, journaled", JournalExecutor)
'''

PROMPT = """Task: does the ANSWER repeat the QUESTION?
Return {"reason": "...", "mentions": true|false}.

QUESTION:
{{ question }}

ANSWER:
{{ answer }}
"""


def build_distribution(root: Path) -> Path:
    """The plug-in's source tree, pip-installed (no index, no dependencies) into ``root/site``."""
    source = root / "src"
    package = source / "ragdive_echo_plugin"
    (package / "prompts").mkdir(parents=True)
    (source / "pyproject.toml").write_text(PYPROJECT)
    (package / "__init__.py").write_text("")
    (package / "metrics.py").write_text(METRIC)
    (package / "target.py").write_text(TARGET)
    (package / "judge.py").write_text(JUDGE)
    (package / "executor.py").write_text(EXECUTOR)
    (package / "prompts" / "mentions_question.md").write_text(PROMPT)
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--target", str(site), str(source)],
        check=True,
        capture_output=True,
    )
    return site


def experiment(root: Path, metrics: str = "[correctness, mentions_question]", target: str = "type: echo") -> Path:
    corpus = root / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "harbour.md").write_text("The harbour was built in 1870. It has two piers. Ferries leave hourly.\n")
    responders = {"user": "ragdive.testing.offline:user", "validator": "ragdive.testing.offline:validator"}
    responders["judge"] = "ragdive_echo_plugin.judge:judge"
    models = "".join(
        f"  {role}: {{model: scripted/{role}, options: {{responder: '{where}'}}}}\n"
        for role, where in responders.items()
    )
    config = root / "experiment.yaml"
    config.write_text(
        f"name: plugin\noutput_dir: {root / 'runs'}\ncache: {{dir: {root / 'cache'}}}\nmodels:\n{models}"
        f"corpus: {{path: {corpus}}}\n"
        "simulation: {conversations: 2, max_turns: 2, personas: [precise], concurrency: 1}\n"
        f"target: {{{target}, prefix: 'Echo:'}}\n"
        f"evaluation: {{metrics: {metrics}, concurrency: 1}}\n"
    )
    return config


def ragdive(site: Path, *args: str, journal: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    if journal is not None:
        env["ECHO_JOURNAL"] = str(journal)
    return subprocess.run([sys.executable, "-m", "ragdive", *args], env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_distribution(tmp_path_factory.mktemp("plugin"))


def test_a_metric_and_a_target_type_from_an_installed_distribution_run_from_yaml(site: Path, tmp_path: Path) -> None:
    assert (site / "ragdive_echo_plugin-0.1.0.dist-info" / "entry_points.txt").exists()
    done = ragdive(site, "run", str(experiment(tmp_path)), "--no-cache")
    assert done.returncode == 0, done.stderr
    run = next((tmp_path / "runs").iterdir())
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    assert manifest["config"]["target"] == {"type": "echo", "prefix": "Echo:"}
    conversations = [json.loads(line) for line in (run / "conversations.jsonl").read_text().splitlines()]
    answers = [t["answer"] for c in conversations for t in c["turns"]]
    assert answers and all(a.startswith("Echo: ") for a in answers)  # the plug-in's target answered every turn
    scores = [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines()]
    mine = [s for s in scores if s["metric"] == "mentions_question"]
    assert len(mine) == len(answers) and {s["metric_version"] for s in mine} == {2}
    assert all(len(s["prompt_fingerprint"]) == 12 for s in mine)
    # the echo repeats the message: its rag_input, which on turn 1 is the stand-alone question itself
    first_turns = [s for s in mine if s["turn_index"] == 0]
    assert first_turns and all(s["value"] == 1.0 for s in first_turns)
    assert {s["metric"] for s in scores} == {"correctness", "mentions_question"}


def test_a_misspelt_plug_in_name_is_one_line_naming_the_closest(site: Path, tmp_path: Path) -> None:
    done = ragdive(site, "run", str(experiment(tmp_path, target="type: ecko")))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "unknown target type 'ecko' (did you mean `echo`?)" in done.stderr
    done = ragdive(site, "run", str(experiment(tmp_path, metrics="[mentions_questoin]")))
    assert done.returncode == 2 and "(did you mean `mentions_question`?)" in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_without_the_distribution_the_names_are_unknown() -> None:
    with pytest.raises(ConfigError, match="unknown target type 'echo'"):
        validate_config({"target": {"type": "echo"}})
    assert "echo" not in TARGET_TYPES and "mentions_question" not in METRICS


def test_an_executor_from_an_installed_distribution_runs_the_experiment(site: Path, tmp_path: Path) -> None:
    """The API finds `--executor journal` in the registry (no branch on its name), starts it before the run exists,
    hands it the prepared run, and closes it; the run it makes is an ordinary finished, scored run."""
    journal = tmp_path / "journal.txt"
    done = ragdive(site, "run", str(experiment(tmp_path)), "--no-cache", "--executor", "journal", journal=journal)
    assert done.returncode == 0, done.stderr
    assert "journal: one run at a time, in this process" in done.stderr
    run = next((tmp_path / "runs").iterdir())
    assert journal.read_text().splitlines() == ["start", f"run {run.name} 2 conversations", "ended finished", "close"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["totals"]["conversations"] == 2
    scores = [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines()]
    assert {s["metric"] for s in scores} == {"correctness", "mentions_question"} and all(
        s["value"] is not None for s in scores
    )


def test_a_plug_in_executor_that_is_not_distributed_refuses_shards(site: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.txt"
    done = ragdive(site, "run", str(experiment(tmp_path)), "--executor", "journal", "--shards", "2", journal=journal)
    assert done.returncode == 2 and "--shards is for --executor ray" in done.stderr
    assert not journal.exists() and not (tmp_path / "runs").exists()
    done = ragdive(site, "run", str(experiment(tmp_path)), "--executor", "journl", journal=journal)
    assert done.returncode == 2 and "choose local or ray or journal (did you mean `journal`?)" in done.stderr
