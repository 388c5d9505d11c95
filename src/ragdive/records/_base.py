from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """Base of every record written to a run: unknown fields are kept (forward compatible readers),
    enums are stored as their values."""

    model_config = ConfigDict(extra="allow", use_enum_values=True, use_attribute_docstrings=True)


def utc_now() -> datetime:
    return datetime.now(UTC)
