"""Test helpers that are real parts: a fault-injecting OpenAI-compatible server on loopback."""

from .schema_example import example_for_schema
from .stub_server import Fault, ReceivedRequest, StubServer

__all__ = ["Fault", "ReceivedRequest", "StubServer", "example_for_schema"]
