"""Secret redaction, applied before anything reaches disk or the terminal: by name and by value.

By name, in structures (a config, a manifest): the value of every secret-named key (api_key, token, password,
cookie, auth...), every header value, and in every URL the userinfo and every query value.

By value, in any text (an answer, a judge's reason, an error message, a line of a run file, the terminal): every
secret ragdive knows of. It learns them from the config (``register_config_secrets``: values interpolated from
``${VAR}``, secret-named fields, header values, URL passwords and secret-looking query values) and from the model
layer (an API key read from the environment), so an OpenAI-compatible proxy whose 401 text echoes the key, or a
target that quotes its own URL, leaks nothing. Text also loses what looks like a credential whoever configured it
(``Bearer <token>``, ``sk-...``, ``AKIA...``, a long token in a URL path).

Cheap by design: one compiled pattern does every text pass (rebuilt only when a new secret is registered), and a run
file's line is masked as the JSON text it is, in one pass, not by walking the record.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from typing import Any

MASK = "***"

# Matched against dictionary keys at any depth: api_key, apiKey, x-api-key, token, client_secret, password,
# Authorization, Cookie, X-Auth, auth... Deliberately broad: a masked harmless value costs nothing, a leaked key
# costs a lot.
_SECRET_WORDS = r"key|token|secret|passw(?:or)?d|authorization|credential|cookie|signature|(?<![a-z])auth(?![a-z])"
_SECRET_KEY = re.compile(_SECRET_WORDS, re.IGNORECASE)
# Keys that contain a secret-looking word but count things (token counts: "max_tokens", "prompt_tokens").
# Singular "access_token" stays secret. "api_key_env" names a variable, not its value.
_NOT_SECRET = re.compile(r"(tokens$|^max_|_count$|_env$)", re.IGNORECASE)

MIN_SECRET_CHARS = 6
"""Shorter values are not searched for in text: "abc" would be masked inside every other word."""

_URL_TEXT = r"[a-z][a-z0-9+.-]*://[^\s\"'<>\\]+"
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)([^/@?#]*)@", re.IGNORECASE)
_QUERY_PARAM = re.compile(r"([?&;])([^=&;#]+)=([^&;#]*)")
_PATH_TOKEN = re.compile(r"(?<=/)(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}(?=[/?#]|$)")
"""A path segment that looks like a credential (24+ letters and digits, like a webhook's token)."""
_WORDS = re.compile(r"[A-Za-z]+(?:[_-][A-Za-z0-9]+){2,}")
"""Words joined by _ or - (a folder or file name: my_project_2024, test_run_results0): not a credential, even when
long and with a digit; a token does not read as words."""


def _token_segments(path: str) -> list[str]:
    return [seg for seg in _PATH_TOKEN.findall(path) if not _WORDS.fullmatch(seg)]


_FIXED_PATTERNS = {
    # a secret-named field of JSON text, its string value masked: "api_key": "sk-..." in a line or a message
    "json": r'"(?P<jkey>[^"\\]{0,40}(?:' + _SECRET_WORDS + r')[^"\\]{0,40})"\s*:\s*"(?P<jval>(?:[^"\\]|\\.)+)"',
    # key=value and key: value in prose (a log line, an error message)
    "kv": r"(?P<kvkey>\b(?:api[_-]?key|access[_-]?token|client[_-]?secret|password|passwd|secret)\b)"
    r"(?P<kvsep>\s*[=:]\s*)(?P<kvval>[^\s&\"',;]{4,})",
    "url": _URL_TEXT,
    "bearer": r"\b(?P<scheme>Bearer|Basic|Token)\s+(?P<cred>[A-Za-z0-9._~+/=-]{8,})",
    "shape": r"\bsk-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abpr]-[A-Za-z0-9-]{10,}",
}

# What each pattern needs in a text to match at all (in the text folded as re.IGNORECASE folds it): a text pass
# uses only the patterns whose words it holds. Python's re has no prefilter for an alternation: it tried every
# pattern at every position, ~140 us per KB of JSON, a tenth of a run's CPU (issue 27). Leaving out a pattern that
# cannot match anywhere in the text changes no match.
_NEEDS = {
    "json": ("key", "token", "secret", "passw", "credential", "cookie", "signature", "auth"),
    "kv": ("api", "access", "passw", "secret"),
    "url": ("://",),
    "bearer": ("bearer", "basic", "token"),
    "shape": ("sk-", "akia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xoxa-", "xoxb-", "xoxp-", "xoxr-"),
}


def _one_of(words: Iterable[str]) -> str:
    """An alternation of ``words`` grouped by their first character (``a(?:pi|uth)|key``): re tries each branch at
    every position of a text, and a branch per first character, not per word, scans ~1.4x faster."""
    by_first: dict[str, list[str]] = {}
    for word in sorted(words):
        by_first.setdefault(word[0], []).append(re.escape(word[1:]))
    return "|".join(
        re.escape(first) + (rests[0] if len(rests) == 1 else f"(?:{'|'.join(rests)})")
        for first, rests in by_first.items()
    )


_ANY_WORD = re.compile(_one_of({w for words in _NEEDS.values() for w in words}))
"""Any pattern's word (searched in the folded text): most texts a run masks (a model's answer, a score line) hold
none, and one search says so where a loop over the words took ~8 us a text (issue 27). No word starts another
("api" and "auth", never "api" and "apikey"), so at most one of them starts at any place of a text."""
# Two words are common in run files where their pattern cannot match: "token" in "prompt_tokens": 12 (a number,
# not a string) woke the JSON and the Bearer patterns for every conversation line, ~0.8 ms of regex for 9 KB. Such a
# pattern is used only if its hint, the part of it that starts at its word, matches at one of the places the word
# is (re's match at that index, same flags and lookarounds as the pattern: a necessary condition of a match).
_HINTS = {
    "json": re.compile("(?:" + _SECRET_WORDS + r')[^"\\]{0,40}"\s*:\s*"', re.IGNORECASE),
    "bearer": re.compile(r"(?:Bearer|Basic|Token)\s", re.IGNORECASE),
}
# The only non-ASCII characters re.IGNORECASE matches to an ASCII letter (checked over every code point).
_ODD_CASES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})

