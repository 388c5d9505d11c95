"""What the evaluator needs from a judge, whatever computes the verdicts: ragdive's own `Judge` (prompt files
through the model layer) or the Ragas engine (Ragas's prompts, its own client). Either implements this honestly;
neither pretends to be the other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..models import Model
    from ..records import Usage


@runtime_checkable
class JudgeProtocol(Protocol):
    @property
    def name(self) -> str:
        """The judge model, as recorded in the manifest's models."""

    calls: int
    """Judge requests made (successful or not)."""
    failures: int
    """Requests that ended in a failed judgement."""

    @property
    def usage(self) -> Usage | None:
        """Tokens and cost spent so far, or None when this judge cannot know (its calls bypass the model layer)."""

    @property
    def local_models(self) -> list[Model]:
        """ragdive models behind this judge, for the local-model self-check (none for an engine of its own)."""

    async def aclose(self) -> None:
        """Release clients and workers; called once, when the evaluation is over."""
