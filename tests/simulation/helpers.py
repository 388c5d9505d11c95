"""Scripted user/validator models and targets for simulation tests."""

from __future__ import annotations

import re
from typing import Any

from ragdive.models import Message, Model, ScriptedModel
from ragdive.records import Document, TargetReply
from ragdive.simulation.dialogue import ConversationPlan
from ragdive.simulation.personas import builtin_personas
from ragdive.simulation.runner import RunOutcome, SimulationRunner
from ragdive.targets import DialogueState, Target

DOCS = [
    Document(
        id="harbour",
        title="Old Harbour",
        text=(
            "The old harbour of Veldmark was built in 1632 by Dutch engineers. "
            "It was enlarged in 1788 after a storm destroyed the northern pier. "
            "The lighthouse at its entrance is painted red and white. "
            "Fishing boats still use the inner basin every morning. "
            "A museum about the harbour opened in 1954."
        ),
    ),
    Document(
        id="bridge",
        title="Stone Bridge",
        text=(
            "The stone bridge of Veldmark crosses the river Aas with seven arches. "
            "It was finished in 1701 and connected the harbour to the market. "
            "Carts paid a toll of two pennies until 1850. "
            "The bridge was restored in 1999 with stone from the original quarry. "
            "Every spring a fair is held on the bridge."
        ),
    ),
]

_DOC = re.compile(r'<document id="([^"]*)" title="[^"]*">\n(.*?)\n</document>', re.S)
_TURN = re.compile(r"Write turn (\d+)")


def sentences(text: str) -> list[str]:
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def turn_number(messages: list[Message]) -> int:
    for m in messages:
        found = _TURN.search(m.content)
        if found:
            return int(found.group(1))
    raise AssertionError("no 'Write turn N' in the generator prompt")


def good_draft(messages: list[Message], *_: Any) -> dict[str, Any]:
    """A draft a strict validator accepts: a sentence of the document as evidence and answer."""
    text = "\n".join(m.content for m in messages)
    doc_text = _DOC.search(text).group(2)  # type: ignore[union-attr]
    number = turn_number(messages)
    fact = sentences(doc_text)[(number - 1) % len(sentences(doc_text))]
    standalone = f"Is it true that {fact[:-1].lower()}?"
    return {
        "question_type": "initial" if number == 1 else "follow-up",
        "evidence": [fact],
        "ground_truth": fact,
        "standalone_question": standalone,
        "rag_input": standalone if number == 1 else f"And {standalone[0].lower()}{standalone[1:]}",
        "refers_to_turn": None if number == 1 else number - 1,
    }


def fabricated_draft(messages: list[Message], *_: Any) -> dict[str, Any]:
    draft = good_draft(messages)
    draft["evidence"] = ["The harbour was designed by a famous Venetian architect named Lorenzo Ricci."]
    return draft


def user_model(responder: Any = good_draft) -> tuple[Model, ScriptedModel]:
    backend = ScriptedModel("scripted/user", responder=responder)
    return Model(backend, role="user"), backend


def validator_model(*outputs: Any, responder: Any = None) -> tuple[Model, ScriptedModel]:
    backend = ScriptedModel(
        "scripted/validator", responder=responder or (lambda m: {"reason": "fine", "failed_checks": [], "valid": True})
    )
    backend.enqueue(*outputs)
    return Model(backend, role="validator"), backend


class EchoTarget(Target):
    """Answers with the turn count and the question; records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        self.calls.append((conversation.id, user_message, len(conversation.history)))
        return TargetReply(answer=f"answer {len(conversation.history) // 2 + 1}: {user_message}")


def plan(persona: str = "precise", documents: list[Document] | None = None, index: int = 0) -> ConversationPlan:
    return ConversationPlan(
        index=index,
        id=f"conv-{index}",
        seed=1234 + index,
        persona=builtin_personas()[persona],
        documents=documents or [DOCS[0]],
    )


async def session_run(runner: SimulationRunner) -> RunOutcome:
    """The runner in a run session, as the pipeline runs it: the session writes the run's status."""
    from ragdive.store import RunSession

    session = RunSession(
        runner.store, recorder=runner.recorder, spend=runner.session_spend, limits=runner.session_limits
    )
    return await session.run(runner.run)
