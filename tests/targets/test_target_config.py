from __future__ import annotations

import pytest

from ragdive.config import validate_config
from ragdive.errors import ConfigError


def test_config_errors_name_the_field_without_the_union_tag() -> None:
    with pytest.raises(ConfigError, match=r"target\.runnable: required field is missing"):
        validate_config({"target": {"type": "langchain", "runable": "x:y"}})
    with pytest.raises(ConfigError, match=r"target\.history: got 'last'"):
        validate_config({"target": {"type": "reference", "history": "last"}})
