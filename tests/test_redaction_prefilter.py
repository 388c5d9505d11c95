"""The text pass uses only the patterns whose words a text holds (redaction._NEEDS): it must mask exactly what the
whole alternation masks, on texts that hold every pattern's trigger in every case form re.IGNORECASE folds."""

from __future__ import annotations

import json
import random

import pytest

from ragdive import redaction
from ragdive.redaction import forget_secrets, redact_text, register_secret

PIECES = [
    "the river flows through the valley",
    '"api_key": "abcd1234efgh5678"',
    '"prompt_tokens": "12"',
    '"Authorization":"Basic dXNlcjpwYXNzd29yZA=="',
    "password = hunter2hunter",
    "PaSSwd: s3cr3tvalue",
    "see https://user:pw@example.org/hook/AbCdEf0123456789AbCdEf0123?code=xyz&page=2",
    "HTTP://EXAMPLE.ORG/a?sig=0a1b2c3d4e5f6a7b8c9d",
    "Bearer abcdefgh12345678",
    "token  ZYXWVUT987654321",
    "sk-ABCDEFGHIJKLMNOPQRSTUV",
    "AKIAABCDEFGHIJKLMNOP",
    "ghp_abcdefghijklmnopqrstuvwxyz",
    "xoxb-1234567890-abcdef",
    "monkey keyword author cookies",
    "\u017fk-ABCDEFGHIJKLMNOPQRSTUV",  # long s: re.IGNORECASE matches it to "s"
    "\u212aEY",  # the Kelvin sign folds to "k"
    "acce\u017f\u017f_token: \u0130abcdefgh",
    "My-Known-Secret-9876",
    "my-known-secret-9876",
    "\u03c3\u03b5\u03c1\u03b5\u03c2-K\u00c9Y-1",  # a final sigma: re folds it to the secret, str.lower does not
    'a "quoted \\"string\\" here"',
    # the words of the JSON and Bearer patterns where those cannot match (their hints) and where they can
    '{"prompt_tokens":12,"completion_tokens":3,"tokenizer":"bpe"}',
    '"x_auth_y" :\t "v4lue"',
    '"author": "someone", "authority": "x"',
    '"ſecret_name":"abc"',
    "TOKEN\tabcdefgh1234 and tokens abcdefgh1234",
    "basic\u00a0abcdefghijkl",
    # words inside words (found at every place, not only after the last one found)
    '{"accessecretoken": "abcdefgh1234"}',
    "basicookie TOKEN abcdefgh1234 akiapi_key=abcdefgh",
]


def whole_alternation(text: str) -> str:
    names = (*redaction._FIXED_PATTERNS, "known")
    return redaction._pattern(names).sub(redaction._replace, text)


@pytest.mark.parametrize("secret", ["My-Known-Secret-9876", "\u03c3\u03b5\u03c1\u03b5\u03c3-k\u00e9y-1"])
def test_the_prefiltered_pass_masks_what_the_whole_alternation_masks(secret: str) -> None:
    forget_secrets()
    try:
        register_secret(secret)
        rng = random.Random(27)
        texts = [" ".join(rng.sample(PIECES, rng.randint(1, 6))) for _ in range(400)]
        texts += [json.dumps({"text": t, "n": 1}, ensure_ascii=rng.random() < 0.5) for t in texts[:200]]
        texts += PIECES
        differ = [t for t in texts if redact_text(t) != whole_alternation(t)]
        assert not differ, differ[:3]
        masked = sum(redact_text(t) != t for t in texts)
        assert masked > len(texts) // 2  # the texts did exercise the masking
        assert redact_text("the river flows") == "the river flows"
    finally:
        forget_secrets()


def test_a_word_where_its_pattern_cannot_match_skips_that_pattern() -> None:
    """A run file's usage fields ("prompt_tokens": 12) hold "token", which both the JSON and the Bearer patterns
    need, but neither can match there (a number, no space after the word): their hints say so."""
    line = json.dumps({"usage": {"prompt_tokens": 12, "completion_tokens": 3}, "text": "the river"})
    assert redaction._needed(line) == ()
    assert redaction._needed('{"x_token": "abc"}') == ("json",)
    assert redaction._needed("Token abcdefgh1234") == ("bearer",)


def test_a_text_without_any_trigger_skips_every_pattern() -> None:
    assert redaction._needed("the river flows through the valley, 3 km long") == ()
    assert redaction._needed("see http://x.org") == ("url",)
    assert "shape" in redaction._needed("\u017fk-ABCDEFGHIJKLMNOPQRSTUV")


def test_every_place_of_every_word_is_found() -> None:
    """One pass finds where the patterns' words are: no word may start another (the pass would see only one of
    them at that place), and a word inside another word is found too."""
    words = {w for ws in redaction._NEEDS.values() for w in ws}
    assert not [(a, b) for a in words for b in words if a != b and b.startswith(a)]
    assert redaction._places("accessecretoken://") == {"access": [0], "secret": [5], "token": [10], "://": [15]}
    assert redaction._places("the river") == {}
