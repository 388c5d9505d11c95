"""Every prompt file, rendered with realistic data shaped as the code passes it, and its layout checked: each
label on its own line, no text glued to a block tag's line (jinja's trim_blocks eats the newline after a tag that
ends a line: `--- Turn 0USER: ...` was sent to the judge for months), no template syntax left, no runs of blank
lines. A new prompt file fails here until it has realistic data and the lines it must show."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest

from ragdive import prompt_files
from ragdive.evaluation.metrics.base import numbered_contexts
from ragdive.evaluation.metrics.multi_turn.attribution import turns_for_prompt
from ragdive.evaluation.metrics.single_turn.faithfulness_in_conversation import earlier_turns
from ragdive.models import Message
from ragdive.records import Context, Conversation, Document, FailedCheck, Turn, TurnDraft
from ragdive.simulation._prompts import history_view
from ragdive.simulation.checks import CHECK_DESCRIPTIONS
from ragdive.simulation.personas import builtin_personas

PACKAGES = ("ragdive.simulation", "ragdive.evaluation", "ragdive.targets.reference")

DOCUMENTS = [
    Document(
        id="veldmark-harbour",
        title="Veldmark harbour",
        text="Veldmark harbour lies at the mouth of the river Ost.\n\nIts lighthouse was built in 1852 by Anna "
        "Brecht.\nThe harbour was enlarged in 1910.",
    ),
    Document(id="ost-river", title="The Ost", text="The river Ost is 212 km long.\n\nIt freezes most winters."),
]


def _turn(index: int, user: str, answer: str | None, refers: int | None = None, error: str | None = None) -> Turn:
    return Turn(
        index=index,
        rag_input=user,
        standalone_question=user,
        ground_truth="1852.",
        question_type="initial" if index == 0 else "follow-up",
        answer=answer,
        error=error,
        refers_to_turn=refers,
        contexts=[
            Context(text="Its lighthouse was built in 1852 by Anna Brecht.", source="veldmark-harbour"),
            Context(text="The harbour was enlarged in 1910.\nIt is the region's largest.", source="veldmark-harbour"),
            Context(text="The river Ost is 212 km long.", source="ost-river"),
        ],
    )


TURNS = [
    _turn(0, "When was the Veldmark lighthouse built?", "It was built in 1852."),
    _turn(1, "and who built it?", "Anna Brecht built it.", refers=0),
    _turn(2, "was the harbour enlarged later?", None, refers=None, error="timeout after 30 s"),
]
CONVERSATION = Conversation(
    id="c-1", index=0, persona="explorer", document_ids=[d.id for d in DOCUMENTS], seed=1, turns=TURNS
)
DRAFT = TurnDraft(
    rag_input="and who built it?",
    standalone_question="Who built the Veldmark lighthouse?",
    ground_truth="Anna Brecht.",
    question_type="follow-up",
    evidence=["Its lighthouse was built in 1852 by Anna Brecht."],
    refers_to_turn=0,
)
PERSONA = builtin_personas()["explorer"]
CHECKS = [(str(c), d) for c, d in CHECK_DESCRIPTIONS.items()]
SHOWN, _ = history_view(TURNS[:2], None)
CONTEXTS = numbered_contexts(TURNS[0])
HISTORY = [Message(role="user", content=TURNS[0].rag_input), Message(role="assistant", content="It was 1852.")]


def simulation(name: str, probe: bool = False) -> dict[str, Any]:
    common = {"documents": DOCUMENTS, "history": SHOWN, "omitted": 1, "number": 3, "probe": probe}
    return {
        "generator_system": {"persona": PERSONA},
        "generator_turn": {**common, "shared_terms": ["veldmark", "ost"]},
        "generator_redraft": {
            "number": 3,
            "reason": "The answer is not in the quote.",
            "checks": [("ground_truth_unsupported", CHECK_DESCRIPTIONS[FailedCheck.GROUND_TRUTH_UNSUPPORTED])],
        },
        "generator_unreadable": {"number": 3, "error": "missing field rag_input"},
        "generator_end": {"number": 3},
        "generator_steer": {"number": 3, "instruction": "correct the assistant"},
        "validator_system": {"persona": PERSONA, "checks": CHECKS},
        "validator_user": {
            **common,
            "draft_json": json.dumps(DRAFT.model_dump(mode="json"), indent=1),
            "instruction": None,
        },
        "base/generator": {**common, "persona": PERSONA},
        "base/generator_redraft": {"number": 3, "reason": "The quote says 1852."},
        "base/validator": {"history": SHOWN, "draft": DRAFT},
        "rewrite_standalone": {"history": SHOWN, "message": "and who built it?"},
    }[name]


def evaluation(name: str, probe: bool = False) -> dict[str, Any]:
    turn = {"question": "Who built the Veldmark lighthouse?", "ground_truth": "Anna Brecht.", "contexts": CONTEXTS}
    one = {"question": turn["question"], "ground_truth": turn["ground_truth"], "answer": "Anna Brecht built it."}
    stem = name.removeprefix("base/")
    return {
        "context_precision": turn,
        "context_recall": turn,
        "faithfulness": {**turn, "answer": "Anna Brecht built it."},
        "correctness": {**one, "unanswerable": probe},
        "forgetfulness": {"turns": turns_for_prompt(CONVERSATION)},
        "context_retention": {"turns": turns_for_prompt(CONVERSATION)},
        "same_question": {"first": "Who built it?", "second": "Who was its builder?"},
        "refused": {"question": "and who built it?", "answer": "The knowledge base does not say."},
        "theme_label": {"items": ["Q: and who built it?\nA: 1852.\nWhy low: the answer gives a year, not a name."]},
        "citations": {
            "question": "and who built it?",
            "sentences": [
                {"number": 1, "text": "Anna Brecht built it.", "cited": [1]},
                {"number": 2, "text": "It is 212 km long.", "cited": []},
            ],
            "contexts": CONTEXTS,
        },
        "rubric": {
            "criterion": "The answer names who built the lighthouse.",
            "scale": "rating" if probe else "yes_no",
            "level": "conversation" if probe else "turn",
            "turn_number": None if probe else 2,
            "earlier": []
            if probe
            else [{"index": 0, "rag_input": TURNS[0].rag_input, "reply": "It was built in 1852."}],
            "turns": [
                {
                    "index": t.index,
                    "rag_input": t.rag_input,
                    "reply": t.answer or "(no answer)",
                    "standalone_question": None,
                    "ground_truth": t.ground_truth,
                    "contexts": None,
                    "question": None,
                    "answer": None,
                }
                for t in TURNS
            ]
            if probe
            else [],
            "question": None if probe else "and who built it?",
            "standalone_question": None if probe else "Who built the Veldmark lighthouse?",
            "ground_truth": None if probe else "Anna Brecht.",
            "contexts": None if probe else CONTEXTS,
            "answer": None if probe else "Anna Brecht built it.",
        },
        "persona_adherence": {
            "persona": PERSONA,
            "turns": [
                {"number": t.index + 1, "rag_input": t.rag_input, "answer": t.answer or "(no answer)"} for t in TURNS
            ],
        },
        "faithfulness_in_conversation": {
            "question": "and who built it?",
            "answer": "Anna Brecht built it.",
            "contexts": CONTEXTS,
            "history": earlier_turns(CONVERSATION, TURNS[2]) if not probe else [],
            "turn_number": 3 if not probe else 1,
        },
    }[stem]


def reference(name: str, probe: bool = False) -> dict[str, Any]:
    return {
        "answer": {},
        "question": {"contexts": CONTEXTS, "question": "and who built it?"},
        "rerank": {"query": "Veldmark lighthouse builder", "contexts": CONTEXTS, "keep": 2},
        "rewrite": {"history": HISTORY, "message": "and who built it?"},
        "base/answer": {"contexts": CONTEXTS, "question": "and who built it?"},
        "base/rerank": {"query": "Veldmark lighthouse builder", "contexts": CONTEXTS},
    }[name]


VARIABLES: dict[str, Callable[..., dict[str, Any]]] = {
    "ragdive.simulation": simulation,
    "ragdive.evaluation": evaluation,
    "ragdive.targets.reference": reference,
}

CONVERSATION_LINES = [
    "--- Turn 1",
    "USER: When was the Veldmark lighthouse built?",
    "ASSISTANT: It was built in 1852.",
    "--- Turn 2 (builds on turn 1)",
    "USER: and who built it?",
    "--- Turn 3",
    "ASSISTANT: (no answer: the system failed)",
]
BASE_CONVERSATION_LINES = [
    "Turn 1 user: When was the Veldmark lighthouse built?",
    "Turn 2 assistant: Anna Brecht built it.",
    "Turn 3 assistant: (no answer: the system failed)",
]
CONTEXT_LINES = ["[1] Its lighthouse was built in 1852 by Anna Brecht.", "[3] The river Ost is 212 km long."]
HISTORY_LINES = [
    "(1 earlier turn not shown)",
    "Turn 1 - user: When was the Veldmark lighthouse built?",
    "Turn 2 - assistant: Anna Brecht built it.",
]
EXPECTED_LINES: dict[tuple[str, str], list[str]] = {
    ("ragdive.simulation", "generator_system"): ["# The user you play", PERSONA.description, "# Rules for every turn"],
    ("ragdive.simulation", "generator_turn"): ["# Source documents", "</document>", *HISTORY_LINES, "Write turn 3."],
    ("ragdive.simulation", "generator_redraft"): ["A reviewer rejected this draft of turn 3.", "Failed checks:"],
    ("ragdive.simulation", "generator_unreadable"): [],
    ("ragdive.simulation", "generator_steer"): [
        "# The plan for this turn",
        "For turn 3, the user you play does this: correct the assistant",
    ],
    ("ragdive.simulation", "generator_end"): [
        "# You may end the conversation instead",
        "The conversation has had 2 turns. Instead of writing turn 3, the user you play may end",
        "Fill `end_reason` first:",
    ],
    ("ragdive.simulation", "validator_system"): [
        PERSONA.description,
        "- follow-up: builds on an earlier question"
        " or answer, or moves on to a related fact (a marked change of subject",
    ],
    ("ragdive.simulation", "validator_user"): ["# Source documents", *HISTORY_LINES, "# Draft of turn 3", "", "{"],
    ("ragdive.simulation", "base/generator"): ["Customer: When was the Veldmark lighthouse built?", "Turn 3."],
    ("ragdive.simulation", "base/generator_redraft"): ["Not accepted: The quote says 1852.", "Turn 3 again, fixed."],
    ("ragdive.simulation", "rewrite_standalone"): [
        "USER: When was the Veldmark lighthouse built?",
        "ASSISTANT: Anna Brecht built it.",
        "USER'S NEXT MESSAGE:",
    ],
    ("ragdive.simulation", "base/validator"): ["Earlier: and who built it?", "Message: and who built it?"],
    ("ragdive.evaluation", "context_precision"): ["QUESTION:", "GROUND TRUTH:", "RETRIEVED CONTEXTS:", *CONTEXT_LINES],
    ("ragdive.evaluation", "context_recall"): ["GROUND TRUTH:", "RETRIEVED CONTEXTS:", *CONTEXT_LINES],
    ("ragdive.evaluation", "faithfulness"): ["ANSWER:", "Anna Brecht built it.", *CONTEXT_LINES],
    ("ragdive.evaluation", "correctness"): ["QUESTION:", "GROUND TRUTH:", "ANSWER:", "Anna Brecht built it."],
    ("ragdive.evaluation", "forgetfulness"): ["CONVERSATION:", *CONVERSATION_LINES],
    ("ragdive.evaluation", "context_retention"): ["CONVERSATION:", *CONVERSATION_LINES],
    ("ragdive.evaluation", "same_question"): ["FIRST QUESTION:", "Who built it?", "SECOND QUESTION:"],
    ("ragdive.evaluation", "base/context_precision"): [],
    ("ragdive.evaluation", "base/context_recall"): [],
    ("ragdive.evaluation", "base/faithfulness"): [],
    ("ragdive.evaluation", "base/correctness"): ["Assistant's answer: Anna Brecht built it."],
    ("ragdive.evaluation", "base/forgetfulness"): BASE_CONVERSATION_LINES,
    ("ragdive.evaluation", "base/context_retention"): BASE_CONVERSATION_LINES,
    ("ragdive.evaluation", "base/same_question"): [],
    ("ragdive.evaluation", "refused"): ["QUESTION:", "ANSWER:", "The knowledge base does not say."],
    ("ragdive.evaluation", "theme_label"): ["ITEMS:", "--- item 1", "Q: and who built it?"],
    ("ragdive.evaluation", "citations"): [
        "QUESTION:",
        "ANSWER SENTENCES:",
        "(1) Anna Brecht built it. -- cites: 1",
        "PASSAGES:",
    ],
    ("ragdive.evaluation", "base/citations"): [],
    ("ragdive.evaluation", "rubric"): ["CRITERION:", "The answer names who built the lighthouse.", "--- Turn 1"],
    ("ragdive.evaluation", "base/rubric"): ["Criterion: The answer names who built the lighthouse."],
    ("ragdive.evaluation", "persona_adherence"): [PERSONA.description, "CONVERSATION:", *CONVERSATION_LINES[:3]],
    ("ragdive.evaluation", "base/persona_adherence"): [f"Persona: {PERSONA.description}", BASE_CONVERSATION_LINES[0]],
    ("ragdive.evaluation", "base/refused"): ["Assistant's answer: The knowledge base does not say."],
    ("ragdive.evaluation", "faithfulness_in_conversation"): ["EARLIER TURNS:", "QUESTION:", "RETRIEVED CONTEXTS:"],
    ("ragdive.evaluation", "base/faithfulness_in_conversation"): [
        "[1] Its lighthouse was built in 1852 by Anna Brecht."
    ],
    ("ragdive.targets.reference", "answer"): [],
    ("ragdive.targets.reference", "question"): ["Passages:", *CONTEXT_LINES, "", "Question: and who built it?"],
    ("ragdive.targets.reference", "rerank"): ["Query: Veldmark lighthouse builder", *CONTEXT_LINES],
    ("ragdive.targets.reference", "rewrite"): ["user: When was the Veldmark lighthouse built?", "Stand-alone query:"],
    ("ragdive.targets.reference", "base/answer"): [*CONTEXT_LINES, "Question: and who built it?"],
    ("ragdive.targets.reference", "base/rerank"): ["Query: Veldmark lighthouse builder", *CONTEXT_LINES],
}


def prompt_files_on_disk() -> list[tuple[str, str]]:
    out = []
    for package in PACKAGES:
        folder = resources.files(package).joinpath("prompts")
        for entry in folder.iterdir():
            if entry.name.endswith(".md"):
                out.append((package, entry.name.removesuffix(".md")))
        base = folder.joinpath("base")
        if base.is_dir():
            out.extend(
                (package, f"base/{e.name.removesuffix('.md')}") for e in base.iterdir() if e.name.endswith(".md")
            )
    return sorted(out)


def test_every_prompt_file_has_realistic_data_and_expected_lines() -> None:
    on_disk = prompt_files_on_disk()
    assert on_disk, "no prompt files found"
    assert [p for p in on_disk if p not in EXPECTED_LINES] == []
    assert [p for p in EXPECTED_LINES if p not in on_disk] == []


GLUED = [
    re.compile(r"\S(USER|ASSISTANT): "),  # a transcript label glued to the text before it
    re.compile(r"\bTurn \d+[A-Za-z(]"),  # "Turn 0USER", "Turn 2(builds"
    re.compile(r"\S--- Turn"),
    re.compile(r"[^\n]# (Source|Conversation|Your task|Draft|The user|Rules)"),  # a heading not on its own line
    re.compile(r"\]\s*\[\d+\]"),  # two numbered passages on one line
]


@pytest.mark.parametrize("probe", [False, True], ids=["answerable", "probe"])
@pytest.mark.parametrize(("package", "name"), sorted(EXPECTED_LINES))
def test_prompt_renders_with_its_layout(package: str, name: str, probe: bool) -> None:
    text = prompt_files.render_prompt(package, name, **VARIABLES[package](name, probe))
    assert text.strip(), "renders empty"
    assert "{{" not in text and "{%" not in text and "{#" not in text
    assert "\n\n\n" not in text, "a run of blank lines"
    assert not [line for line in text.splitlines() if line != line.rstrip()], "trailing spaces"
    for pattern in GLUED:
        assert not pattern.search(text), f"{pattern.pattern!r} in {pattern.search(text)!r}: {text[:2000]}"
    lines = text.splitlines()
    returns = [n for n, line in enumerate(lines) if line.startswith("Return {")]
    if returns:  # the answer format stands apart from the task
        assert returns[0] > 0 and lines[returns[0] - 1] == "", text
    for expected in EXPECTED_LINES[package, name]:
        if expected == "":
            continue
        assert any(line == expected or line.startswith(expected) for line in lines), (expected, text)
    # a blank line asked for between two expected lines is kept
    wanted = EXPECTED_LINES[package, name]
    for i, expected in enumerate(wanted[1:-1], 1):
        if expected == "":
            before = next(n for n, line in enumerate(lines) if line.startswith(wanted[i - 1]))
            assert lines[before + 1] == "", (wanted[i - 1], text)


def test_the_turn_numbers_of_every_simulation_and_judge_prompt_count_from_one() -> None:
    for package, name in sorted(EXPECTED_LINES):
        if package == "ragdive.targets.reference":
            continue
        text = prompt_files.render_prompt(package, name, **VARIABLES[package](name))
        assert not re.search(r"\bturn 0\b", text, re.IGNORECASE), (name, text)


@pytest.mark.parametrize("probe", [False, True], ids=["answerable", "probe"])
@pytest.mark.parametrize(("package", "name"), sorted(EXPECTED_LINES))
def test_prompt_text_is_what_jinja_renders_from_the_file(package: str, name: str, probe: bool) -> None:
    """The loader's templates (their globals one plain dict, not jinja's ChainMap) render exactly what a template
    jinja makes from the same file, in the same environment with its own globals, renders."""
    loaded = prompt_files.load_prompt(package, name)
    assert type(loaded.globals) is dict
    # jinja's own template of the same file in the loader's environment (its options not restated here)
    stock = prompt_files._ENVIRONMENT.from_string(prompt_files.prompt_path(package, name).read_text(encoding="utf-8"))
    assert type(stock.globals) is not dict  # jinja's ChainMap: the reference is not the loader's shortcut
    assert loaded.globals == dict(stock.globals)
    variables = VARIABLES[package](name, probe)
    assert prompt_files.render_prompt(package, name, **variables) == stock.render(**variables).strip()
