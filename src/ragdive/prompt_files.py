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
    template = _ENVIRONMENT.from_string(path.read_text(encoding="utf-8"))
    # jinja keeps a template's globals as a ChainMap over the environment's and copies them into a new dict at every
    # render: iterating the ChainMap was ~4 of a ~6 us render (6,400 prompts in a 200 x 5 run). The same names and
    # values as one plain dict (nothing adds globals to this environment after a template is loaded).
    template.globals = dict(template.globals)
    return template


def render_prompt(package: str, name: str, **variables: Any) -> str:
    return load_prompt(package, name).render(**variables).strip()


def prompt_path(package: str, name: str) -> Any:
    """The file of ``package``'s prompt ``name`` (a Traversable; it may not exist)."""
    return resources.files(package).joinpath("prompts", *f"{name}.md".split("/"))


def has_prompt(package: str, name: str) -> bool:
    return bool(prompt_path(package, name).is_file())
