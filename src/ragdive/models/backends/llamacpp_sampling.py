"""Grammar-constrained sampling that checks the sampled token first (inside the llama.cpp worker process).

llama-cpp-python puts the JSON grammar in the sampler chain ahead of top-k, so every generated token runs the
grammar over the whole vocabulary: 262,144 candidate strings for Gemma 3, ~25 ms a token on 2 cores against ~7 ms
unconstrained (and a 3 MB candidate array allocated and freed per token). llama.cpp's own samplers avoid that
(common/sampling.cpp): sample without the grammar, ask the grammar about that one token, and only when it is
refused apply the grammar to the whole vocabulary and sample again. Greedy decoding picks the same tokens either
way (the most likely token the grammar allows); with a temperature the draw is from the same allowed tokens, by
another path of the random stream.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])  # llama_token_data


class GrammarCheckedSampler:
    """Takes the place of llama-cpp-python's LlamaSampler for a call with a grammar: ``chain`` is the call's sampler
    chain without the grammar (penalties, top-k..., the final draw)."""

    def __init__(self, llm: Any, chain: Any, grammar: Any) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self.chain = chain
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        self.n_vocab = int(llm.n_vocab())
        self._cells = (llama_cpp.llama_token_data * self.n_vocab)()  # one candidate array, reused every token
        self._view = np.frombuffer(memoryview(self._cells).cast("B"), dtype=TOKEN_DATA)
        self._ids = np.arange(self.n_vocab, dtype=np.int32)
        self._one = llama_cpp.llama_token_data()

    def sample(self, ctx: Any, idx: int = -1) -> int:
        lib = self._lib
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        token = self._draw(logits, with_grammar=False)
        if not self._allowed(token):
            token = self._draw(logits, with_grammar=True)
        lib.llama_sampler_accept(self.grammar, token)
        lib.llama_sampler_accept(self.chain.sampler, token)
        return token

    def _draw(self, logits: np.ndarray, *, with_grammar: bool) -> int:
        lib = self._lib
        # the samplers sort and cut the array in place: refill it for each draw
        self._view["id"] = self._ids
        self._view["logit"] = logits
        self._view["p"] = 0.0
        candidates = lib.llama_token_data_array(
            data=ctypes.cast(self._cells, lib.llama_token_data_p), size=self.n_vocab, selected=-1, sorted=False
        )
        if with_grammar:
            lib.llama_sampler_apply(self.grammar, ctypes.byref(candidates))
        lib.llama_sampler_apply(self.chain.sampler, ctypes.byref(candidates))
        return int(candidates.data[candidates.selected].id)

    def _allowed(self, token: int) -> bool:
        """The grammar's verdict on one token: it sets a refused token's logit to -inf."""
        lib = self._lib
        self._one.id, self._one.logit, self._one.p = token, 1.0, 0.0  # type: ignore[assignment]
        single = lib.llama_token_data_array(data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False)
        lib.llama_sampler_apply(self.grammar, ctypes.byref(single))
        return not math.isinf(single.data[0].logit)

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self.grammar, token)
        self.chain.accept(token)

    def reset(self) -> None:
        self._lib.llama_sampler_reset(self.grammar)
        self.chain.reset()

    def close(self) -> None:
        if self.grammar is not None:
            self._lib.llama_sampler_free(self.grammar)
            self.grammar = None
        self.chain.close()

    def __del__(self) -> None:
        self.close()


def grammar_checked_llama(**kwargs: Any) -> Any:
    """A ``llama_cpp.Llama`` whose grammar calls sample with GrammarCheckedSampler."""
    import llama_cpp

    class GrammarCheckedLlama(llama_cpp.Llama):  # type: ignore[misc]
        def _init_sampler(self, *args: Any, **options: Any) -> Any:
            grammar = options.pop("grammar", None)
            chain = super()._init_sampler(*args, **options)
            return chain if grammar is None else GrammarCheckedSampler(self, chain, grammar)

    return GrammarCheckedLlama(**kwargs)
