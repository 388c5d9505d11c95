"""ragdive: evaluate RAG systems through simulated multi-turn conversations."""

from ._version import __version__
from .errors import (
    ConfigError,
    JudgeError,
    ModelError,
    ModelOutputError,
    RagdiveError,
    StoreError,
    TargetError,
)

__all__ = [
    "ConfigError",
    "JudgeError",
    "ModelError",
    "ModelOutputError",
    "RagdiveError",
    "StoreError",
    "TargetError",
    "__version__",
]
