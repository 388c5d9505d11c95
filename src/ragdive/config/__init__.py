"""Experiment configuration: pydantic sections (extra="forbid") loaded from YAML."""

from .corpus import CorpusConfig
from .evaluation import MULTI_TURN_METRICS, SINGLE_TURN_METRICS, EvaluationConfig
from .experiment import ExperimentConfig
from .loader import format_validation_error, interpolate_env, load_config, load_yaml, validate_config
from .models import ROLES, BudgetConfig, CacheConfig, ModelsConfig, ModelSpec
from .simulation import SimulationConfig
from .target import (
    HttpTargetConfig,
    LangChainTargetConfig,
    OpenAIChatTargetConfig,
    PythonTargetConfig,
    ReferenceTargetConfig,
    SessionStartConfig,
    TargetConfig,
)

__all__ = [
    "MULTI_TURN_METRICS",
    "ROLES",
    "SINGLE_TURN_METRICS",
    "BudgetConfig",
    "CacheConfig",
    "CorpusConfig",
    "EvaluationConfig",
    "ExperimentConfig",
    "HttpTargetConfig",
    "LangChainTargetConfig",
    "ModelSpec",
    "ModelsConfig",
    "OpenAIChatTargetConfig",
    "PythonTargetConfig",
    "ReferenceTargetConfig",
    "SessionStartConfig",
    "SimulationConfig",
    "TargetConfig",
    "format_validation_error",
    "interpolate_env",
    "load_config",
    "load_yaml",
    "validate_config",
]
