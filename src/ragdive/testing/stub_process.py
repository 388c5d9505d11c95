"""The stub server in its own process, programmed over its control API.

For throughput and reliability harnesses: a server thread inside the measuring process competes with the client
for the GIL, so its figures say more about that contention than about either side. Same programming surface as
StubServer: ``plan(...)``, ``requests``, ``request_count``, ``reset()``.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import httpx

from .faults import Fault, FaultRates, ReceivedRequest, fault_from_dict, fault_to_dict, rates_to_dict


class StubProcess:
    def __init__(
        self,
        *,
        api_key: str | None = None,
        port: int = 0,
        reply: str | None = None,
        latency_s: float = 0.0,
        keep_requests: bool = False,
    ) -> None:
        """``keep_requests``: the server keeps every request for ``requests`` (off: it only counts them).
        ``reply``: ``module:function`` that answers a request body with text (importable in the child);
        ``latency_s``: every normal answer waits this long (the server's --latency)."""
        self.latency_s = latency_s
        self.api_key = api_key
        self.reply = reply
        self.keep_requests = keep_requests
        self.port = port
        self.base_url = ""
        self._proc: subprocess.Popen[str] | None = None

    def start(self) -> StubProcess:
        cmd = [sys.executable, "-m", "ragdive.testing", "--port", str(self.port)]
        if self.api_key:
            cmd += ["--api-key", self.api_key]
        if self.reply:
            cmd += ["--reply", self.reply]
        if self.latency_s:
            cmd += ["--latency", str(self.latency_s)]
        if self.keep_requests:
            cmd += ["--keep-requests"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()  # the server prints its base URL once it is listening
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"stub server process did not start (said {line!r})")
        self.base_url = line
        self.port = int(line.rsplit(":", 1)[1].split("/", 1)[0])
        return self

    def _control(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        root = self.base_url.removesuffix("/v1")
        response = httpx.request(method, f"{root}/_stub/{path}", json=body, timeout=10)
        response.raise_for_status()
        return dict(response.json())

    def plan(self, *faults: Fault) -> StubProcess:
        self._control("POST", "plan", {"faults": [fault_to_dict(f) for f in faults]})
        return self

    def chaos(self, rates: FaultRates | None) -> StubProcess:
        """Random faults at these rates past the plan (None: none)."""
        self._control("POST", "chaos", {"rates": rates_to_dict(rates) if rates else None})
        return self

    def reset(self) -> None:
        self._control("POST", "reset")

    def latency(self, seconds: float) -> StubProcess:
        """Every normal answer from now on waits ``seconds`` (a run that must still be working when a second
        command starts beside it)."""
        self._control("POST", "latency", {"seconds": seconds})
        return self

    @property
    def requests(self) -> list[ReceivedRequest]:
        items = self._control("GET", "requests")["requests"]
        return [ReceivedRequest(**{**item, "fault": fault_from_dict(item["fault"])}) for item in items]

    @property
    def pid(self) -> int:
        """The server process's id (a benchmark reads its CPU time)."""
        assert self._proc is not None, "the stub process is not started"
        return self._proc.pid

    @property
    def request_count(self) -> int:
        return int(self._control("GET", "stats")["count"])

    @property
    def peak_in_flight(self) -> int:
        """Most chat requests the server was answering at once since it started (or the last reset)."""
        return int(self._control("GET", "stats")["peak_in_flight"])

    @property
    def in_flight(self) -> int:
        """Chat requests being answered right now (a client killed now never reads their answers)."""
        return int(self._control("GET", "stats")["in_flight"])

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None

    def __enter__(self) -> StubProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
