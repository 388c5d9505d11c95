"""A scripted judge that reads its prompt: enough logic to carry real data through the pipeline in tests."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from ragdive.models import Message, Model, ScriptedModel
from ragdive.testing import offline


def section(text: str, name: str) -> str:
    """The text under a `NAME:` header of a judge prompt, up to the next header."""
    match = re.search(rf"^{re.escape(name)}:\n(.*?)(?=\n\n[A-Z][A-Z ]+:\n|\Z)", text, re.S | re.M)
    return match.group(1).strip() if match else ""


def rule_judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    prompt = messages[-1].content
    name = schema.__name__ if schema else ""
    if name == "CorrectnessVerdict":
        truth, answer = section(prompt, "GROUND TRUTH"), section(prompt, "ANSWER")
        ok = truth.lower() in answer.lower()
        return {"reason": "contains the ground truth" if ok else "does not", "correct": ok}
    if name == "ContextPrecisionVerdict":
        truth = section(prompt, "GROUND TRUTH").lower()
        contexts = re.findall(r"^\[(\d+)\] (.*)$", section(prompt, "RETRIEVED CONTEXTS"), re.M)
        return {
            "verdicts": [
                {"rank": int(r), "reason": "by containment", "relevant": truth in text.lower()} for r, text in contexts
            ]
        }
    if name == "ContextRecallVerdict":
        truth = section(prompt, "GROUND TRUTH")
        found = truth.lower() in section(prompt, "RETRIEVED CONTEXTS").lower()
        return {"statements": [{"statement": truth, "reason": "by containment", "attributed": found}]}
    if name == "FaithfulnessVerdict":
        answer = section(prompt, "ANSWER")
        if answer.lower() in ("unknown", "i don't know"):
            return {"claims": []}
        found = answer.lower() in section(prompt, "RETRIEVED CONTEXTS").lower()
        return {"claims": [{"claim": answer, "reason": "by containment", "supported": found}]}
    if name == "ForgetfulnessVerdict":
        return {"reason": "nothing lost", "lost": [], "forgot": False}
    if name == "ContextRetentionVerdict":
        return {"reason": "kept", "lost": [], "retained": True}
    if name in ("ConversationFaithfulnessVerdict", "RefusalVerdict"):
        return offline.judge(messages, schema)
    raise AssertionError(f"unexpected schema {name}")


def scripted_judge(responder: Any = rule_judge, name: str = "scripted/judge") -> tuple[Model, ScriptedModel]:
    backend = ScriptedModel(name, responder=responder)
    return Model(backend, role="judge"), backend
