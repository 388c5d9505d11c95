"""The LLM layer: the only code in ragdive that talks to language models."""

from .base import Completion, GenerateParams, Message, ModelBackend
from .model import Model, get_model, parse_structured
from .registry import create_backend, known_providers, register_backend
from .roles import apply_model_overrides, models_for_roles
from .scripted import ScriptedModel

__all__ = [
    "Completion",
    "GenerateParams",
    "Message",
    "Model",
    "ModelBackend",
    "ScriptedModel",
    "apply_model_overrides",
    "create_backend",
    "get_model",
    "known_providers",
    "models_for_roles",
    "parse_structured",
    "register_backend",
]
