"""The one loader of prompt files. Prompts are jinja2 files shipped in a package's ``prompts/`` folder (the
simulation's, the judge's, the reference RAG's; a ``base/`` subfolder holds the base-model profile's variants).

One set of options for all of them: a missing variable is a bug, not an empty string in a prompt (StrictUndefined);
block tags on their own lines leave no blank lines (trim_blocks, lstrip_blocks); nothing is HTML-escaped, since
documents and answers are sent verbatim; the rendered text is stripped. A prompt is compiled once, then kept
compiled from one process to the next (template_cache.py)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2

from .template_cache import bytecode_cache


def _source(name: str) -> tuple[str, str, None]:
    """The loader's answer for ``package:name``: the prompt's text and its file (the compiled cache's key); never
    out of date (each prompt is loaded once per process)."""
    package, _, prompt = name.partition(":")
    path = prompt_path(package, prompt)
    return path.read_text(encoding="utf-8"), str(path), None


_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FunctionLoader(_source),
    bytecode_cache=bytecode_cache(),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
    autoescape=False,
)


@cache
def load_prompt(package: str, name: str) -> jinja2.Template:
    """``package``'s ``prompts/<name>.md`` (``name`` may be ``base/<stem>``)."""
    template = _ENVIRONMENT.get_template(f"{package}:{name}")
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