_known: set[str] = set()
_known_folded: tuple[str, ...] = ()
_known_non_ascii = False
"""A known secret with a non-ASCII character: re.IGNORECASE folds more than str.lower (final sigma), so the
known-secrets pattern is then always used."""
_lock = threading.Lock()
_compiled: dict[tuple[str, ...], re.Pattern[str]] = {}
_compiled_known: re.Pattern[str] | None = None


def _folded(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_ODD_CASES).lower()


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and not _NOT_SECRET.search(key)


# -- learning the secrets ----------------------------------------------------------------------------------------
def register_secret(value: object) -> None:
    """Mask ``value`` wherever it appears in text from now on (in this process)."""
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_CHARS or value == MASK:
        return
    forms = {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]}
    with _lock:
        if forms <= _known:
            return
        _known.update(forms)
        _known_changed()


def known_secrets() -> frozenset[str]:
    return frozenset(_known)


def forget_secrets() -> None:
    """Forget every registered secret (tests: each starts as a fresh process would)."""
    with _lock:
        _known.clear()
        _known_changed()


def _known_changed() -> None:
    """Under ``_lock``: the patterns are rebuilt at the next text pass."""
    global _compiled_known, _known_folded, _known_non_ascii
    _compiled.clear()
    _compiled_known = None
    _known_folded = tuple(_folded(v) for v in _known)
    _known_non_ascii = not all(v.isascii() for v in _known)


_PATH_FIELD = re.compile(r"(path|dir|file|output)$", re.IGNORECASE)


def is_path_field(name: str) -> bool:
    """Fields that name files and folders: an interpolated ``${DATA}/docs`` there is where to look, not a secret
    (masking it would hide the run directory a script reads from ragdive's output)."""
    return bool(_PATH_FIELD.search(name))


def register_config_secrets(value: Any, key: str = "") -> None:
    """Learn the secrets of a config tree: secret-named fields, header values, URL passwords, secret-named or
    token-looking query values, token-looking URL path segments."""
    if isinstance(value, dict):
        headers = key.lower() == "headers"
        for k, v in value.items():
            name = str(k)
            if headers or is_secret_key(name):
                if isinstance(v, str):
                    register_secret(v)
                    continue
            register_config_secrets(v, name)
    elif isinstance(value, list | tuple):
        for item in value:
            register_config_secrets(item, key)
    elif isinstance(value, str) and "://" in value:
        for url in re.finditer(_URL_TEXT, value, re.IGNORECASE):
            _register_url(url.group(0))


def _register_url(url: str) -> None:
    userinfo = _USERINFO.match(url)
    if userinfo and ":" in userinfo.group(2):
        register_secret(userinfo.group(2).split(":", 1)[1])
    for _, name, value in _QUERY_PARAM.findall(url):
        if _secret_param(name, value):
            register_secret(value)
    for segment in _token_segments(url.split("?", 1)[0]):
        register_secret(segment)


def _looks_like_token(value: str) -> bool:
    return len(value) >= 16 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# -- masking text ------------------------------------------------------------------------------------------------
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """The alternation of the fixed patterns ``names`` (in _FIXED_PATTERNS' order) and, with "known", every known
    secret; compiled once per set of names and secrets."""
    global _compiled_known
    compiled = _compiled.get(names)
    if compiled is not None:
        return compiled
    with _lock:
        parts = [f"(?P<{name}>{body})" for name, body in _FIXED_PATTERNS.items() if name in names]
        known = "|".join(re.escape(v) for v in sorted(_known, key=len, reverse=True))
        if known and "known" in names:
            parts.append(f"(?P<known>{known})")
        _compiled_known = re.compile(known) if known else None
        compiled = _compiled[names] = re.compile("|".join(parts), re.IGNORECASE)
        return compiled


