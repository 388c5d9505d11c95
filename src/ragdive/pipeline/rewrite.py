"""The user model's stand-alone rewrites of an imported chat log (`ragdive import chatlog --rewrite`): the model
built from the resolved config (``--model user=...`` applied by the API) on its cache and budget, closed when
done."""

from __future__ import annotations

from ..config import ExperimentConfig
from ..models import ModelContext, models_for_roles
from ..records import Conversation
from ..simulation.rewrite import RewriteOutcome, rewrite_standalone


async def rewrite_conversations(
    conversations: list[Conversation], config: ExperimentConfig
) -> tuple[RewriteOutcome, str]:
    """Rewrite in place; returns what happened and the user model's name."""
    context = ModelContext.from_config(config)
    try:
        model = models_for_roles(config.models, ["user"], context=context)["user"]
        try:
            outcome = await rewrite_standalone(model, conversations, concurrency=config.simulation.concurrency)
        finally:
            await model.aclose()
        return outcome, model.name
    finally:
        context.close()
