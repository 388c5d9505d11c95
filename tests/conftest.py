from __future__ import annotations

import socket
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # the pytest plugin's tests run sample test files

SQUAD = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad"


@pytest.fixture(autouse=True)
def _no_outside_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests may talk to loopback only: a real request to the outside world fails loudly."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and not (str(host).startswith("127.") or host in ("localhost", "::1")):
            raise RuntimeError(f"test tried to reach {host}: only loopback is allowed in tests")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _no_secrets_from_other_tests() -> None:
    """The secrets a process learned (ragdive.redaction) are its own: one test's config must not mask another's."""
    from ragdive.redaction import forget_secrets

    forget_secrets()


@pytest.fixture
def squad_dir() -> Path:
    if not SQUAD.is_dir():
        pytest.skip(f"shared SQuAD data not present at {SQUAD}")
    return SQUAD
