"""One conversation, turn by turn: draft -> validate (-> redraft, bounded) -> target answers.

What ends a conversation early (status ``ended_early``, ``end_reason`` set):
- the validator loop runs out of attempts with ``on_exhausted: end``, or no attempt produced a readable draft
  (there is nothing to accept, whatever ``on_exhausted`` says);
- the target fails on a turn (TargetError): the turn is kept with ``error`` set and no answer, and the
  conversation stops there. A conversation that goes on after a missing answer is no longer a natural dialogue,
  and a broken target would otherwise spend generator and validator calls on every remaining turn.

What ends a conversation before max_turns and keeps it ``finished`` (``stop_reason`` user): with
``stop: satisfied``, the simulated user may end it instead of drafting a turn once it has ``min_turns`` turns (never
on an unanswerable probe's turn: the probe plan decides those). Every other finished conversation has
``stop_reason`` max_turns. The probe draw is made for every turn the loop reaches, as under ``fixed``.

Any other exception is recorded on the conversation (status ``error``) with the turns finished so far. Only
BudgetExceeded and cancellation escape: the runner stops the run without writing a half-done conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import BudgetExceeded, ModelOutputError, ModelStopped
from ..models import Message
from ..records import Attempt, Conversation, Document, Persona, Rejection, Turn, TurnDraft, Usage
from ..records._base import utc_now
from ..targets import DialogueState, Target
from ..targets.watch import answer_turn
from .checks import DocumentIndex
from .generator import Generator, UserEnd, unreadable_messages
from .steering import Step
from .validator import Validator


@dataclass
class ConversationPlan:
    """What one conversation is about; a pure function of the run seed and the index (see runner.plan)."""

    index: int
    id: str
    seed: int
    persona: Persona
    documents: list[Document]
    shared_terms: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    """A steered conversation's planned turns, from the first (simulation.plans); the rest are simulated."""


@dataclass
class DialogueSettings:
    max_turns: int = 5
    max_attempts: int = 3
    on_exhausted: str = "accept"
    unanswerable_rate: float = 0.0
    stop: str = "fixed"
    """fixed: every conversation runs max_turns turns; satisfied: the user may end it after min_turns turns."""
    min_turns: int = 2

    def may_end(self, turn_index: int, probe: bool) -> bool:
        """Whether the user may end the conversation instead of drafting turn ``turn_index`` (0-based)."""
        return self.stop == "satisfied" and turn_index >= self.min_turns and not probe


class Observer:
    """Progress hooks (the CLI shows them); every method is optional."""

    def turn(self, conversation_id: str, turn: Turn) -> None: ...

    def rejection(self, rejection: Rejection) -> None: ...


@dataclass
class DialogueResult:
    conversation: Conversation
    rejections: list[Rejection]


@dataclass
class _TurnOutcome:
    draft: TurnDraft | None
    attempts: list[Attempt]
    generation_errors: list[str]
    usage: dict[str, Usage]
    overruled: bool = False
    user_end: UserEnd | None = None
    """The user ended the conversation instead of drafting this turn."""


