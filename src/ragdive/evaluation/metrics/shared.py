"""One judge call shared by sibling metrics (the refusal figures, citation precision and recall): the first of
them to judge a turn asks, the others await the same answer. Kept per judge, for the last MEMO_SIZE turns (the
evaluator scores a turn's metrics together, so a small window is enough)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

T = TypeVar("T")

MEMO_SIZE = 4096

_memo: WeakKeyDictionary[Any, OrderedDict[Hashable, asyncio.Future[Any]]] = WeakKeyDictionary()


async def shared_verdict(judge: Any, key: Hashable, ask: Callable[[], Awaitable[T]]) -> T:
    """``ask()``'s answer for ``key``, asked once per judge; a failure reaches every metric that awaits it."""
    memo = _memo.setdefault(judge, OrderedDict())
    if key not in memo:
        memo[key] = asyncio.ensure_future(ask())
        while len(memo) > MEMO_SIZE:
            memo.popitem(last=False)
    result: T = await asyncio.shield(memo[key])
    return result
