"""Prompt files of the reference RAG (jinja2)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

_DIR = Path(__file__).parent
_ENV = jinja2.Environment(autoescape=False, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)


@cache
def template(name: str) -> jinja2.Template:
    return _ENV.from_string((_DIR / f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **values: object) -> str:
    return template(name).render(**values).strip()
