"""Secret redaction, applied before anything reaches disk or the terminal."""

from __future__ import annotations

import re
from typing import Any

MASK = "***"

# Matched against dictionary keys at any depth: api_key, apiKey, x-api-key, token, client_secret, password,
# Authorization... Deliberately broad: a masked harmless value costs nothing, a leaked key costs a lot.
_SECRET_KEY = re.compile(r"(key|token|secret|password|passwd|authorization|credential)", re.IGNORECASE)
# Keys that contain a secret-looking word but count things (token counts: "max_tokens", "prompt_tokens").
# Singular "access_token" stays secret.
_NOT_SECRET = re.compile(r"(tokens$|^max_|_count$)", re.IGNORECASE)


# URLs inside any string (a base_url, a target's description "http POST https://…"): their password and their
# secret-named query parameters are masked, so `?key=${TOKEN}` never reaches the manifest or the terminal.
_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.IGNORECASE)
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://[^/@:?#]*):[^/@?#]*@", re.IGNORECASE)
_QUERY_PARAM = re.compile(r"([?&;])([^=&;#]+)=([^&;#]*)")


def _redact_one_url(match: re.Match[str]) -> str:
    url = _USERINFO.sub(rf"\1:{MASK}@", match.group(0))

    def mask(param: re.Match[str]) -> str:
        sep, name, value = param.groups()
        return f"{sep}{name}={MASK}" if value and is_secret_key(name) else param.group(0)

    return _QUERY_PARAM.sub(mask, url)


def redact_urls(text: str) -> str:
    return _URL.sub(_redact_one_url, text) if "://" in text else text


def redact_text(text: str) -> str:
    """A piece of free text (an error message, a command line) with the secrets in its URLs masked."""
    return redact_urls(text)


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and not _NOT_SECRET.search(key)


def redact(value: Any) -> Any:
    """Return a copy of ``value`` with every secret-named key's value masked, at any depth, and the secrets in
    URLs inside strings (see redact_urls)."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and is_secret_key(k) and v not in (None, ""):
                out[k] = MASK
            else:
                out[k] = redact(v)
        return out
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_urls(value)
    return value
