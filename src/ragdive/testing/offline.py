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
    """Turn N asks whether the seed document's N-th sentence is true, quoting it as evidence and answer; offered
    the end (simulation.stop: satisfied), it ends once it has asked about every sentence."""
    return draft_from_prompt("\n".join(m.content for m in messages))


def draft_from_prompt(text: str) -> dict[str, Any]:
    """The user's draft from the prompt's text alone (also what the HTTP stub's role-player sends back)."""
    found = _DOC.search(text)
    turn = _TURN.search(text)
    number = int(turn.group(1)) if turn else 1
    facts = _sentences(found.group(1)) if found else ["The document is empty."]
    if number > len(facts) and "Fill `end_reason` first" in text:  # stop: satisfied, every sentence asked about
        return {"end_reason": f"I asked about all {len(facts)} facts I wanted to know and each was answered."}
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


def _judge_prompt(messages: list[Message]) -> str:
    """The judge's own prompt: the last message with sections, not a corrective retry's request after it (which
    holds none, and would make every verdict one about empty text)."""
    for message in reversed(messages):
        if re.search(r"^[A-Z][A-Z ]+:$", message.content, re.M):
            return message.content
    return messages[-1].content


REFUSAL_PHRASES = ("not in the knowledge base", "i don't know", "does not say", "no answer")


def judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    """Verdicts by string containment: the answer contains the ground truth, a context contains it, and so on."""
    prompt = _judge_prompt(messages)
    name = schema.__name__ if schema else ""
    truth, answer = _section(prompt, "GROUND TRUTH"), _section(prompt, "ANSWER")
    contexts = _section(prompt, "RETRIEVED CONTEXTS")
    if name == "CorrectnessVerdict":
        ok = truth.lower() in answer.lower()
        return {"reason": "contains the ground truth" if ok else "does not", "correct": ok}
    if name == "ContextPrecisionVerdict":
        ranked = re.findall(r"^\[(\d+)\] (.*)$", contexts, re.M)
        return {
            "verdicts": [
                {"rank": int(r), "reason": "by containment", "relevant": truth.lower() in t.lower()} for r, t in ranked
            ]
        }
    if name == "ContextRecallVerdict":
        return {
            "statements": [
                {"statement": truth, "reason": "by containment", "attributed": truth.lower() in contexts.lower()}
            ]
        }
    if name == "FaithfulnessVerdict":
        return {
            "claims": [{"claim": answer, "reason": "by containment", "supported": answer.lower() in contexts.lower()}]
        }
    if name == "ForgetfulnessVerdict":
        return {"reason": "nothing lost", "lost": [], "forgot": False}
    if name == "ContextRetentionVerdict":
        return {"reason": "kept", "lost": [], "retained": True}
    if name == "PersonaAdherenceVerdict":
        return {"reason": "every message fits the persona", "violations": [], "adherent": True}
    if name == "ConversationFaithfulnessVerdict":
        here = answer.lower() in contexts.lower()
        earlier = not here and answer.lower() in _section(prompt, "EARLIER TURNS").lower()
        support = "current_contexts" if here else "earlier_contexts" if earlier else "none"
        return {"claims": [{"claim": answer, "reason": "text containment", "support": support}]}
    if name == "CitationVerdict":
        passages = dict(re.findall(r"^\[(\d+)\] (.*)$", _section(prompt, "PASSAGES"), re.M))
        verdicts = []
        for number, text, cites in re.findall(r"^\((\d+)\) (.*?) -- cites: (.*)$", prompt, re.M):
            ranks = [r.strip() for r in cites.split(",") if r.strip().isdigit()]
            bare = re.sub(r"\s*\[[\d,; ]+\]", "", text).lower().rstrip(".")
            good = [int(r) for r in ranks if bare in passages.get(r, "").lower()]
            verdicts.append({"sentence": int(number), "reason": "containment", "claim": True, "supported_by": good})
        return {"sentences": verdicts}
    if name == "RefusalVerdict":
        refused = any(phrase in answer.lower() for phrase in REFUSAL_PHRASES)
        return {"reason": "says it has no answer" if refused else "gives an answer", "refused": refused}
    if name in ("YesNoVerdict", "RatingVerdict"):  # a rubric metric from YAML: met when there is an answer to judge
        answered = bool(answer) or "ASSISTANT: " in prompt
        if name == "YesNoVerdict":
            return {
                "reason": "an answer was given" if answered else "no answer",
                "verdict": "yes" if answered else "no",
            }
        return {"reason": "an answer was given" if answered else "no answer", "rating": 4 if answered else 1}
    raise ValueError(f"ragdive.testing.offline.judge: no verdict for schema {name!r}")


_USER_SCHEMAS = ("DraftOutput", "ProbeDraftOutput", "EndOrDraftOutput")


def stub_reply(body: dict[str, Any]) -> str | dict[str, Any]:
    """The same stand-ins behind the stub server's HTTP API (``python -m ragdive.testing --reply
    ragdive.testing.offline:stub_reply``): the request's schema name says which role is asking; a request without
    a schema is the target, which answers with the question it was asked, echoed, and that question as its one
    retrieved context (deterministic, so a run with faults can be compared with one without)."""
    import json

    messages = [Message(role=m.get("role", "user"), content=str(m.get("content", ""))) for m in body["messages"]]
    response_format = body.get("response_format") or {}
    name = str((response_format.get("json_schema") or {}).get("name", "")) if isinstance(response_format, dict) else ""
    if not name:
        asked = messages[-1].content[:300] if messages else "nothing asked"
        return {"text": f"As far as I know: {asked}", "extra": {"contexts": [{"text": asked, "source": "echo"}]}}
    if name in _USER_SCHEMAS:
        return json.dumps(user(messages))
    if name == "VerdictOutput":
        return json.dumps(validator(messages))
    return json.dumps(judge(messages, type(name, (BaseModel,), {})))
