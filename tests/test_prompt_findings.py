"""The prompt findings of a capable model's run (issue 25), each pinned: the validator is told what the question
types mean, the three instruction conflicts are resolved in the prompt text, verdict schemas ask for a reason
before the verdict, schema bounds are the prompts' words and carry no developer prose, and the judge and the
validator decide at temperature 0 unless configured otherwise (recorded in the manifest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragdive.config.models import ModelSpec
from ragdive.evaluation import Evaluator, Judge
from ragdive.evaluation.judge import render_prompt
from ragdive.evaluation.metrics.multi_turn.context_retention import ContextRetentionVerdict
from ragdive.evaluation.metrics.multi_turn.forgetfulness import ForgetfulnessVerdict
from ragdive.evaluation.metrics.single_turn.context_precision import ContextPrecisionVerdict, ContextRelevance
from ragdive.evaluation.metrics.single_turn.context_recall import ContextRecallVerdict, StatementAttribution
from ragdive.evaluation.metrics.single_turn.correctness import CorrectnessVerdict
from ragdive.evaluation.metrics.single_turn.faithfulness import ClaimVerdict, FaithfulnessVerdict
from ragdive.evaluation.same_question import SameQuestionVerdict
from ragdive.models import GenerateParams, Model, ScriptedModel, get_model
from ragdive.models.structured import schema_json
from ragdive.records import SIMULATED_TYPES, TurnDraft
from ragdive.simulation import Generator
from ragdive.simulation.generator import DraftOutput, ProbeDraftOutput
from ragdive.simulation.personas import builtin_personas
from ragdive.simulation.validator import Validator, VerdictOutput
from ragdive.store import RunStore
from tests.factories import make_conversation

from .test_prompt_layout import DOCUMENTS, TURNS

VERDICTS: list[tuple[type[BaseModel], str]] = [
    (CorrectnessVerdict, "correct"),
    (ForgetfulnessVerdict, "forgot"),
    (ContextRetentionVerdict, "retained"),
    (SameQuestionVerdict, "same"),
    (ContextRelevance, "relevant"),
    (StatementAttribution, "attributed"),
    (ClaimVerdict, "supported"),
    (VerdictOutput, "valid"),
]
SENT_SCHEMAS: list[type[BaseModel]] = [
    DraftOutput,
    ProbeDraftOutput,
    VerdictOutput,
    CorrectnessVerdict,
    ForgetfulnessVerdict,
    ContextRetentionVerdict,
    SameQuestionVerdict,
    ContextPrecisionVerdict,
    ContextRecallVerdict,
    FaithfulnessVerdict,
]


def user_model() -> Model:
    return Model(ScriptedModel("scripted/user"), role="user")


def validator_messages(probe: bool = False) -> str:
    validator = Validator(Model(ScriptedModel("scripted/v"), role="validator"))
    draft = TurnDraft(
        rag_input="Different question: how long is the Ost?",
        standalone_question="How long is the river Ost?",
        ground_truth="not in the knowledge base" if probe else "212 km.",
        question_type="follow-up",
        unanswerable=probe,
    )
    messages = validator.messages(
        draft, turn_index=2, persona=builtin_personas()["explorer"], documents=DOCUMENTS, history=TURNS[:2]
    )
    return "\n".join(m.content for m in messages)


def test_the_validator_is_told_what_every_question_type_means() -> None:
    system = validator_messages()
    for question_type in SIMULATED_TYPES:
        assert f"\n- {question_type.value}: " in system, question_type


def test_a_forced_probe_overrides_the_rule_to_follow_a_wrong_answer_with_a_correction() -> None:
    generator = Generator(user_model())
    explorer = builtin_personas()["skeptical"]
    probe = generator.first_messages(persona=explorer, documents=DOCUMENTS, history=TURNS[:2], turn_index=2, probe=True)
    text = "\n".join(m.content for m in probe)
    assert "when the task says this turn is an unanswerable probe, the probe\n   comes first" in text
    assert "The probe takes the place of a correction this turn, even if the last answer was wrong" in text
    plain = generator.first_messages(
        persona=explorer, documents=DOCUMENTS, history=TURNS[:2], turn_index=2, probe=False
    )
    assert "takes the place of a correction" not in plain[-1].content
    assert "the probe comes first" in validator_messages(probe=True)


def test_a_marked_change_of_subject_is_a_connected_next_message_for_the_user_and_the_validator() -> None:
    generator = Generator(user_model())
    system = generator.first_messages(
        persona=builtin_personas()["explorer"], documents=DOCUMENTS, history=TURNS[:2], turn_index=2, probe=False
    )[0].content
    assert "such a marked switch is\n     the next message of this conversation too" in system
    validator = validator_messages()
    assert 'A marked change of\nsubject ("Different question: ...") is a connected next message.' in validator
    assert "a change of subject marked as such" in validator  # in the rag_input_not_connected rule itself


def test_a_probes_refusal_with_a_related_true_fact_is_not_ruled_incorrect_by_the_prompt() -> None:
    text = render_prompt(
        "correctness",
        question="Who painted it?",
        ground_truth="not in the knowledge base",
        answer="-",
        unanswerable=True,
    )
    assert "states a specific fact is not correct" not in text
    assert "It may add other, related facts, as long as it does\nnot present any of them as the answer" in text
    assert "deliberate probe" not in render_prompt(
        "correctness", question="q", ground_truth="g", answer="a", unanswerable=False
    )


@pytest.mark.parametrize(("schema", "verdict"), VERDICTS, ids=[s.__name__ for s, _ in VERDICTS])
def test_reason_is_required_and_comes_before_the_verdict(schema: type[BaseModel], verdict: str) -> None:
    data = schema_json(schema)
    assert "reason" in data["required"]
    order = list(data["properties"])
    assert order.index("reason") < order.index(verdict)


def _descriptions(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["description"]] if isinstance(node.get("description"), str) else []
        return found + [d for value in node.values() for d in _descriptions(value)]
    if isinstance(node, list):
        return [d for item in node for d in _descriptions(item)]
    return []


@pytest.mark.parametrize("schema", SENT_SCHEMAS, ids=[s.__name__ for s in SENT_SCHEMAS])
def test_no_developer_prose_in_a_schema_a_model_reads(schema: type[BaseModel]) -> None:
    assert _descriptions(schema_json(schema)) == []


def test_evidence_bounds_are_the_prompts_words() -> None:
    system = (
        Generator(user_model())
        .first_messages(
            persona=builtin_personas()["precise"], documents=DOCUMENTS, history=[], turn_index=0, probe=False
        )[0]
        .content
    )
    assert "one to three quotes" in system
    evidence = schema_json(DraftOutput)["properties"]["evidence"]
    assert (evidence["minItems"], evidence["maxItems"]) == (1, 3)
    assert schema_json(ProbeDraftOutput)["properties"]["evidence"]["maxItems"] == 0  # the probe prompt: []


@pytest.mark.parametrize("role", ["judge", "validator"])
def test_the_judge_and_the_validator_decide_at_temperature_zero_by_default(role: str) -> None:
    assert get_model("scripted/x", role=role).spec.params == {"temperature": 0.0}
    configured = get_model(ModelSpec(model="scripted/x", params={"temperature": 0.7, "seed": 3}), role=role)
    assert configured.spec.params == {"temperature": 0.7, "seed": 3}  # the config wins
    assert get_model("scripted/x", role="user").spec.params == {}  # the user keeps the provider's default


async def test_the_validator_sends_temperature_zero_with_its_seed() -> None:
    backend = ScriptedModel("scripted/v").enqueue({"reason": "fine", "failed_checks": [], "valid": True})
    validator = Validator(Model(backend, role="validator"))
    draft = TurnDraft(
        rag_input="When was the Veldmark lighthouse built?",
        standalone_question="When was the Veldmark lighthouse built?",
        ground_truth="In 1852.",
        question_type="initial",
        evidence=["Its lighthouse was built in 1852 by Anna Brecht."],
    )
    verdict, _ = await validator.check(
        draft, turn_index=0, persona=builtin_personas()["precise"], documents=DOCUMENTS, history=[], seed=5
    )
    assert verdict.valid
    sent = backend.calls[0].params
    assert isinstance(sent, GenerateParams) and (sent.temperature, sent.seed) == (0.0, 5)


async def test_the_manifest_records_the_judges_model_and_temperature(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, kind="dynamic")
    store.append_conversation(make_conversation("c", turns=2))
    backend = ScriptedModel("scripted/judge", responder=lambda m, s: {"reason": "r", "correct": True})
    await Evaluator(Judge(Model(backend, role="judge")), ["correctness"]).evaluate_run(store)
    judge = store.read_manifest().roles["judge"]
    assert judge.model == "scripted/judge" and judge.params == {"temperature": 0.0}
    assert all(call.params is not None and call.params.temperature == 0.0 for call in backend.calls)


def test_the_shared_words_hint_does_not_claim_the_documents_are_related() -> None:
    # related sampling always returns a neighbour, so two unrelated articles can be paired (a capable model's run
    # got a bee article and a canal article "related" through "run, side, workers"): the hint says why they were
    # drawn together and tells the user model not to invent a link, instead of asserting one
    generator = Generator(user_model())
    text = generator.first_messages(
        persona=builtin_personas()["attentive"],
        documents=DOCUMENTS,
        history=[],
        turn_index=0,
        probe=False,
        shared_terms=["workers", "side"],
    )[-1].content
    assert "These documents are related" not in text
    assert "drawn together because they share these words:\nworkers, side.\n" in text
    assert "If a shared word is the only link, ask about one document at a time: never invent a\nconnection" in text
    no_hint = generator.first_messages(
        persona=builtin_personas()["attentive"], documents=DOCUMENTS, history=[], turn_index=0, probe=False
    )[-1].content
    assert "drawn together" not in no_hint


def test_the_redraft_request_ends_with_its_answer_instruction_on_a_line_of_its_own() -> None:
    # the capable-model run read "... keeps to every rule. Answer\nwith the JSON object only." (a hard wrap in
    # the middle of the instruction); every other turn prompt ends with the instruction as its own line
    from ragdive.records import Verdict
    from ragdive.simulation.generator import redraft_messages

    draft = TurnDraft(
        rag_input="When was it built?",
        standalone_question="When was the Veldmark lighthouse built?",
        ground_truth="In 1852.",
        question_type="follow-up",
    )
    verdict = Verdict(
        valid=False, reason="The year is not in the evidence.", failed_checks=["ground_truth_unsupported"]
    )
    critique = redraft_messages(draft, verdict, turn_index=1)[-1].content
    assert critique.rstrip("\n").splitlines()[-1] == "Answer with the JSON object only."
    assert "A reviewer rejected this draft of turn 2." in critique
