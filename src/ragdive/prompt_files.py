"""The one loader of prompt files. Prompts are jinja2 files shipped in a package's ``prompts/`` folder (the
simulation's, the judge's, the reference RAG's; a ``base/`` subfolder holds the base-model profile's variants).

One set of options for all of them: a missing variable is a bug, not an empty string in a prompt (StrictUndefined);
block tags on their own lines leave no blank lines (trim_blocks, lstrip_blocks); nothing is HTML-escaped, since
documents and answers are sent verbatim; the rendered text is stripped."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2

_ENVIRONMENT = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
    autoescape=False,
)


@cache
def load_prompt(package: str, name: str) -> jinja2.Template:
    """``package``'s ``prompts/<name>.md`` (``name`` may be ``base/<stem>``)."""
    path = prompt_path(package, name)
    return _ENVIRONMENT.from_string(path.read_text(encoding="utf-8"))


def render_prompt(package: str, name: str, **variables: Any) -> str:
    return load_prompt(package, name).render(**variables).strip()


def prompt_path(package: str, name: str) -> Any:
    """The file of ``package``'s prompt ``name`` (a Traversable; it may not exist)."""
    return resources.files(package).joinpath("prompts", *f"{name}.md".split("/"))


def has_prompt(package: str, name: str) -> bool:
    return bool(prompt_path(package, name).is_file())
