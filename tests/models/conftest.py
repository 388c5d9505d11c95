from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from ragdive.testing import StubServer


class Capital(BaseModel):
    capital: str
    population_millions: int


@pytest.fixture(scope="module")
def _stub_server() -> Iterator[StubServer]:
    with StubServer(api_key="sk-test-stub-key", keep_requests=True) as server:
        yield server


@pytest.fixture
def stub(_stub_server: StubServer) -> Iterator[StubServer]:
    """The loopback stub, with an empty fault plan and request log for each test."""
    _stub_server.reset()
    yield _stub_server
    _stub_server.reset()