def _needed(text: str) -> tuple[str, ...]:
    """The patterns that could match in ``text``."""
    folded = _folded(text)
    found = _places(folded)
    names: tuple[str, ...] = ()
    if found:  # most texts a run masks hold no word at all
        names = tuple(
            name
            for name, words in _NEEDS.items()
            if any(word in found for word in words) and (name not in _HINTS or _hinted(name, text, folded, found))
        )
    if _known_non_ascii or any(secret in folded for secret in _known_folded):
        names += ("known",)
    return names


def _places(folded: str) -> dict[str, list[int]]:
    """Where each word of _NEEDS is in ``folded``: every place, those inside another word's too ("token" in
    "secretoken"); one pass of _ANY_WORD, where a check of each word was a pass over the text each (a 9 KB
    conversation line holds "token" of its usage fields: ~24 passes over it, then the hints' own searches)."""
    found: dict[str, list[int]] = {}
    match = _ANY_WORD.search(folded)
    while match is not None:
        found.setdefault(match.group(), []).append(match.start())
        match = _ANY_WORD.search(folded, match.start() + 1)
    return found


def _hinted(name: str, text: str, folded: str, found: dict[str, list[int]]) -> bool:
    """Whether pattern ``name``'s hint matches where one of its words is (``folded`` keeps every character's index:
    _ODD_CASES turns the one character whose lower case is two into one)."""
    if len(folded) != len(text):
        return True  # not expected (see above); then the pattern is simply used
    hint = _HINTS[name]
    return any(hint.match(text, at) for word in _NEEDS[name] for at in found.get(word, ()))


_SECRET_PARAMS = frozenset({"code", "sig", "signature", "sv", "se", "sp", "st", "skoid", "sktid", "skey"})
"""Query parameters that carry credentials without a secret-looking name (Azure Functions' code, SAS signatures)."""


def _secret_param(name: str, value: str) -> bool:
    return is_secret_key(name) or name.lower() in _SECRET_PARAMS or _looks_like_token(value)


def _mask_url(url: str, every_value: bool = False) -> str:
    """Userinfo, token-like path segments and query values: every one (``every_value``: a URL the user configured)
    or those that look secret (a URL inside an answer, where ``?page=2`` is the text's, not a secret)."""
    url = _USERINFO.sub(lambda m: f"{m.group(1)}{_mask_userinfo(m.group(2))}@", url)

    def query(p: re.Match[str]) -> str:
        sep, name, value = p.groups()
        return f"{sep}{name}={MASK}" if value and (every_value or _secret_param(name, value)) else p.group(0)

    url = _QUERY_PARAM.sub(query, url)
    head, sep, tail = url.partition("?")
    return _PATH_TOKEN.sub(lambda m: m.group(0) if _WORDS.fullmatch(m.group(0)) else MASK, head) + sep + tail


def _mask_userinfo(userinfo: str) -> str:
    return f"{userinfo.split(':', 1)[0]}:{MASK}" if ":" in userinfo else MASK


def _replace(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "json":  # only the value's text: the key, quotes and spacing stay as they were
        start, end = match.start("jval") - match.start(), match.end("jval") - match.start()
        value = MASK if is_secret_key(match.group("jkey")) else redact_text(match.group("jval"))
        return match.group(0)[:start] + value + match.group(0)[end:]
    if kind == "kv":
        return f"{match.group('kvkey')}{match.group('kvsep')}{MASK}"
    if kind == "url":
        url = _mask_url(match.group(0))
        known = _compiled_known
        return known.sub(MASK, url) if known is not None else url
    if kind == "bearer":
        return f"{match.group('scheme')} {MASK}"
    return MASK  # a credential's shape, or a known secret


def redact_text(text: str) -> str:
    """``text`` with every known secret, every URL's credentials and query values, and anything shaped like a
    credential masked. Safe on JSON text: a mask never crosses a string's quotes or an escape."""
    if not text:
        return text
    names = _needed(text)
    return _pattern(names).sub(_replace, text) if names else text


def redact_urls(text: str) -> str:
    """The URLs of ``text`` (a configured URL, a target's description) with userinfo, every query value and
    token-like path segments masked."""
    if "://" not in text:
        return text
    return re.sub(_URL_TEXT, lambda m: _mask_url(m.group(0), every_value=True), text, flags=re.IGNORECASE)


def redact(value: Any, key: str = "") -> Any:
    """A copy of ``value`` (a config, a manifest) with every secret-named key's value and every header value
    masked at any depth, and every string's text redacted (see redact_text)."""
    if isinstance(value, dict):
        headers = key.lower() == "headers"
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if (headers or (isinstance(k, str) and is_secret_key(k))) and v not in (None, ""):
                out[k] = MASK
            else:
                out[k] = redact(v, str(k))
        return out
    if isinstance(value, list | tuple):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        return redact_text(redact_urls(value))
    return value
