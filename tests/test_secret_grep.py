"""Secrets are masked by value wherever ragdive writes or prints them.

One secret is planted in each place a user puts one (a ${VAR}, an api_key field, a URL's password, its ?code= and
?sig=, a token in its path, Cookie and X-Auth headers, a body field named auth), and the system under test and the
judge echo every one of them back in their text (as a proxy's 401 echoes the key). Then every output is grepped:
the run's files, the model cache, the report, every export, the annotation sheets, and the terminal of every
command, with and without --debug. Real `ragdive` processes: the terminal is what a user sees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragdive.models import Message
from tests.evaluation.scripted_judge import rule_judge
from tests.pipeline.helpers import accept, write_experiment

ROOT = Path(__file__).resolve().parents[1]

SECRETS = {
    "env": "plant-env-5f1c9a77e0",
    "api_key": "plant-apikey-83be21d4c6",
    "password": "plant-pass-7a0d5e33",
    "code": "plant-code-1e9f0b2c44",
    "sig": "plant-sig-d04a6c19b8",
    "path": "pathtoken9c3e1a7b5d2f8e6a4c0b",
    "cookie": "plant-cookie-4b7e2d9f01",
    "xauth": "plant-xauth-62c8e0f3a5",
    "auth": "plant-bodyauth-0f5d8b3e2c",
}
ECHO = " | ".join(f"{name}={value}" for name, value in SECRETS.items())


def echo_answer(message: str) -> dict[str, Any]:
    """A system under test that puts every secret in its answer and its context, control characters included."""
    return {"answer": f"Answer. Upstream said: {ECHO} Bearer {SECRETS['api_key']}", "contexts": [f"ctx {ECHO}"]}


async def echo_judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    """The rule judge, its reasons quoting every secret (a proxy's 401 text that echoes the key)."""
    verdict = rule_judge(messages, schema)
    if isinstance(verdict, dict) and "reason" in verdict:
        verdict = {**verdict, "reason": f"401 from proxy: Bearer {SECRETS['api_key']}; {ECHO}"}
    return verdict


def validator(messages: list[Message]) -> dict[str, Any]:
    return accept(messages)


def ragdive(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGDIVE_PLANTED": SECRETS["env"]}
    return subprocess.run(
        [sys.executable, "-m", "ragdive", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=ROOT,
    )


def found_in(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [name for name, value in SECRETS.items() if value.encode() in data]


def planted_config(tmp_path: Path) -> Path:
    config = write_experiment(tmp_path, judge_model="")
    url = (
        f"https://bob:{SECRETS['password']}@fn.example/api/{SECRETS['path']}/v1"
        f"?code={SECRETS['code']}&sig={SECRETS['sig']}"
    )
    judge = (
        "  judge:\n"
        "    model: scripted/judge\n"
        "    options: {responder: 'tests.test_secret_grep:echo_judge'}\n"
        f"    api_key: {SECRETS['api_key']}\n"
        f"    base_url: '{url}'\n"
        "    params:\n"
        "      user: ${RAGDIVE_PLANTED}\n"
        f"      headers: {{Cookie: {SECRETS['cookie']}, X-Auth: {SECRETS['xauth']}}}\n"
        f"      auth: {SECRETS['auth']}\n"
    )
    text = config.read_text().replace("models:\n", "models:\n" + judge, 1)
    text = text.replace("tests.pipeline.helpers:answer", "tests.test_secret_grep:echo_answer")
    config.write_text(text)
    return config


def test_no_planted_secret_reaches_any_output(tmp_path: Path) -> None:
    config = planted_config(tmp_path)
    leaks: dict[str, list[str]] = {}

    def check(label: str, text: str | bytes) -> None:
        if found := found_in(text):
            leaks[label] = found

    checked = ragdive("config", "check", config)
    check("config check", checked.stdout + checked.stderr)
    done = ragdive("run", config)
    assert done.returncode == 0, done.stderr
    check("run terminal", done.stdout + done.stderr)
    run = Path(done.stdout.strip().splitlines()[-1])
    for command in (("runs", "show", run), ("analyze", run), ("report", run)):
        shown = ragdive(*command)
        assert shown.returncode == 0, shown.stderr
        check(" ".join(map(str, command[:2])), shown.stdout + shown.stderr)
    exports = tmp_path / "exports"
    exported = ragdive("export", run, "-o", exports, "--format", "csv,ragas,deepeval")
    assert exported.returncode == 0, exported.stderr
    sheets = tmp_path / "sheets"
    sheets.mkdir()
    annotated = ragdive("annotate", "export", run, "-o", sheets / "sheet.csv", "--sample", "4")
    assert annotated.returncode == 0, annotated.stderr
    # failures, with and without --debug (a traceback quotes the config it failed on)
    for debug in ((), ("--debug",)):
        failed = ragdive(*debug, "run", config, "--resume", tmp_path / "no-such-run")
        assert failed.returncode == 2
        check(f"failed run {debug}", failed.stdout + failed.stderr)
        broken = tmp_path / "broken.yaml"
        # a validation error (a second `simulation:` key would now stop at the loader as a repeated key)
        broken.write_text(config.read_text().replace("max_turns: 2", "max_turns: [1]", 1))
        bad = ragdive(*debug, "config", "check", broken)
        assert bad.returncode == 2 and "max_turns" in bad.stdout + bad.stderr, bad.stderr
        check(f"bad config {debug}", bad.stdout + bad.stderr)

    # sanity: the secrets did travel (the judge's reasons, the answers), so the grep could have found them
    assert "401 from proxy: Bearer ***" in (run / "evaluations.jsonl").read_text()
    for folder in (run, tmp_path / "cache", exports, sheets):
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert files, folder
        for path in files:
            check(str(path.relative_to(tmp_path)), path.read_bytes())
    assert leaks == {}


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("see https://docs.example/page?q=tokens for details", "q=tokens"),
        ("max_tokens: 512 and prompt_tokens 10", "max_tokens: 512"),
        ('{"answer":"the author wrote it","keywords":"x"}', "the author wrote it"),
    ],
)
def test_redaction_leaves_ordinary_text_alone(text: str, kept: str) -> None:
    from ragdive.redaction import redact_text

    assert kept in redact_text(text)


def test_a_configured_url_s_token_segment_is_learned_but_a_long_folder_name_is_not() -> None:
    """A sqlite or file URI names folders, which can be long words with a digit (a pytest folder, a dated
    project): masking them hid the run directory ragdive printed. A token-like segment still is a secret."""
    from ragdive.redaction import redact_text, register_config_secrets

    folder = "my_evaluation_project_results_2026"
    token = "abcdEFGH1234ijklMNOP5678qrst"
    register_config_secrets({"mlflow_tracking_uri": f"sqlite:////home/me/{folder}/mlflow.db"})
    register_config_secrets({"url": f"https://hooks.example/services/{token}"})
    shown = redact_text(f"run written to /home/me/{folder}/runs/r1; hook {token}")
    assert folder in shown and token not in shown
