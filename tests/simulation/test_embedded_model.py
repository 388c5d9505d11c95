"""`ragdive simulate` with the packaged embedded model (base Gemma-3-270M) playing user and validator for real.

Its drafts are weak; what is tested is that weak real output becomes rejections, failed attempts and overruled or
ended conversations, and the run finishes with every conversation written. Skips until the `llamacpp` provider
(the model layer's embedded backend) is registered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.models import known_providers
from ragdive.store import RunStore

from .test_cli_simulate import write_setup

pytestmark = pytest.mark.slow


def test_simulate_with_the_embedded_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if "llamacpp" not in known_providers():
        pytest.skip("the llamacpp model provider is not available")
    config = write_setup(tmp_path, max_attempts=2, max_document_chars=600, personas=["precise"], concurrency=1)
    text = config.read_text().replace(
        "models: {user: simtest/user, validator: simtest/validator}",
        "models: {default: {model: llamacpp/default, params: {max_tokens: 200, temperature: 0.7}}}",
    )
    config.write_text(text)
    code = main(["simulate", str(config), "--conversations", "1", "--max-turns", "2"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    store = RunStore.open(Path(captured.out.strip().splitlines()[-1]))
    manifest = store.read_manifest()
    conversations = store.conversations().records
    assert manifest.status == "finished" and len(conversations) == 1
    assert all(c.status in ("finished", "ended_early") for c in conversations), [c.error for c in conversations]
    assert manifest.totals.prompt_tokens > 0
    for conv in conversations:
        for turn in conv.turns:
            assert 1 <= len(turn.attempts) + len(turn.generation_errors) <= 2
            assert turn.validator_overruled == (not turn.attempts[-1].verdict.valid)
