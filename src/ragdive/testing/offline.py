"""Deterministic stand-ins for every model role, so the whole pipeline runs offline with no model at all: the
README's Python API example, and trying the plumbing. Bind them as scripted models::

    models:
      user: {model: scripted/user, options: {responder: "ragdive.testing.offline:user"}}
      validator: {model: scripted/validator, options: {responder: "ragdive.testing.offline:validator"}}
      judge: {model: scripted/judge, options: {responder: "ragdive.testing.offline:judge"}}

They read the prompts they are sent (the `chat` prompt profile, every scripted model's default), so the records
carry real data; their verdicts are string matching, not an evaluation of anything.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from ..models import Message

_DOC = re.compile(r'<document id="[^"]*" title="[^"]*">\n(.*?)\n</document>', re.S)
_TURN = re.compile(r"Write turn (\d+)")


def _sentences(text: str) -> list[str]:
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def user(messages: list[Message]) -> dict[str, Any]:
    """Turn N asks whether the seed document's N-th sentence is true, quoting it as evidence and answer."""
    text = "\n".join(m.content for m in messages)
    found = _DOC.search(text)
    turn = _TURN.search(text)
    number = int(turn.group(1)) if turn else 1
    facts = _sentences(found.group(1)) if found else ["The document is empty."]
    fact = facts[(number - 1) % len(facts)]
    question = f"Is it true that {fact[:-1].lower()}?"
    return {
        "question_type": "initial" if number == 1 else "follow-up",
        "evidence": [fact],
        "ground_truth": fact,
        "standalone_question": question,
        "rag_input": question if number == 1 else f"And {question[0].lower()}{question[1:]}",
        "refers_to_turn": None if number == 1 else number - 1,
    }


def validator(messages: list[Message]) -> dict[str, Any]:
    """Accepts every draft (the deterministic checks still run before it)."""
    return {"reason": "fine", "failed_checks": [], "valid": True}


def _section(text: str, name: str) -> str:
    """The text under a `NAME:` header of a judge prompt, up to the next header."""
    match = re.search(rf"^{re.escape(name)}:\n(.*?)(?=\n\n[A-Z][A-Z ]+:\n|\Z)", text, re.S | re.M)
    return match.group(1).strip() if match else ""


def judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    """Verdicts by string containment: the answer contains the ground truth, a context contains it, and so on."""
    prompt = messages[-1].content
    name = schema.__name__ if schema else ""
    truth, answer = _section(prompt, "GROUND TRUTH"), _section(prompt, "ANSWER")
    contexts = _section(prompt, "RETRIEVED CONTEXTS")
    if name == "CorrectnessVerdict":
        ok = truth.lower() in answer.lower()
        return {"reason": "contains the ground truth" if ok else "does not", "correct": ok}
    if name == "ContextPrecisionVerdict":
        ranked = re.findall(r"^\[(\d+)\] (.*)$", contexts, re.M)
        return {"verdicts": [{"rank": int(r), "relevant": truth.lower() in t.lower()} for r, t in ranked]}
    if name == "ContextRecallVerdict":
        return {"statements": [{"statement": truth, "attributed": truth.lower() in contexts.lower()}]}
    if name == "FaithfulnessVerdict":
        return {"claims": [{"claim": answer, "supported": answer.lower() in contexts.lower()}]}
    if name == "ForgetfulnessVerdict":
        return {"reason": "nothing lost", "lost": [], "forgot": False}
    if name == "ContextRetentionVerdict":
        return {"reason": "kept", "lost": [], "retained": True}
    raise ValueError(f"ragdive.testing.offline.judge: no verdict for schema {name!r}")
