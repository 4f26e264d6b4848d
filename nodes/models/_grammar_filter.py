"""Grammar-bound sampling that stays fast on a large vocabulary.

llama.cpp's grammar sampler checks every token of the vocabulary at every step: for Gemma's 262,144
tokens that is ~200 ms a token on this class of machine, three times the generation itself. This
logits processor asks llama.cpp's grammar about the model's likeliest tokens first and about the
whole vocabulary only when none of them fits, then leaves only allowed tokens for the sampler, so
what may be written is still decided by llama.cpp's grammar engine alone.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
LIKELIEST = 64


class GrammarFilter:
    """A llama-cpp-python logits processor for one generation; `close()` frees the grammar."""

    def __init__(self, llama: Any, grammar: str, prompt_tokens: int) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, grammar.encode("utf-8"), b"root")
        if not self._sampler:
            raise ValueError("llama.cpp rejected the reply grammar")
        self._accepted = prompt_tokens
        self.whole_vocabulary_checks = 0  # steps where none of the likeliest tokens fitted

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        for token in input_ids[self._accepted:]:  # the tokens sampled since the last step
            self._lib.llama_sampler_accept(self._sampler, int(token))
        self._accepted = len(input_ids)
        top = np.argpartition(scores, -LIKELIEST)[-LIKELIEST:] if len(scores) > LIKELIEST else np.arange(len(scores))
        allowed = self._allowed(top, scores)
        if allowed.size == 0:
            self.whole_vocabulary_checks += 1
            allowed = self._allowed(np.arange(len(scores)), scores)
            if allowed.size == 0:
                raise ValueError("the reply grammar admits no next token")
        kept = np.full(len(scores), -np.inf, dtype=np.single)
        kept[allowed] = scores[allowed]
        return kept

    def _allowed(self, ids: Any, scores: Any) -> Any:
        data = np.zeros(len(ids), dtype=TOKEN_DATA)
        data["id"] = ids
        data["logit"] = scores[ids]
        candidates = self._lib.llama_token_data_array(
            data=data.ctypes.data_as(self._lib.llama_token_data_p), size=len(ids), selected=-1, sorted=False,
        )
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(candidates))
        return data["id"][np.isfinite(data["logit"])]
