"""The LLM layer: the only code in ragdive that talks to language models."""

from .base import Completion, GenerateParams, Message, ModelBackend
from .cache import CompletionCache
from .context import ModelContext
from .model import Model, get_model
from .registry import create_backend, known_providers, register_backend
from .roles import apply_model_overrides, models_for_roles
from .scripted import ScriptedModel
from .structured import parse_structured, repair_json
from .usage import UsageLedger, price_for

__all__ = [
    "Completion",
    "CompletionCache",
    "GenerateParams",
    "Message",
    "Model",
    "ModelBackend",
    "ModelContext",
    "ScriptedModel",
    "UsageLedger",
    "apply_model_overrides",
    "create_backend",
    "get_model",
    "known_providers",
    "models_for_roles",
    "parse_structured",
    "price_for",
    "register_backend",
    "repair_json",
]
