"""L0: the random baseline (docs/evaluation.md "The baseline agents")."""

from __future__ import annotations

import numpy as np

from blot_env.actions import layout_for
from blot_env.state import Phase
from blot_env.view import SeatView

from ..base import BaseAgent, legal_or_raise

#: auction calls that are passes (the rest are bids, contra, recontra, take, name)
_PASS_BLOCKS = frozenset({"PASS"})


class RandomAgent(BaseAgent):
    """Uniform over the legal actions, except that in the auction it passes more often.

    Auction: when ``pass`` is legal together with other calls, it passes with probability
    ``pass_prob`` (default 0.8) and otherwise draws uniformly among the other legal calls
    (bids of every level, kaputs, contra, recontra, take, name). A uniform draw over the
    whole bazar ladder (about 400 calls, one of them ``pass``) would almost never pass, so
    auctions would climb to 80; with 0.8 an auction ends after a handful of calls and about
    0.8^4 = 41% of all-random auctions are passed out. Every other decision (declaration
    steps, cards) is uniform over ``view.legal``.
    """

    def __init__(self, pass_prob: float = 0.8, name: str = "random"):
        if not 0.0 <= pass_prob <= 1.0:
            raise ValueError(f"pass_prob must be in [0, 1], got {pass_prob}")
        self.pass_prob = float(pass_prob)
        self.name = name

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_or_raise(view)
        if view.phase == Phase.AUCTION and len(legal) > 1:
            lay = layout_for(view.cfg)
            passes = [a for a in legal if lay.block_of[a] in _PASS_BLOCKS]
            others = [a for a in legal if lay.block_of[a] not in _PASS_BLOCKS]
            if passes and others:
                if rng.random() < self.pass_prob:
                    return passes[0]
                return int(others[rng.integers(len(others))])
        return int(legal[rng.integers(len(legal))])


__all__ = ["RandomAgent"]
