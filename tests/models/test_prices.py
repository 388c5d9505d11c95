"""Prices come from the maintained price library (genai-prices) for a provider's own endpoint, `price:` in the
model spec overrides it, and a cost budget over a model with no price is refused with one line (by config check
and before any call of a run), unless the user sets a price."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.config import BudgetConfig, ModelSpec
from ragdive.errors import ConfigError
from ragdive.models import get_model
from ragdive.models.context import ModelContext
from ragdive.models.usage import price_for


def test_library_prices_and_the_override() -> None:
    mini = price_for(ModelSpec(model="openai/gpt-4o-mini"))
    assert mini is not None and mini.input_per_1m == pytest.approx(0.15) and mini.output_per_1m == pytest.approx(0.6)
    assert mini.cached_input_per_1m == pytest.approx(0.075)  # the library's cached-input rate, half the input's
    # a model outside the old hand-written table of six
    assert price_for(ModelSpec(model="litellm/anthropic/claude-3-5-sonnet")) is not None
    assert price_for(ModelSpec(model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1")) is None  # not OpenAI
    assert price_for(ModelSpec(model="openai/no-such-model")) is None
    own = ModelSpec.model_validate({"model": "openai/gpt-4o-mini", "price": {"input_per_1m": 1, "output_per_1m": 2}})
    assert own.prices is not None and price_for(own) == own.prices
    assert price_for(ModelSpec(model="llamacpp/default")) is not None


def test_cached_prompt_tokens_are_priced_at_the_cached_rate() -> None:
    from ragdive.config.models import Prices
    from ragdive.models.usage import cost_of
    from ragdive.records import Usage

    usage = Usage(prompt_tokens=1000, completion_tokens=100, provider_cached_tokens=800)
    assert cost_of(usage, Prices(input_per_1m=1, output_per_1m=2, cached_input_per_1m=0.1)) == pytest.approx(
        (200 * 1 + 800 * 0.1 + 100 * 2) / 1e6
    )
    # no cached rate given: the input rate (no discount assumed); no price: unknown, never 0
    assert cost_of(usage, Prices(input_per_1m=1, output_per_1m=2)) == pytest.approx((1000 + 200) / 1e6)
    assert cost_of(usage, None) is None


def test_a_cost_budget_over_an_unpriced_model_is_refused_before_any_call(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    context = ModelContext(budget=BudgetConfig(max_cost_usd=1.0))
    with pytest.raises(ConfigError, match=r"models.judge \(scripted/j\) has no known price"):
        get_model("scripted/j", role="judge", context=context)
    priced = ModelSpec.model_validate({"model": "scripted/j", "price": {"input_per_1m": 1, "output_per_1m": 1}})
    assert get_model(priced, role="judge", context=context).price is not None
    assert get_model("scripted/j", role="judge", context=ModelContext(budget=BudgetConfig(max_tokens=10))).price is None

    config = tmp_path / "exp.yaml"
    config.write_text(
        "models:\n  default: scripted/x\n  judge:\n    model: openai/local\n    base_url: http://127.0.0.1:9/v1\n"
        "budget:\n  max_cost_usd: 0.5\n",
        encoding="utf-8",
    )
    assert main(["config", "check", str(config)]) != 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "budget.max_cost_usd is set but" in text and "models.judge (openai/local)" in text
