"""Masked categorical distribution over the flat action layout (sb3-contrib's idea, in plain torch).

Illegal actions get the logit :data:`MASK_LOGIT` (a large finite negative number, not -inf, so
that no ``0 * inf`` NaN can appear); their probability is then exactly 0 in float32, they are
never sampled, and the entropy sums over legal actions only.
"""

from __future__ import annotations

import torch
from torch import Tensor

#: logit given to illegal actions; exp(MASK_LOGIT - max) underflows to exactly 0 in float32
MASK_LOGIT = -1e9


class MaskedCategorical:
    """A batch of categorical distributions restricted to legal actions.

    Args:
        logits: ``float32[B, A]`` raw policy logits (A = the layout's ``num_actions``).
        mask: ``bool[B, A]``, True where the action is legal.

    Raises:
        ValueError: shapes differ, or some row has no legal action.
    """

    def __init__(self, logits: Tensor, mask: Tensor):
        if logits.shape != mask.shape:
            raise ValueError(f"logits {tuple(logits.shape)} and mask {tuple(mask.shape)} differ in shape")
        mask = mask.to(torch.bool)
        if not bool(mask.any(dim=-1).all()):
            raise ValueError("every row of the mask needs at least one legal action")
        self.mask = mask
        self.logits = torch.where(mask, logits, torch.full_like(logits, MASK_LOGIT))
        self.log_probs = torch.log_softmax(self.logits, dim=-1)
        """``float32[B, A]`` log-probabilities (illegal entries ~ -1e9, never used)."""

    @property
    def probs(self) -> Tensor:
        """``float32[B, A]``; exactly 0 on illegal actions."""
        return torch.where(self.mask, self.log_probs.exp(), torch.zeros_like(self.log_probs))

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        """``int64[B]`` sampled action ids (always legal)."""
        return torch.multinomial(self.probs, 1, generator=generator).squeeze(-1)

    def mode(self) -> Tensor:
        """``int64[B]`` most likely legal action ids (greedy play)."""
        return self.logits.argmax(dim=-1)

    def log_prob(self, actions: Tensor) -> Tensor:
        """``float32[B]`` log-probability of ``actions`` (``int64[B]``)."""
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> Tensor:
        """``float32[B]`` entropy in nats over the legal actions only (0 for a single legal action)."""
        p_logp = torch.where(self.mask, self.log_probs.exp() * self.log_probs, torch.zeros_like(self.log_probs))
        return -p_logp.sum(dim=-1)


__all__ = ["MASK_LOGIT", "MaskedCategorical"]
