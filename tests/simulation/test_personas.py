from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.errors import ConfigError
from ragdive.simulation import DialogueSettings, Generator, Validator, run_dialogue
from ragdive.simulation.personas import builtin_personas, resolve_personas

from .helpers import EchoTarget, plan, user_model, validator_model

BUILTINS = ["precise", "attentive", "confused", "skeptical", "explorer"]


def test_the_builtin_library() -> None:
    personas = builtin_personas()
    assert set(BUILTINS) <= set(personas)
    for persona in personas.values():
        assert persona.description and len(persona.instructions) >= 2


@pytest.mark.parametrize("name", BUILTINS)
async def test_each_personas_instructions_reach_the_generator_and_the_validator(name: str) -> None:
    user, user_calls = user_model()
    validator, validator_calls = validator_model()
    await run_dialogue(
        plan(name),
        generator=Generator(user),
        validator=Validator(validator),
        target=EchoTarget(),
        settings=DialogueSettings(max_turns=1),
    )
    persona = builtin_personas()[name]
    system = user_calls.calls[0].messages[0].content
    assert persona.description in system
    assert all(rule in system for rule in persona.instructions)
    assert all(rule in validator_calls.calls[0].messages[0].content for rule in persona.instructions)
    others = [p for n, p in builtin_personas().items() if n != name]
    assert not any(p.instructions[0] in system for p in others)


def test_unknown_persona_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        resolve_personas(["precise", "grumpy"])
    assert "unknown persona 'grumpy'" in str(err.value)
    assert all(name in str(err.value) for name in BUILTINS)


async def test_a_custom_yaml_persona_works(tmp_path: Path) -> None:
    file = tmp_path / "team.yaml"
    file.write_text(
        "personas:\n"
        "  - name: lawyer\n"
        "    description: A pedantic lawyer.\n"
        "    instructions: ['Ask for exact dates and quote numbers back.', 'Always end with \"precisely?\"']\n"
        "    preferred_question_types: [clarification]\n"
        "  - name: precise\n"
        "    description: Overridden precise.\n"
        "    instructions: ['Custom rule.']\n"
    )
    lawyer, precise = resolve_personas(["lawyer", "precise"], [str(file)])
    assert lawyer.name == "lawyer" and precise.description == "Overridden precise."

    user, user_calls = user_model()
    validator, _ = validator_model()
    p = plan()
    p.persona = lawyer
    await run_dialogue(
        p,
        generator=Generator(user),
        validator=Validator(validator),
        target=EchoTarget(),
        settings=DialogueSettings(max_turns=1),
    )
    system = user_calls.calls[0].messages[0].content
    assert "A pedantic lawyer." in system and 'Always end with "precisely?"' in system and "clarification" in system


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name: x\ndescription: d\ninstructions: [a]\ninstructionz: [b]\n", "unknown field(s) instructionz"),
        ("name: x\ndescription: d\ninstructions: []\n", "at least one instruction"),
        ("name: x\ndescription: d\ninstructions: [a]\npreferred_question_types: [rant]\n", "unknown question type"),
        ("- just a string\n", "expected a mapping"),
        ("name: [unclosed\n", "invalid YAML"),
        (
            "name: x\ndescription: d\ninstructions: [a]\ninstructions: [b]\n",
            "key 'instructions' is repeated (lines 3 and 4)",
        ),
    ],
)
def test_bad_persona_files_are_config_errors(tmp_path: Path, content: str, message: str) -> None:
    file = tmp_path / "p.yaml"
    file.write_text(content)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_personas(["x"], [str(file)])


def test_a_missing_persona_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="persona file .*nope.yaml does not exist"):
        resolve_personas(["precise"], [str(tmp_path / "nope.yaml")])


def test_a_binary_persona_file_is_a_config_error(tmp_path: Path) -> None:
    file = tmp_path / "p.yaml"
    file.write_bytes(b"name: x\n\xf5\x00\x9c binary")  # was a UnicodeDecodeError: 'this is a bug', exit 1
    with pytest.raises(ConfigError, match=r"persona file .*p.yaml is not UTF-8 text \(byte 8\)"):
        resolve_personas(["x"], [str(file)])
