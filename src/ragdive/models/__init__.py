"""The LLM layer: the only code in ragdive that talks to language models."""

from .base import Completion, GenerateParams, Message, ModelBackend
from .model import Model, get_model, parse_structured
from .registry import create_backend, known_providers, register_backend
from .scripted import ScriptedModel

__all__ = [
    "Completion",
    "GenerateParams",
    "Message",
    "Model",
    "ModelBackend",
    "ScriptedModel",
    "create_backend",
    "get_model",
    "known_providers",
    "parse_structured",
    "register_backend",
]
