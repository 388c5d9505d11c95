from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class _AllFields(set[str]):
    """Every field of one record class, shared by all its instances that were given every field (each line read
    from a run file is: its records are dumped whole). Pydantic keeps a set of the fields given for each instance:
    ~650 bytes for a record of 5 to 18 fields, ~45 % of a conversation's memory and ~25 % of a score's once read.
    Never changed in place: ``Record.__setattr__`` gives an instance its own copy before pydantic adds to it."""


_SHARED: dict[type, _AllFields] = {}


class Record(BaseModel):
    """Base of every record written to a run: unknown fields are kept (forward compatible readers),
    enums are stored as their values."""

    model_config = ConfigDict(extra="allow", use_enum_values=True, use_attribute_docstrings=True)

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        shared = _SHARED.get(type(self))
        if shared is None:
            shared = _SHARED.setdefault(type(self), _AllFields(type(self).model_fields))
        if len(given) == len(shared) and given == shared:
            object.__setattr__(self, "__pydantic_fields_set__", shared)

    def __setattr__(self, name: str, value: Any) -> None:
        if type(self.__pydantic_fields_set__) is _AllFields:  # pydantic adds the name (an extra field's too)
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


def utc_now() -> datetime:
    return datetime.now(UTC)
