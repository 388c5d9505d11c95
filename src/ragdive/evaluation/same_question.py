"""The LLM-judge method of the uniqueness analysis: is question B the same question as A (same intent and
information focus, whatever the wording)? The analysis stays model-free; this builds its pair judge."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from ..errors import JudgeError
from .judge import Judge


class SameQuestionVerdict(BaseModel):
    reason: str
    same: bool


async def judge_same_questions(judge: Judge, pairs: list[tuple[str, str]]) -> list[bool | None]:
    """One verdict per pair, concurrently (bounded by the judge's concurrency); None where the judge failed, so
    the analysis can count it as undecided instead of guessing."""

    async def one(a: str, b: str) -> bool | None:
        try:
            verdict = await judge.ask("same_question", SameQuestionVerdict, first=a, second=b)
        except JudgeError:
            return None
        return verdict.same

    return list(await asyncio.gather(*(one(a, b) for a, b in pairs)))