async def run_dialogue(
    plan: ConversationPlan,
    *,
    generator: Generator,
    validator: Validator,
    target: Target,
    settings: DialogueSettings,
    observer: Observer | None = None,
    on_answered: Callable[[Conversation, Turn], None] | None = None,
) -> DialogueResult:
    """``on_answered(conversation, turn)``: told each turn once the target answered it (or failed on it); the turn is
    final from then on (the pipeline starts judging it while the conversation goes on)."""
    observer = observer or Observer()
    conversation = Conversation(
        id=plan.id,
        index=plan.index,
        persona=plan.persona.name,
        document_ids=[d.id for d in plan.documents],
        seed=plan.seed,
    )
    rejections: list[Rejection] = []
    rng = np.random.default_rng(plan.seed)  # decides which turns are unanswerable probes
    index = DocumentIndex(plan.documents)
    state = DialogueState(id=plan.id)
    try:
        await target.start(state)
        for turn_index in range(settings.max_turns):
            # never the first turn: a conversation opens with a question the knowledge base answers
            probe = turn_index > 0 and bool(rng.random() < settings.unanswerable_rate)
            step = plan.steps[turn_index] if turn_index < len(plan.steps) else None
            if step is not None and step.kind != "simulate":  # drawn above all the same: later probes stay put
                turn = await _planned_turn(plan, conversation, turn_index, step, validator, index, rejections, observer)
                if step.kind == "prefix":
                    assert step.answer is not None
                    state.history += [
                        Message(role="user", content=turn.rag_input),
                        Message(role="assistant", content=step.answer),
                    ]
                    conversation.turns.append(turn)
                    observer.turn(plan.id, turn)
                    if on_answered is not None:
                        on_answered(conversation, turn)
                    continue
                answered = await answer_turn(target, state, turn)
                conversation.turns.append(turn)
                observer.turn(plan.id, turn)
                if on_answered is not None:
                    on_answered(conversation, turn)
                if not answered:
                    conversation.status = "ended_early"
                    conversation.end_reason = f"the target failed on turn {turn_index + 1}: {turn.error}"
                    break
                continue
            # the user may end only once the plan's steps are behind it
            may_end = settings.may_end(turn_index, probe) and turn_index >= len(plan.steps)
            instruction = step.instruction if step is not None else None
            outcome = await _draft_turn(
                plan,
                conversation,
                turn_index,
                probe,
                generator,
                validator,
                index,
                settings,
                rejections,
                observer,
                may_end=may_end,
                instruction=instruction,
            )
            if outcome.user_end is not None:
                conversation.stop_reason = "user"
                conversation.user_end_reason = outcome.user_end.reason
                break
            if outcome.draft is None:
                conversation.status = "ended_early"
                conversation.end_reason = _exhausted_reason(turn_index, outcome)
                break
            turn = Turn(
                index=turn_index,
                **outcome.draft.model_dump(),
                attempts=outcome.attempts,
                validator_overruled=outcome.overruled,
                generation_errors=outcome.generation_errors,
                usage=outcome.usage,
                instruction=instruction,
            )
            answered = await answer_turn(target, state, turn)
            conversation.turns.append(turn)
            observer.turn(plan.id, turn)
            if on_answered is not None:
                on_answered(conversation, turn)
            if not answered:
                conversation.status = "ended_early"
                conversation.end_reason = f"the target failed on turn {turn_index + 1}: {turn.error}"
                break
        else:
            conversation.stop_reason = "max_turns"
    except (BudgetExceeded, ModelStopped):
        raise  # the run stops: no budget left, or a model that fails every call (crashed, refused, down)
    except Exception as exc:  # recorded on this conversation; the others go on
        conversation.status = "error"
        conversation.error = f"{type(exc).__name__}: {exc}"
    conversation.finished = utc_now()
    return DialogueResult(conversation=conversation, rejections=rejections)


