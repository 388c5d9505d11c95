"""Group commit: concurrent JSONL writes share fsyncs and each returns only once its line is on disk; the model
cache's batched writes are readable at once and on disk once settled; the judge's job window."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from ragdive.evaluation.window import bounded
from ragdive.models import Completion, CompletionCache
from ragdive.store.jsonl import JsonlAppender


async def test_concurrent_writes_share_fsyncs_and_each_line_is_on_disk_when_its_write_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lines.jsonl"
    appender = JsonlAppender(path)
    syncs = 0
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        nonlocal syncs
        syncs += 1
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)

    async def write(i: int) -> None:
        await appender.write({"i": i})
        on_disk = [json.loads(line)["i"] for line in path.read_text().splitlines()]
        assert i in on_disk  # told "written" only once it is

    await asyncio.gather(*(write(i) for i in range(200)))
    lines = [json.loads(line)["i"] for line in path.read_text().splitlines()]
    assert sorted(lines) == list(range(200))  # every record once, whole lines
    assert syncs < 200 / 4  # shared: far fewer fsyncs than records


async def test_a_cancelled_writer_does_not_strand_the_others(tmp_path: Path) -> None:
    appender = JsonlAppender(tmp_path / "lines.jsonl")
    first = asyncio.ensure_future(appender.write({"i": 0}))
    others = [asyncio.ensure_future(appender.write({"i": i})) for i in range(1, 20)]
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.wait_for(asyncio.gather(*others), timeout=30)
    assert len((tmp_path / "lines.jsonl").read_text().splitlines()) >= 19


async def test_cache_entries_are_served_before_commit_and_durable_once_settled(tmp_path: Path) -> None:
    cache = CompletionCache(tmp_path)
    for i in range(50):
        cache.put(f"k{i}", Completion(text=f"answer {i}", model="m"))
    hit = cache.get("k7")
    assert hit is not None and hit.text == "answer 7" and hit.cached
    cache.discard("k8")
    assert cache.get("k8") is None
    await cache.settled()
    other = CompletionCache(tmp_path)  # another process's view: only what is committed
    assert other.get("k49") is not None and other.get("k8") is None and len(other) == 49
    other.close()
    cache.put("late", Completion(text="late", model="m"))
    cache.close()  # commits what is pending
    again = CompletionCache(tmp_path)
    assert again.get("late") is not None
    again.close()


async def test_waiters_of_one_commit_are_released_in_one_hand_over_to_their_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every score of a run waits for the cache's commit: the writer thread wakes the event loop once per commit,
    not once per waiter (each wake-up is a write to the loop's pipe and a read on the loop), and every waiter is
    released, in the order it came."""
    cache = CompletionCache(tmp_path)
    loop = asyncio.get_running_loop()
    handed: list[int] = []
    commits: list[int] = []
    real_hand_over, real_commit = loop.call_soon_threadsafe, cache._commit

    def counting_hand_over(callback, *args, **kwargs):  # type: ignore[no-untyped-def]
        handed.append(len(args[0]) if args and isinstance(args[0], list) else 1)
        return real_hand_over(callback, *args, **kwargs)

    def counting_commit(batch):  # type: ignore[no-untyped-def]
        commits.append(len(batch))
        return real_commit(batch)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counting_hand_over)
    monkeypatch.setattr(cache, "_commit", counting_commit)
    released: list[int] = []

    async def wait(i: int) -> None:
        cache.put(f"k{i}", Completion(text=f"answer {i}", model="m"))
        await cache.settled()
        released.append(i)

    await asyncio.wait_for(asyncio.gather(*(wait(i) for i in range(40))), timeout=30)
    assert sorted(released) == list(range(40))
    assert sum(handed) == 40 and len(handed) <= len(commits) < 40  # one hand-over per commit, not per waiter
    cache.close()


async def test_the_window_keeps_at_most_limit_jobs_alive_and_creates_them_as_room_frees() -> None:
    alive = peak = created = returned = 0

    def make(i: int):  # type: ignore[no-untyped-def]
        async def job() -> int:
            nonlocal alive, peak, returned
            alive += 1
            peak = max(peak, alive)
            await asyncio.sleep(0.001 * (i % 3))
            alive -= 1
            returned += 1
            return i

        return job

    async def source():  # type: ignore[no-untyped-def]
        nonlocal created
        for i in range(100):
            created += 1
            assert created - returned <= 5  # drawn from the source only as room frees up (a job returned)
            yield make(i)

    seen = [result async for result in bounded(source(), 5)]
    assert sorted(seen) == list(range(100)) and peak == 5


async def test_a_failing_job_stops_the_window_and_cancels_the_rest() -> None:
    cancelled = 0

    async def slow() -> int:
        nonlocal cancelled
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled += 1
            raise
        return 0

    async def boom() -> int:
        raise ValueError("judge bug")

    async def source():  # type: ignore[no-untyped-def]
        yield slow
        yield slow
        yield boom

    with pytest.raises(ValueError, match="judge bug"):
        async for _ in bounded(source(), 3):
            pass
    assert cancelled == 2


async def test_group_committed_scores_are_capped_like_single_appends(tmp_path: Path) -> None:
    from ragdive.records import Score
    from ragdive.store import RunStore

    store = RunStore.create(tmp_path, config={"store": {"max_text_chars": 1000}})
    await store.write_score(
        Score(conversation_id="c1", turn_index=0, metric="faithfulness", value=0.5, reason="z" * 5000)
    )
    (score,) = RunStore.open(store.path).scores().records
    assert len(score.reason) < 1200 and "the first 1,000 kept" in score.reason
