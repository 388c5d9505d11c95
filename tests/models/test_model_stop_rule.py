"""The model stop rule (the twin of the target's): a role whose model is refused (401) stops the run at once, one
that fails N requests in a row stops it after N; the line names role, model, HTTP status and the credential's
source as configured. A model that succeeds in between is flaky, not down, and never stops a run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.config.models import ModelSpec
from ragdive.errors import ModelError, ModelStopped
from ragdive.models import Message, get_model
from ragdive.models.context import ModelContext
from ragdive.testing import Fault, StubServer

from ..evaluation.test_evaluator import make_run
from ..evaluation.test_judge_over_http import reply


def test_a_refused_judge_key_stops_the_run_naming_role_model_status_and_credential(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_run(tmp_path / "runs", n=3, turns=2)
    monkeypatch.setenv("JUDGE_KEY", "wrong-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with StubServer(reply=reply, api_key="right-key") as server:
        config = tmp_path / "exp.yaml"
        config.write_text(
            "models:\n  judge:\n    model: openai/stub-judge\n"
            f"    base_url: {server.base_url}\n    api_key: ${{JUDGE_KEY}}\n    backoff_s: 0.01\n"
            "evaluation:\n  concurrency: 1\ncache:\n  enabled: false\n",
            encoding="utf-8",
        )
        code = main(["evaluate", str(store.path), "--config", str(config)])
        requests = server.request_count
    err = capsys.readouterr().err
    assert code != 0
    assert "judge model openai/stub-judge stopped the run" in err and "HTTP 401" in err
    assert "credential: ${JUDGE_KEY} (api_key in the model's config)" in err and "OPENAI_API_KEY" not in err
    assert "wrong-key" not in err  # the source, never the key
    assert requests == 1  # refused once is refused: no other item asked
    assert not any(s.scored is False and "401" in (s.unscored_reason or "") for s in store.scores().records)


def _model(server: StubServer, stop_after: int) -> tuple[ModelContext, object]:
    context = ModelContext()
    spec = ModelSpec(
        model="openai/stub",
        base_url=server.base_url,
        api_key="k",
        max_retries=0,
        stop_after_failures=stop_after,
    )
    return context, get_model(spec, role="validator", context=context)


def test_n_failures_without_one_success_stop_a_role_and_one_success_means_flaky_not_down() -> None:
    ask = [Message(role="user", content="hi")]

    async def calls(model: object, n: int) -> list[str]:
        out = []
        for _ in range(n):
            try:
                await model.generate(ask)  # type: ignore[attr-defined]
                out.append("ok")
            except ModelStopped as exc:
                out.append(f"stopped: {exc}")
            except ModelError:
                out.append("failed")
        await model.aclose()  # type: ignore[attr-defined]
        return out

    with StubServer() as server:
        server.plan(*[Fault.error(500)] * 2, Fault.ok(), *[Fault.error(500)] * 3)
        _, flaky = _model(server, stop_after=3)
        # it answered once: later failures are a flaky model's, never a stop (in flight, failures finish last)
        assert asyncio.run(calls(flaky, 6)) == ["failed", "failed", "ok", "failed", "failed", "failed"]
        server.plan(*[Fault.error(503)] * 3)
        _, down = _model(server, stop_after=3)
        got = asyncio.run(calls(down, 4))
        before = server.request_count
    assert got[:2] == ["failed", "failed"] and got[2].startswith("stopped: ")
    assert "validator model openai/stub" in got[2] and "3 requests without one success" in got[2]
    assert "HTTP 503" in got[2]
    assert "credential: api_key in the model's config" in got[2]
    assert got[3] == got[2]  # every later call of the role: the same line, no request sent
    assert before == 6 + 3


def test_calls_waiting_for_a_slot_when_the_key_is_refused_send_nothing() -> None:
    """One slot, five calls at once: the first is refused (401) and the four that waited for its slot must not be
    sent once they get it (the rule is checked again with the slot in hand, not only before waiting)."""
    ask = [Message(role="user", content="hi")]

    async def five_at_once(model: object) -> list[BaseException | object]:
        try:
            return await asyncio.gather(*(model.generate(ask) for _ in range(5)), return_exceptions=True)  # type: ignore[attr-defined]
        finally:
            await model.aclose()  # type: ignore[attr-defined]

    with StubServer(api_key="right-key") as server:
        spec = ModelSpec(model="openai/stub", base_url=server.base_url, api_key="wrong-key", max_concurrency=1)
        outcomes = asyncio.run(five_at_once(get_model(spec, role="judge", context=ModelContext())))
        sent = server.request_count
    assert all(isinstance(o, ModelStopped) for o in outcomes)
    assert sent == 1
