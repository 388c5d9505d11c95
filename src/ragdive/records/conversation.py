from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, model_validator

from ._base import Record, utc_now


class QuestionType(StrEnum):
    INITIAL = "initial"
    FOLLOW_UP = "follow-up"
    CLARIFICATION = "clarification"
    CORRECTION = "correction"
    COMPARATIVE = "comparative"
    UNKNOWN = "unknown"
    """Only in imported runs whose source did not say (or named a type ragdive does not know): never drafted, never
    asked of a generator, and kept apart from the five real types in every table."""


SIMULATED_TYPES = tuple(t for t in QuestionType if t is not QuestionType.UNKNOWN)
"""The types a simulated user may draft."""


class FailedCheck(StrEnum):
    """Categories a validator can reject a draft for."""

    RAG_INPUT_NOT_CONNECTED = "rag_input_not_connected"
    NOT_STANDALONE = "not_standalone"
    QUESTION_INCONSISTENT = "question_inconsistent"
    GROUND_TRUTH_UNSUPPORTED = "ground_truth_unsupported"
    WRONG_TYPE = "wrong_type"
    DOCUMENT_MENTIONED = "document_mentioned"
    EVIDENCE_NOT_IN_DOCUMENT = "evidence_not_in_document"
    OTHER = "other"
    """Only in imported rejections: a category the source named that none of the above is (its name is kept in
    the rejection's ``source_categories``). ragdive's own validator never gives it."""


class Usage(Record):
    """Token usage of one or more LLM calls."""

    prompt_tokens: int = 0
    """Tokens sent."""
    completion_tokens: int = 0
    """Tokens received."""
    cost_usd: float | None = None
    """Cost when every call's price was known; None means unknown, never free."""
    provider_cached_tokens: int = 0
    """Of prompt_tokens, those the provider served from its prompt cache (a prefix it had already seen: OpenAI's
    usage.prompt_tokens_details.cached_tokens, DeepSeek's prompt_cache_hit_tokens, Anthropic's
    cache_read_input_tokens); 0 when the provider does not say."""

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=cost,
            provider_cached_tokens=self.provider_cached_tokens + other.provider_cached_tokens,
        )


class TurnDraft(Record):
    """What the conversation generator proposes for the next user turn."""

    rag_input: str
    """The message sent to the target; after turn 1 it may depend on the conversation ("and when did he die?")."""
    standalone_question: str
    """The same question, self-contained; equals rag_input in turn 1."""
    ground_truth: str
    """The answer according to the source document(s)."""
    question_type: QuestionType
    """initial, follow-up, clarification, correction or comparative."""
    evidence: list[str] = Field(default_factory=list)
    """Verbatim quotes from the document(s) that support the ground truth."""
    refers_to_turn: int | None = None
    """Index of an earlier turn this one builds on, if any."""
    unanswerable: bool = False
    """A probe the document does not answer; ground truth is then "not in the knowledge base"."""


class Verdict(Record):
    """The validator's decision on one draft."""

    valid: bool
    """Accepted as is."""
    reason: str = ""
    """Why, in a sentence or two; sent back to the generator on rejection."""
    failed_checks: list[FailedCheck] = Field(default_factory=list)
    """Categories of failure (empty when valid)."""
    checked_by: Literal["deterministic", "llm"] = "llm"
    """Whether the cheap deterministic checks or the validator LLM decided."""


class Attempt(Record):
    """One draft and the verdict on it; a turn keeps all its attempts."""

    draft: TurnDraft
    """The generator's draft."""
    verdict: Verdict
    """The validator's verdict on it."""


class Context(Record):
    """One retrieved passage the target used for its answer."""

    text: str
    """Passage text."""
    id: str | None = None
    """Chunk or document id, when the target reports one."""
    source: str | None = None
    """Document id, path or URL the passage came from."""
    score: float | None = None
    """Retriever score, when reported."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """What else the source said about the passage (url, title...), kept as given."""


class Citation(Record):
    """One passage the target cited for (part of) its answer, from a `citations` field of its reply."""

    context: int
    """1-based rank of the cited passage among the turn's returned contexts."""
    sentence: str | None = None
    """The answer's sentence (or span) the citation is for; None: the whole answer."""


class TargetReply(Record):
    """What the RAG system under test answered."""

    answer: str
    """The answer text."""
    contexts: list[Context] = Field(default_factory=list)
    """Retrieved contexts, in rank order."""
    latency_s: float = 0.0
    """Wall time of the call."""
    raw: Any = None
    """The raw response body (parsed JSON when possible), for debugging."""
    citations: list[Citation] | None = None
    """Passages the target says it cited, when it returns a citations field (None: it returned none; `[n]`
    markers in the answer are read by the citation metrics themselves)."""


