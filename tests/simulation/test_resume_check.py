"""What --resume compares: the settings that decide the conversations must be the run's own."""

from __future__ import annotations

from ragdive.config import ExperimentConfig
from ragdive.redaction import redact
from ragdive.simulation.resume_check import differences

BASE = {
    "seed": 1,
    "models": {"default": "scripted/a", "judge": {"model": "openai/x", "api_key": "sk-secret"}},
    "corpus": {"path": "kb"},
    "simulation": {"conversations": 4, "max_turns": 3, "concurrency": 2},
    "target": {"type": "http", "url": "http://h/ask", "headers": {"Authorization": "Bearer t"}},
}


def config(**changes: object) -> ExperimentConfig:
    data = {**BASE}
    for path, value in changes.items():
        section, _, name = path.partition("__")
        data[section] = {**data[section], name: value} if name else value  # type: ignore[dict-item]
    return ExperimentConfig.model_validate(data)


def stored() -> dict:
    return redact(config().model_dump(mode="json"))  # as the manifest holds it: secrets masked


def test_pacing_pricing_and_the_judge_may_change_but_not_what_decides_the_conversations() -> None:
    same = config(simulation__concurrency=8, budget={"max_tokens": 10}, output_dir="elsewhere")
    assert differences(stored(), same) == []  # the masked Authorization header compares equal to the real one
    assert differences(stored(), config(simulation__conversations=6)) == []  # more conversations extend the run
    judge = {"default": "scripted/a", "judge": {"model": "openai/y"}}
    assert differences(stored(), config(models=judge)) == []
    changed = config(corpus__path="other-kb", simulation__max_turns=5, target__url="http://h/v2")
    assert differences(stored(), changed) == [
        "corpus.path (run: 'kb', config: 'other-kb')",
        "simulation.max_turns (run: 3, config: 5)",
        "target.url (run: 'http://h/ask', config: 'http://h/v2')",
    ]
    fewer = differences(stored(), config(simulation__conversations=2))
    user = differences(stored(), config(models={"default": "scripted/a", "user": "scripted/b"}))
    assert fewer == ["simulation.conversations (run: 4, config: 2)"]
    assert user == ["models (user) (run: 'scripted/a', config: 'scripted/b')"]
