"""simulation.stop: fixed (the paper's: max_turns turns, every request as it always was) or satisfied (the simulated
user may end the conversation with a reason after min_turns turns), recorded per conversation and shown in the
length distribution of analyze and report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragdive import api
from ragdive.analysis.conversations import conversation_lengths
from ragdive.config import ExperimentConfig
from ragdive.config.models import ModelSpec
from ragdive.errors import ConfigError
from ragdive.models import Message, Model, ScriptedModel
from ragdive.models.cache import cache_key
from ragdive.models.structured import schema_text
from ragdive.records import Conversation
from ragdive.simulation import DialogueSettings, Generator, Validator, run_dialogue
from ragdive.simulation.fingerprints import prompt_fingerprint
from ragdive.simulation.generator import EndOrDraftOutput, ProbeDraftOutput
from ragdive.simulation.resume_check import differences
from ragdive.store import RunStore

from ..factories import make_conversation
from .helpers import DOCS, EchoTarget, good_draft, plan, turn_number
from .test_base_profile import grammar_answer

REJECT = {"reason": "The stand-alone question still says 'it'.", "failed_checks": ["not_standalone"], "valid": False}
ACCEPT = {"reason": "fine", "failed_checks": [], "valid": True}


def user_answer(messages: list[Message], schema: type[BaseModel]) -> dict[str, Any]:
    if schema is ProbeDraftOutput:
        draft = good_draft(messages)
        draft.update(evidence=[], ground_truth="not in the knowledge base")
        draft.update(standalone_question="Who painted the lighthouse of Veldmark?", rag_input="Who painted it?")
        return draft
    return good_draft(messages)


async def request_keys(profile: str) -> list[str]:
    """The cache key of every request a 4-turn fixed dialogue sends (a rejection, a redraft and a probe in it)."""
    verdicts = iter([{**REJECT, "reason": "says it"}])
    users = ScriptedModel("scripted/user", responder=grammar_answer if profile == "base" else user_answer)
    validators = ScriptedModel("scripted/validator", responder=lambda m: next(verdicts, ACCEPT))
    user = Model(users, role="user", spec=ModelSpec(model="scripted/user", prompt_profile=profile))
    validator = Model(validators, role="validator", spec=ModelSpec(model="scripted/validator", prompt_profile=profile))
    await run_dialogue(
        plan(),
        generator=Generator(user),
        validator=Validator(validator),
        target=EchoTarget(),
        settings=DialogueSettings(max_turns=4, unanswerable_rate=0.5),
    )
    return [
        cache_key(
            model=model.name,
            base_url=None,
            messages=call.messages,
            schema=schema_text(call.schema) if call.schema else None,
            params=model._merge(call.params),
            repeat_index=0,
        )
        for model, backend in ((user, users), (validator, validators))
        for call in backend.calls
    ]


# Digests of the requests of that dialogue before the stop rule existed. A fixed run must send exactly these: its
# cache entries stay valid and its prompts are the paper's. (Change them only with a deliberate prompt change.)
FIXED_KEYS = {
    "chat": "093875f1e8009b88c8280cf2f48e10ecd92653f3eab1a600356319b93dca1a4a",
    "base": "4281b37eeadc8b7ce47a01f825619a747ca7ddfeb9712788e821ce81adb490bd",
}
FIXED_FINGERPRINTS = {("user", "chat"): "443b329be78a", ("user", "base"): "000772f9c3d4"}


@pytest.mark.parametrize("profile", ["chat", "base"])
async def test_fixed_sends_every_request_byte_identical_to_before(profile: str) -> None:
    keys = await request_keys(profile)
    assert len(keys) == 10  # 4 turns + 1 redraft, each drafted and checked
    assert hashlib.sha256("".join(keys).encode()).hexdigest() == FIXED_KEYS[profile]
    assert prompt_fingerprint("user", profile) == FIXED_FINGERPRINTS["user", profile]
    assert prompt_fingerprint("user", profile, "fixed") == FIXED_FINGERPRINTS["user", profile]


def test_satisfied_has_a_fingerprint_of_its_own() -> None:
    assert prompt_fingerprint("user", "chat", "satisfied") != FIXED_FINGERPRINTS["user", "chat"]
    assert prompt_fingerprint("validator", "chat", "satisfied") == prompt_fingerprint("validator", "chat")


def ending_user(end_at: int, reason: str = "Both of my questions were answered; I know what I wanted.") -> Any:
    """Drafts turns; offered the end at turn ``end_at`` (1-based) or later, ends with ``reason``."""

    def answer(messages: list[Message], schema: type[BaseModel]) -> dict[str, Any]:
        if schema is EndOrDraftOutput and turn_number(messages) >= end_at:
            return {"end_reason": reason, "question_type": None, "evidence": None}
        return user_answer(messages, schema)

    return answer


async def satisfied(responder: Any, validator_outputs: tuple[Any, ...] = (), **settings: Any) -> Any:
    users = ScriptedModel("scripted/user", responder=responder)
    validators = ScriptedModel("scripted/validator", responder=lambda m: ACCEPT)
    validators.enqueue(*validator_outputs)
    target = EchoTarget()
    result = await run_dialogue(
        plan(),
        generator=Generator(Model(users, role="user")),
        validator=Validator(Model(validators, role="validator")),
        target=target,
        settings=DialogueSettings(**{"max_turns": 5, "stop": "satisfied", "min_turns": 2, **settings}),
    )
    return result, users, target


async def test_the_user_ends_the_conversation_with_its_reason_and_it_stays_finished() -> None:
    result, users, target = await satisfied(ending_user(3))
    conversation = result.conversation
    assert conversation.status == "finished" and conversation.end_reason is None
    assert conversation.stop_reason == "user"
    assert conversation.user_end_reason == "Both of my questions were answered; I know what I wanted."
    assert len(conversation.turns) == 2 and len(target.calls) == 2  # the ending is never sent to the target
    # turns 1 and 2 (min_turns) were drafted exactly as under fixed; turn 3 offered the end, first in the schema
    assert [c.schema.__name__ for c in users.calls] == ["DraftOutput", "DraftOutput", "EndOrDraftOutput"]  # type: ignore[union-attr]
    assert all("end_reason" not in c.text for c in users.calls[:2])
    assert "# You may end the conversation instead" in users.calls[2].messages[-1].content
    assert list(EndOrDraftOutput.model_fields)[0] == "end_reason"  # decided before anything is drafted


async def test_a_user_who_goes_on_drafts_every_turn_and_the_conversation_stops_at_max_turns() -> None:
    result, users, _ = await satisfied(user_answer, max_turns=4)
    conversation = result.conversation
    assert conversation.status == "finished" and conversation.stop_reason == "max_turns"
    assert conversation.user_end_reason is None and len(conversation.turns) == 4
    assert [c.schema.__name__ for c in users.calls] == ["DraftOutput"] * 2 + ["EndOrDraftOutput"] * 2  # type: ignore[union-attr]
    assert all(t.attempts[-1].verdict.valid for t in conversation.turns)


async def test_the_end_is_offered_before_the_first_checked_draft_only_and_never_on_a_probe() -> None:
    # turn 3's first draft is rejected: its redraft is a plain draft (a rejected user cannot walk away from it)
    result, users, _ = await satisfied(user_answer, validator_outputs=(ACCEPT, ACCEPT, REJECT), max_turns=3)
    names = [c.schema.__name__ for c in users.calls]  # type: ignore[union-attr]
    assert names == ["DraftOutput", "DraftOutput", "EndOrDraftOutput", "DraftOutput"], names
    assert result.conversation.stop_reason == "max_turns" and len(result.conversation.turns) == 3

    # every later turn is a probe: the probe plan decides those turns, so the end is never offered
    result, users, _ = await satisfied(ending_user(1), unanswerable_rate=1.0, max_turns=4)
    assert "EndOrDraftOutput" not in [c.schema.__name__ for c in users.calls]  # type: ignore[union-attr]
    assert result.conversation.stop_reason == "max_turns" and all(t.unanswerable for t in result.conversation.turns[1:])


async def test_going_on_without_a_whole_draft_is_an_unreadable_answer() -> None:
    halves = iter([{"end_reason": None, "question_type": "follow-up"}])  # neither an ending nor a draft, once

    def half(messages: list[Message], schema: type[BaseModel]) -> dict[str, Any]:
        if schema is EndOrDraftOutput:
            return next(halves, None) or user_answer(messages, schema)
        return user_answer(messages, schema)

    result, users, _ = await satisfied(half, max_turns=3)
    corrective = users.calls[3]  # the model layer's one corrective retry says what was missing
    assert corrective.schema is EndOrDraftOutput
    assert "end_reason is null, so every other field must be filled" in corrective.text
    assert "rag_input" in corrective.messages[-1].content
    assert result.conversation.stop_reason == "max_turns" and result.conversation.turns[2].generation_errors == []


def test_the_config_takes_stop_and_min_turns_and_refuses_a_minimum_above_max_turns() -> None:
    config = ExperimentConfig.model_validate({"simulation": {"stop": "satisfied", "min_turns": 3, "max_turns": 5}})
    assert (config.simulation.stop, config.simulation.min_turns) == ("satisfied", 3)
    assert ExperimentConfig.model_validate({}).simulation.stop == "fixed"
    with pytest.raises(ValueError, match=r"min_turns \(6\) is more than max_turns \(5\)"):
        ExperimentConfig.model_validate({"simulation": {"stop": "satisfied", "min_turns": 6}})
    ExperimentConfig.model_validate({"simulation": {"min_turns": 6}})  # ignored under fixed
    with pytest.raises(ValueError, match="stop"):
        ExperimentConfig.model_validate({"simulation": {"stop": "whenever"}})


def test_resuming_with_another_stop_rule_is_refused() -> None:
    stored = ExperimentConfig.model_validate({"simulation": {"stop": "satisfied"}}).model_dump(mode="json")
    found = differences(stored, ExperimentConfig.model_validate({}))
    assert any(f.startswith("simulation.stop (run: 'satisfied', config: 'fixed')") for f in found)
    old = ExperimentConfig.model_validate({}).model_dump(mode="json")
    del old["simulation"]["stop"], old["simulation"]["min_turns"]  # written before the keys existed
    assert differences(old, ExperimentConfig.model_validate({})) == []


def test_lengths_count_turns_per_conversation_by_what_stopped_them() -> None:
    user = make_conversation("a", turns=2)
    user.stop_reason, user.user_end_reason = "user", "All answered."
    full = make_conversation("b", turns=4)
    full.stop_reason = "max_turns"
    early = make_conversation("c", turns=1)
    early.status, early.end_reason = "ended_early", "the target failed on turn 2: down"
    old = make_conversation("d", turns=4)  # a run before schema 6: finished, stop not recorded
    lengths = conversation_lengths([user, full, early, old])
    assert lengths.counts == {1: 1, 2: 1, 4: 2}
    assert lengths.stops == {"max_turns": 1, "user": 1, "ended_early": 1, "error": 0, "not recorded": 1}
    assert lengths.by_stop["user"] == {2: 1} and lengths.by_stop["not recorded"] == {4: 1}
    assert lengths.mean == 11 / 4 and lengths.median == 3.0 and lengths.user_end_reasons == ["All answered."]
    assert conversation_lengths([]).mean is None


def offline_config(tmp_path: Path, **simulation: Any) -> dict[str, Any]:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "harbour.md").write_text(DOCS[0].text[: DOCS[0].text.index("Fishing")].strip() + "\n")
    offline = "ragdive.testing.offline"
    return {
        "name": "stop",
        "output_dir": str(tmp_path / "runs"),
        "cache": {"dir": str(tmp_path / "cache")},
        "corpus": {"path": str(tmp_path / "corpus")},
        "target": {"type": "python", "callable": "tests.simulation.test_stop_rule:echo_rag"},
        "models": {
            role: {"model": f"scripted/{role}", "options": {"responder": f"{offline}:{role}"}}
            for role in ("user", "validator", "judge")
        },
        "evaluation": {"metrics": ["correctness"]},
        "simulation": {"conversations": 2, "max_turns": 5, "concurrency": 1, **simulation},
    }


def echo_rag(message: str) -> dict[str, Any]:
    return {"answer": DOCS[0].text, "contexts": [{"text": DOCS[0].text, "source": "harbour"}]}


def test_a_satisfied_run_records_the_ends_and_analyze_and_report_show_the_lengths(tmp_path: Path) -> None:
    # the offline user ends once it has asked about each of the document's 3 sentences: after turn 3 of at most 5
    result = api.run(offline_config(tmp_path, stop="satisfied", min_turns=2))
    assert result.status == "finished", result.error
    conversations = RunStore.open(result.run_dir).current_conversations()
    assert [(c.status, c.stop_reason, len(c.turns)) for c in conversations] == [("finished", "user", 3)] * 2
    assert all("3 facts" in (c.user_end_reason or "") for c in conversations)
    line = json.loads((result.run_dir / "conversations.jsonl").read_text().splitlines()[0])
    assert line["stop_reason"] == "user" and line["user_end_reason"] == conversations[0].user_end_reason
    manifest = RunStore.open(result.run_dir).read_manifest()
    assert manifest.roles["user"].prompts == prompt_fingerprint("user", "chat", "satisfied")

    analysis = api.analyze([result.run_dir], uniqueness="exact")
    lengths = analysis.document()["groups"]["all"]["lengths"]
    assert lengths["counts"] == {"3": 2} and lengths["stops"]["user"] == 2 and lengths["mean"] == 3.0
    report = api.report(result.run_dir, uniqueness="exact")
    html = report.path.read_text()
    assert 'id="lengths-table"' in html and "stop: user" in html and "3 facts" in html


def test_a_fixed_run_records_max_turns(tmp_path: Path) -> None:
    result = api.run(offline_config(tmp_path, max_turns=2))
    conversations = RunStore.open(result.run_dir).current_conversations()
    assert [(c.status, c.stop_reason, c.user_end_reason) for c in conversations] == [
        ("finished", "max_turns", None)
    ] * 2


def test_a_base_profile_user_cannot_be_asked_to_end(tmp_path: Path) -> None:
    config = offline_config(tmp_path, stop="satisfied")
    config["models"]["user"]["prompt_profile"] = "base"
    with pytest.raises(ConfigError, match="stop: satisfied needs a user model that follows instructions"):
        api.run(config)


def test_a_conversation_line_of_schema_5_reads_with_its_stop_not_recorded() -> None:
    line = make_conversation("old", turns=2).model_dump(mode="json")
    del line["stop_reason"], line["user_end_reason"]
    conversation = Conversation.model_validate(line)
    assert conversation.stop_reason is None and conversation.user_end_reason is None
    assert conversation_lengths([conversation]).stops["not recorded"] == 1
