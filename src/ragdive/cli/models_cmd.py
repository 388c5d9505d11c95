"""`ragdive models check MODEL`: one small structured request, to see that a model is reachable and usable."""

from __future__ import annotations

import typer
from pydantic import BaseModel

from ..config.models import ModelSpec
from ..errors import ModelOutputError
from ..models import Message, get_model, known_providers
from ..models.selfcheck import check_local_models
from ..sync_edge import run_loop
from .display import out

app = typer.Typer(help="Work with models (provider/model).", no_args_is_help=True)


class CheckAnswer(BaseModel):
    """What the check asks for: a trivially known fact, so a wrong shape is the model's doing."""

    capital: str
    country: str


# One worked example first: small base models follow a pattern far better than an instruction.
CHECK_MESSAGES = [
    Message(role="system", content="You answer with JSON only."),
    Message(role="user", content="What is the capital of Germany?"),
    Message(role="assistant", content='{"capital": "Berlin", "country": "Germany"}'),
    Message(role="user", content="What is the capital of France?"),
]


@app.command("check")
def check_cmd(
    model: str = typer.Argument(..., help="provider/model, e.g. openai/gpt-4o-mini or llamacpp/default."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="Environment variable holding the key."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds for the call."),
) -> None:
    """Send one small structured request to MODEL; print latency, tokens and whether structured output worked."""
    spec = ModelSpec(model=model, base_url=base_url, api_key_env=api_key_env, timeout_s=timeout, max_retries=1)
    outcome = run_loop(_check(spec))
    for line in outcome.lines:
        out.print(line, markup=False)
    if not outcome.structured_ok:
        raise typer.Exit(1)


class _Outcome:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.structured_ok = False


async def _check(spec: ModelSpec) -> _Outcome:
    out = _Outcome()
    llm = get_model(spec, role="check")  # no cache: the point is to reach the model
    try:
        # a local model: the same one-decode self-check a run does first (a broken build raises ModelCrashed)
        for check in await check_local_models([llm]):
            out.lines.append(f"self-check: ok, decoded {check.text!r} in {check.seconds:.2f} s in a worker process")
        try:
            completion = await llm.generate(CHECK_MESSAGES, schema=CheckAnswer)
        except ModelOutputError as exc:
            out.lines += [
                f"model: {spec.model}",
                "structured output: FAILED (the answer did not match the schema after repair and one retry)",
                f"raw answer: {exc.raw[:300]!r}",
            ]
            return out
        out.structured_ok = True
        usage = completion.usage
        cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.6f}"
        out.lines += [
            f"model: {spec.model}",
            f"latency: {completion.latency_s:.2f} s",
            f"tokens: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion (cost {cost})",
            f"structured output: ok {completion.parsed.model_dump_json()}",
        ]
        mode = getattr(llm.backend, "structured_mode", None)
        if mode:
            out.lines.append(f"structured method: {mode}")
    finally:
        await llm.aclose()
    return out


@app.command("providers")
def providers_cmd() -> None:
    """List the model providers ragdive knows (built-in and installed plug-ins)."""
    for name in known_providers():
        out.print(name, markup=False)