async def _draft_turn(
    plan: ConversationPlan,
    conversation: Conversation,
    turn_index: int,
    probe: bool,
    generator: Generator,
    validator: Validator,
    index: DocumentIndex,
    settings: DialogueSettings,
    rejections: list[Rejection],
    observer: Observer,
    *,
    may_end: bool = False,
    instruction: str | None = None,
) -> _TurnOutcome:
    """The validator loop of one turn: at most ``max_attempts`` drafts, each rejected one sent back with its
    critique. Returns the accepted draft, the overruled last draft, or no draft (end the conversation)."""
    history = conversation.turns
    messages = generator.first_messages(
        persona=plan.persona,
        documents=plan.documents,
        history=history,
        turn_index=turn_index,
        probe=probe,
        shared_terms=plan.shared_terms,
        may_end=may_end,
        instruction=instruction,
    )
    outcome = _TurnOutcome(draft=None, attempts=[], generation_errors=[], usage={})
    for attempt in range(1, settings.max_attempts + 1):
        try:
            if may_end and not outcome.attempts:  # the user decides before its first checked draft, not after
                drafted, usage = await generator.draft_or_end(messages, seed=plan.seed)
                if isinstance(drafted, UserEnd):
                    _add_usage(outcome.usage, "user", usage)
                    outcome.user_end = drafted
                    return outcome
                draft = drafted
            else:
                draft, usage = await generator.draft(
                    messages, probe=probe, seed=plan.seed, documents=plan.documents, turn_index=turn_index
                )
        except ModelOutputError as exc:
            message = str(exc).splitlines()[0][:500] if str(exc) else type(exc).__name__
            outcome.generation_errors.append(message)
            messages = messages + unreadable_messages(getattr(exc, "raw", "") or "", message, turn_index)
            continue
        _add_usage(outcome.usage, "user", usage)
        verdict, v_usage = await validator.check(
            draft,
            turn_index=turn_index,
            persona=plan.persona,
            documents=plan.documents,
            history=history,
            index=index,
            seed=plan.seed,
            instruction=instruction,
        )
        if v_usage is not None:
            _add_usage(outcome.usage, "validator", v_usage)
        outcome.attempts.append(Attempt(draft=draft, verdict=verdict))
        if verdict.valid:
            outcome.draft = draft
            return outcome
        rejection = Rejection(
            conversation_id=plan.id,
            turn_index=turn_index,
            attempt=attempt,
            categories=verdict.failed_checks,
            reason=verdict.reason,
            checked_by=verdict.checked_by,
            draft=draft,
        )
        rejections.append(rejection)
        observer.rejection(rejection)
        messages = messages + generator.redraft_messages(draft, verdict, turn_index)
    if outcome.attempts and settings.on_exhausted == "accept":
        outcome.draft = outcome.attempts[-1].draft
        outcome.overruled = True
    return outcome


async def _planned_turn(
    plan: ConversationPlan,
    conversation: Conversation,
    turn_index: int,
    step: Step,
    validator: Validator,
    index: DocumentIndex,
    rejections: list[Rejection],
    observer: Observer,
) -> Turn:
    """A fixed or prefix turn, exactly as planned. A fixed turn with a ground truth is checked by the validator like
    a draft; a rejection is recorded (and the turn marked overruled) but never changes it: the plan decides."""
    assert step.draft is not None
    draft = step.draft
    if step.kind == "prefix":
        return Turn(
            index=turn_index,
            **draft.model_dump(),
            answer=step.answer,
            contexts=step.contexts,
            origin="prefix",
            validator_overruled=None,  # never validated: a real message, not a draft
        )
    attempts: list[Attempt] = []
    usage: dict[str, Usage] = {}
    overruled = False
    if draft.ground_truth:
        verdict, v_usage = await validator.check(
            draft,
            turn_index=turn_index,
            persona=plan.persona,
            documents=plan.documents,
            history=conversation.turns,
            index=index,
            seed=plan.seed,
        )
        if v_usage is not None:
            _add_usage(usage, "validator", v_usage)
        attempts.append(Attempt(draft=draft, verdict=verdict))
        if not verdict.valid:
            overruled = True
            rejection = Rejection(
                conversation_id=plan.id,
                turn_index=turn_index,
                attempt=1,
                categories=verdict.failed_checks,
                reason=verdict.reason,
                checked_by=verdict.checked_by,
                draft=draft,
            )
            rejections.append(rejection)
            observer.rejection(rejection)
    return Turn(
        index=turn_index,
        **draft.model_dump(),
        attempts=attempts,
        validator_overruled=overruled,
        usage=usage,
        origin="fixed",
    )


def _exhausted_reason(turn_index: int, outcome: _TurnOutcome) -> str:
    """Why the turn was given up, including the unreadable drafts (they are not kept anywhere else)."""
    where = f"turn {turn_index + 1}"
    errors = outcome.generation_errors
    unreadable = f"{len(errors)} unreadable draft(s), last: {errors[-1]}" if errors else ""
    if not outcome.attempts:
        return f"{where}: no readable draft ({unreadable or 'no attempt'})"
    reason = f"{where}: the validator rejected every draft ({len(outcome.attempts)} checked) and on_exhausted is end"
    return f"{reason}; {unreadable}" if unreadable else reason


def _add_usage(usage: dict[str, Usage], role: str, more: Usage) -> None:
    usage[role] = usage[role] + more if role in usage else more