class Turn(TurnDraft):
    """One finished turn: the accepted draft (the fields of TurnDraft), every attempt, and the target's reply."""

    index: int
    """0-based turn index within the conversation."""
    unanswerable: bool | None = False  # type: ignore[assignment]
    """The question was a deliberate probe the knowledge base does not answer; None: unknown (an imported turn
    whose source did not say; a draft always says)."""
    attempts: list[Attempt] = Field(default_factory=list)
    """Every draft with its verdict, the accepted one last."""
    validator_overruled: bool | None = False
    """True when attempts ran out and the last draft was accepted anyway; None: unknown (an imported turn whose
    source kept no validator history)."""
    generation_errors: list[str] = Field(default_factory=list)
    """Attempts where the user model's answer was not a readable draft (each counts against max_attempts)."""
    answer: str | None = None
    """Target's answer; None when the target failed (see error)."""
    contexts: list[Context] = Field(default_factory=list)
    """Target's retrieved contexts."""
    latency_s: float | None = None
    """Target latency."""
    citations: list[Citation] | None = None
    """The target's citations field for this answer, when it returns one (see TargetReply.citations)."""
    error: str | None = None
    """Target failure on this turn, kept verbatim."""
    usage: dict[str, Usage] = Field(default_factory=dict)
    """LLM usage spent on this turn, by role (user, validator, target)."""
    origin: Literal["fixed", "prefix"] | None = None
    """A steered conversation's planned turn (simulation.plans): fixed (a script's turn, sent to the target as
    written) or prefix (a real message and its answer, recorded as given, never sent). None: drafted by the
    simulated user."""
    instruction: str | None = None
    """The plan's instruction to the simulated user for this drafted turn ("correct the assistant")."""


class Conversation(Record):
    """One simulated conversation: a line of conversations.jsonl."""

    id: str
    """Unique within the run; stable across resumes (derived from run seed and index)."""
    index: int = 0
    """Position in the run's plan."""
    persona: str
    """Persona name."""
    document_ids: list[str]
    """Seed document(s)."""
    seed: int
    """Seed of this conversation, derived from the run seed."""
    turns: list[Turn] = Field(default_factory=list)
    """Finished turns, in order."""
    status: Literal["finished", "ended_early", "error"] = "finished"
    """finished: reached max turns, or the simulated user ended it (stop_reason user); ended_early: the validator
    loop gave up or the target failed (see end_reason); error: something else failed (see error)."""
    error: str | None = None
    """What failed, when status is error."""
    end_reason: str | None = None
    """Why the conversation ended before max turns (status ended_early)."""
    stop_reason: Literal["max_turns", "user"] | None = None
    """How a finished conversation stopped: max_turns (it has simulation.max_turns turns) or user (the simulated
    user ended it, simulation.stop: satisfied; see user_end_reason). None: not finished (see end_reason and error),
    or not recorded (imported runs; runs written before schema version 6, whose finished conversations all
    reached max_turns)."""
    user_end_reason: str | None = None
    """The simulated user's own reason for ending the conversation (stop_reason user)."""
    started: datetime = Field(default_factory=utc_now)
    """When the conversation started."""
    finished: datetime = Field(default_factory=utc_now)
    """When it was written."""


def rejection_id(conversation_id: str, turn_index: int | None, attempt: int | None) -> str:
    """A rejection's stable id: a resumed run that redoes a conversation gives its rejections the same ids, so
    readers keep one line per id (see ragdive.store.latest)."""
    return f"{conversation_id}/t{turn_index}/a{attempt}"


class Rejection(Record):
    """One validator rejection: a line of rejections.jsonl."""

    id: str = ""
    """Stable id from (conversation, turn, attempt); lines written before ids existed get the same one on read."""

    conversation_id: str
    """Conversation it happened in."""
    turn_index: int | None
    """Turn being drafted; None when unknown (an imported validator log that does not say)."""
    attempt: int | None = None
    """1-based attempt number; None when unknown (an imported validator log)."""
    categories: list[FailedCheck]
    """Failed checks."""
    source_categories: list[str] = Field(default_factory=list)
    """Imported rejections: the categories as the source wrote them (empty for ragdive's own)."""
    reason: str
    """Validator's reason."""
    checked_by: Literal["deterministic", "llm"] = "llm"
    """Which stage rejected it."""
    draft: TurnDraft
    """The rejected draft."""

    @model_validator(mode="after")
    def _derive_id(self) -> Rejection:
        if not self.id:
            self.id = rejection_id(self.conversation_id, self.turn_index, self.attempt)
        return self
