"""Test helpers that are real parts: a fault-injecting OpenAI-compatible server on loopback, in a thread
(StubServer) or in its own process (StubProcess)."""

from .faults import Fault, FaultRates, ReceivedRequest
from .schema_example import example_for_schema
from .stub_process import StubProcess
from .stub_server import StubServer

__all__ = ["Fault", "FaultRates", "ReceivedRequest", "StubProcess", "StubServer", "example_for_schema"]
