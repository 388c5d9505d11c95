"""Frozen-user replay: the dialogue loop with the simulated user replaced by a recording. Each recorded turn's
``rag_input`` is sent, in order, to another target; the turn keeps the source's stand-alone question, ground
truth, question type and evidence, so the judge scores the new answers against the same references.

The limit, said wherever a replay is read (the manifest's note, the README): from turn 2 on, the recorded messages
were written by a user who had read the *source* target's answers. A replay holds the questions fixed, which makes
the comparison paired and free of simulation noise, but it is not what a user talking to the new target would
have asked; a follow-up that reacts to a detail only the old answer gave can read oddly to the new target.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..errors import BudgetExceeded, ModelStopped
from ..records import Conversation, Turn
from ..records._base import utc_now
from ..store import RunRecorder, RunStore
from ..targets import DialogueState, Target
from ..targets.watch import TargetWatch, answer_turn, save_as_finished

REPLAY_NOTE = (
    "frozen-user replay: the user messages are those of the source run, and from turn 2 on they were written in "
    "reaction to the source target's answers, not to this target's"
)

# what a replayed turn copies from its recording: the user's side of the turn and the references the judge uses
COPIED = ("index", "rag_input", "standalone_question", "ground_truth", "question_type", "evidence")
COPIED_TOO = ("refers_to_turn", "unanswerable")


def replayable(conversations: list[Conversation]) -> list[Conversation]:
    """The source conversations a replay sends, in plan order: those with at least one turn and not failed (a
    conversation in status error was cut off by an outage; resuming its own run redoes it)."""
    return sorted((c for c in conversations if c.status != "error" and c.turns), key=lambda c: c.index)


def _recorded_turn(turn: Turn) -> Turn:
    return Turn(**{name: getattr(turn, name) for name in (*COPIED, *COPIED_TOO)})


async def replay_conversation(target: Target, source: Conversation) -> Conversation:
    """Send ``source``'s user messages to ``target``, each with the history of *this* target's answers (a target
    sees its own replies, as it would in a live conversation). A target failure ends the conversation early, as in
    the simulation; any other failure is recorded on the conversation (status error)."""
    conversation = Conversation(
        id=source.id,
        index=source.index,
        persona=source.persona,
        document_ids=list(source.document_ids),
        seed=source.seed,
    )
    state = DialogueState(id=source.id)
    try:
        await target.start(state)
        for recorded in source.turns:
            turn = _recorded_turn(recorded)
            answered = await answer_turn(target, state, turn)
            conversation.turns.append(turn)
            if not answered:
                conversation.status = "ended_early"
                conversation.end_reason = f"the target failed on turn {turn.index + 1}: {turn.error}"
                break
        else:
            if source.status == "ended_early":  # the recording stops where the source conversation stopped
                conversation.status = "ended_early"
                conversation.end_reason = f"the source conversation ended early: {source.end_reason}"
    except (BudgetExceeded, ModelStopped):
        raise  # the run stops: no budget left, or a model that fails every call (crashed, refused, down)
    except Exception as exc:  # recorded on this conversation; the others go on
        conversation.status = "error"
        conversation.error = f"{type(exc).__name__}: {exc}"
    conversation.finished = utc_now()
    return conversation


async def replay_conversations(
    target: Target,
    sources: list[Conversation],
    store: RunStore,
    *,
    concurrency: int = 4,
    on_conversation: Callable[[Conversation], None] | None = None,
) -> tuple[int, int]:
    """Replay every source conversation the store has not finished (a resumed replay skips those); write each as
    it finishes. Returns (replayed, conversations with a target or other error)."""
    done = store.finished_conversation_ids()
    slots = asyncio.Semaphore(concurrency)

    async def bounded(source: Conversation) -> Conversation:
        async with slots:
            return await replay_conversation(target, source)

    tasks = [asyncio.ensure_future(bounded(c)) for c in sources if c.id not in done]
    watch = TargetWatch(len(tasks), saved="conversations replayed so far are saved")

    def save(conversation: Conversation) -> None:
        store.append_conversation(conversation)
        if on_conversation:
            on_conversation(conversation)

    try:
        return await save_as_finished(
            tasks, save, watch, lambda c: c.status == "error" or any(t.error for t in c.turns)
        )
    finally:
        RunRecorder(store).record()
