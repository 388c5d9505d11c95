"""Experiment configuration: pydantic sections (extra="forbid") loaded from YAML."""

from .. import attribute_docs  # noqa: F401 - first: fields' descriptions read once per module (attribute_docs.py)
from .alarms import AlarmsConfig
from .components import RERANKERS, RETRIEVERS, RerankerType, RetrieverType
from .corpus import CorpusConfig
from .evaluation import EvaluationConfig
from .experiment import ExperimentConfig
from .loader import format_validation_error, interpolate_env, load_config, load_yaml, validate_config
from .models import ROLES, BudgetConfig, CacheConfig, ModelsConfig, ModelSpec
from .simulation import SimulationConfig
from .store import StoreConfig
from .target import (
    HttpTargetConfig,
    LangChainTargetConfig,
    LlamaIndexTargetConfig,
    OpenAIChatTargetConfig,
    PythonTargetConfig,
    ReferenceTargetConfig,
    SessionStartConfig,
    TargetSection,
)
from .target_types import TARGET_TYPES, TargetConfig, TargetType

__all__ = [
    "RERANKERS",
    "RETRIEVERS",
    "ROLES",
    "AlarmsConfig",
    "TARGET_TYPES",
    "RerankerType",
    "RetrieverType",
    "TargetSection",
    "TargetType",
    "BudgetConfig",
    "CacheConfig",
    "CorpusConfig",
    "EvaluationConfig",
    "ExperimentConfig",
    "HttpTargetConfig",
    "LangChainTargetConfig",
    "LlamaIndexTargetConfig",
    "ModelSpec",
    "ModelsConfig",
    "OpenAIChatTargetConfig",
    "PythonTargetConfig",
    "ReferenceTargetConfig",
    "SessionStartConfig",
    "SimulationConfig",
    "StoreConfig",
    "TargetConfig",
    "format_validation_error",
    "interpolate_env",
    "load_config",
    "load_yaml",
    "validate_config",
]
