from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ._base import Section


class SimulationConfig(Section):
    """How conversations are simulated."""

    conversations: int = Field(default=10, ge=1)
    """Conversations to simulate."""
    max_turns: int = Field(default=5, ge=1)
    """Turns per conversation (with stop: satisfied, the most a conversation has)."""
    stop: Literal["fixed", "satisfied"] = "fixed"
    """When a conversation ends. fixed (the paper's): after max_turns turns. satisfied: from turn min_turns + 1 on,
    the simulated user may end it instead of drafting the next turn, with a reason, once its questions are answered
    (recorded per conversation: stop_reason user, user_end_reason); never on an unanswerable probe's turn. Needs a
    chat-profile user model. fixed sends exactly the prompts and schemas it always did."""
    plans: str | None = None
    """A file of conversation plans (YAML or JSONL) that fix turns: a prefix of real messages, then a script of
    fixed turns and `simulate` steps (optionally with an instruction), per seed document set or for all
    conversations (see the README's Steered conversations). None: every turn is simulated."""
    min_turns: int = Field(default=2, ge=1)
    """With stop: satisfied, the turns every conversation has before the user may end it (at most max_turns);
    ignored with stop: fixed."""
    personas: list[str] = Field(default_factory=lambda: ["precise"], min_length=1)
    """Persona names, used in rotation; built-ins (precise, attentive, confused, skeptical, explorer) or names
    from persona_files."""
    persona_files: list[str] = Field(default_factory=list)
    """YAML files with custom personas (a mapping, a list of mappings, or {personas: [...]})."""
    max_attempts: int = Field(default=3, ge=1)
    """Drafts per turn before the validator loop gives up."""
    on_exhausted: Literal["accept", "end"] = "accept"
    """accept: keep the last draft, marked validator_overruled; end: end the conversation early."""
    history_window: int | None = Field(default=None, ge=1)
    """Turns of history the generator and validator see (None: all)."""
    unanswerable_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of turns after the first that probe for something the document does not say."""
    concurrency: int = Field(default=64, ge=1)
    """Conversations in flight at once; turns within a conversation are always in order. It is also the most
    requests the target (your RAG system) gets at once. Each model's own `max_concurrency` caps its calls. A
    conversation waits on one of user, validator and target at a time, so 64 conversations keep about 21 calls in
    flight per model, well within the default 64 of each: fewer left a run's wall time bound by its conversations'
    chains of calls rather than by the API (issue 13: 200 x 5 at L = 0.1 s, 12.1 s at 32 and 8.6 s at 64)."""
    max_document_chars: int | None = Field(default=None, ge=200)
    """Cut each seed document to this many characters before showing it to the models (small-context models);
    evidence is then checked against the part that was shown."""
    evidence_threshold: float = Field(default=0.85, gt=0, le=1)
    """Share of an evidence quote's words that must appear, in order, in a passage of the document for the quote
    to count as found (tolerates small copying slips; 1.0 demands an exact normalised match)."""

    @model_validator(mode="after")
    def _min_turns_fit(self) -> SimulationConfig:
        if self.stop == "satisfied" and self.min_turns > self.max_turns:
            raise ValueError(
                f"min_turns ({self.min_turns}) is more than max_turns ({self.max_turns}): with stop: satisfied a "
                "conversation has at least min_turns turns"
            )
        return self
