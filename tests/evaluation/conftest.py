from __future__ import annotations

import pytest

from ragdive.models import ScriptedModel, registry

from .scripted_judge import rule_judge


@pytest.fixture(autouse=True)
def rulejudge_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rulejudge/<name>`: the prompt-reading scripted judge, reachable from the CLI's --model; registered only
    for the duration of each evaluation test so other tests see the registry as shipped."""
    monkeypatch.setitem(registry._registered, "rulejudge", lambda name, **_: ScriptedModel(name, responder=rule_judge))
