"""Prompt profiles: which prompts a role sends to a model.

`chat` prompts are instructions for instruction-tuned models. `base` prompts are for base (not instruction-tuned)
models, which copy or continue instructions rather than follow them: a short completion-style transcript whose
few-shot examples show exactly what to write, and a JSON schema bounded so tightly (short strings, few list items,
enums where the answer must be one of a few values) that the grammar-constrained output is short and always fits
in the token budget. The roles (simulation, evaluation, reference RAG) pick their prompt files and schemas by
``Model.prompt_profile``; this module only decides the profile and bounds schemas.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import MaxLen, MinLen
from pydantic import BaseModel, Field, StringConstraints, create_model

from ..config.models import ModelSpec

PromptProfile = Literal["base", "chat"]

BASE_MODELS = frozenset({"llamacpp/default"})
"""Models known to be base models: the packaged Gemma-3-270M. Any other model is `chat` unless its spec says
``prompt_profile: base``."""

TEXT_CHARS = 80
"""Longest free-text field in a base-profile answer (a reason, a claim): long enough for one short sentence."""
LIST_ITEMS = 2
"""Most items in a list field of a base-profile answer."""


def short_text(max_chars: int, min_chars: int = 0) -> Any:
    """A string type of at most ``max_chars`` characters on one line, with no quote or backslash. Written as a
    pattern, not maxLength: the grammar llama-cpp-python compiles from maxLength lets raw newlines into the
    string (measured: "control character found while parsing a string"), which is not valid JSON."""
    return Annotated[str, StringConstraints(pattern=rf'^[^\x00-\x1f"\\]{{{min_chars},{max_chars}}}$')]


def resolve_profile(spec: ModelSpec) -> PromptProfile:
    """The spec's ``prompt_profile``, or `base` for the known base models and `chat` for the rest."""
    if spec.prompt_profile is not None:
        return spec.prompt_profile
    return "base" if spec.model in BASE_MODELS else "chat"


@cache
def bounded_schema(
    schema: type[BaseModel], text_chars: int = TEXT_CHARS, list_items: int = LIST_ITEMS, exact: bool = False
) -> type[BaseModel]:
    """A subclass of ``schema`` whose string fields have at most ``text_chars`` characters, whose list fields at
    most ``list_items`` items, and whose fields are all required (nested models bounded the same way). An instance
    is still a ``schema``, so the code that reads the answer does not change; the grammar compiled from it writes
    every field and cannot run past the token budget. ``exact``: the top-level lists have exactly ``list_items``
    items (one verdict per retrieved context: a base model copies its example's count otherwise)."""
    fields: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        annotation = _bound(info.annotation, text_chars, list_items)
        metadata = list(info.metadata)
        if get_origin(info.annotation) is list:  # the tighter of the field's own limit and ours
            own = [m.max_length for m in metadata if getattr(m, "max_length", None) is not None]
            metadata = [m for m in metadata if getattr(m, "max_length", None) is None]
            metadata.append(MaxLen(min([list_items, *own])))
            if exact:
                metadata = [m for m in metadata if getattr(m, "min_length", None) is None]
                metadata.append(MinLen(list_items))
        if metadata:
            annotation = Annotated[(annotation, *metadata)]  # type: ignore[valid-type]
        fields[name] = (annotation, Field(description=info.description))  # required: the grammar writes it
    if not fields:
        return schema
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        f"Short{schema.__name__}", __base__=schema, __module__=schema.__module__, **fields
    )
    return model


def _bound(annotation: Any, text_chars: int, list_items: int) -> Any:
    if annotation is str:
        return short_text(text_chars)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return bounded_schema(annotation, text_chars, list_items)
    origin = get_origin(annotation)
    if origin is list:
        (item,) = get_args(annotation)
        return list[_bound(item, text_chars, list_items)]  # type: ignore[misc]
    if origin in (Union, types.UnionType):
        args = tuple(_bound(a, text_chars, list_items) for a in get_args(annotation))
        return typing.Union[args]  # noqa: UP007 - built from a tuple
    return annotation
