"""The floor under a cached re-run: what a process pays that does none of ragdive's work but what no re-run can
skip. The target is the system under test and is never cached, so even a re-run whose every model call is a cache
hit starts Python and sends the target's requests. This script, run as its own process by benchmarks/tail.py,
does just that: it imports aiohttp (and uvloop where ragdive's commands use it) and replays the request bodies it
is given on bare aiohttp, with the same number in flight, decoding each reply's JSON. From the process's start
to its last reply is the floor (the moment is printed on the monotonic clock tail.py shares); tail.py prints the
re-run's wall beside it.

Then, after that moment, it imports the other third-party packages `ragdive run` imports (pydantic, numpy,
rich, typer, PyYAML, jinja2, ...) and prints how long they took: a part of start-up that ragdive could defer but
not avoid, since a run's end needs them (records, the summary's bootstrap, the printed tables, the prompts).

    python benchmarks/rerun_floor.py ENDPOINT BODIES.json IN_FLIGHT
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import asyncio  # noqa: E402 - timed from the first line
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import aiohttp  # noqa: E402

try:
    import uvloop  # noqa: E402
except ImportError:  # Windows: ragdive's commands run on asyncio's loop there too
    uvloop = None

RUN_IMPORTS = ("pydantic", "numpy", "rich.console", "typer", "yaml", "jinja2", "orjson", "jmespath", "httpx")
"""Third-party packages `ragdive run` imports besides aiohttp (python -X importtime of its modules)."""


async def replay(url: str, bodies: list[dict[str, object]], in_flight: int) -> None:
    slots = asyncio.Semaphore(in_flight)
    async with aiohttp.ClientSession() as session:

        async def one(body: dict[str, object]) -> None:
            async with slots, session.post(url, json=body) as response:
                response.raise_for_status()
                json.loads(await response.read())

        await asyncio.gather(*(one(body) for body in bodies))


def main() -> int:
    url, bodies_file, in_flight = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    bodies = json.loads(bodies_file.read_text())
    imported = time.perf_counter()
    (uvloop.run if uvloop is not None else asyncio.run)(replay(url, bodies, in_flight))
    replayed, replayed_at = time.perf_counter(), time.monotonic()
    for name in RUN_IMPORTS:
        __import__(name)
    others = time.perf_counter() - replayed
    figures = {"imports_s": imported - STARTED, "requests_s": replayed - imported, "run_imports_s": others}
    print(json.dumps({**figures, "replayed_at": replayed_at}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
