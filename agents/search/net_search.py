"""A light search on top of a trained PPO network: its critic's values over a few sampled worlds.

:class:`NetSearchAgent` (``ppo-search-K`` in the registry) acts at every decision with more
than one legal action as follows (docs/search.md):

1. The candidates are the legal actions that the policy gives the most probability, at most
   ``top`` of them (all of them when fewer), so a bid ladder of dozens of calls stays cheap.
2. ``k`` worlds consistent with the seat's view are drawn (:func:`~agents.search.sampler.sample_worlds`,
   uniform over the deals that agree with everything the seat has seen). With ``belief=M``
   (``ppo-search-K-bM``), ``M`` such worlds are drawn and ``k`` of them kept by the policy's own
   belief: weighted sampling without replacement by ``exp(belief_power * log-likelihood)`` of
   the other seats' calls and cards in each world under the network's actor
   (:mod:`agents.search.belief`).
3. In each world every candidate is applied once, and the position after it is valued from the
   acting seat's side: the deal's score difference when the deal is over; the exact
   double-dummy value (:func:`~agents.search.solver.solve`) when at most ``exact_tricks`` tricks
   are left to play (one solve of the position before the move gives every candidate's value
   when it already has at most ``exact_tricks`` tricks left: with ``exact_tricks`` equal to the
   deal's number of tricks, the whole card play is valued by exact solves, a PIMC over the
   policy's candidates); otherwise the network's critic at that position, from the seat to act
   there (a privileged critic reads the world's hands: every card is known in a sampled world),
   negated when that seat is an opponent. Values are in score-sheet units.
4. The policy's favourite is played unless another candidate beats it clearly: each other
   candidate's gain over the favourite is paired world by world, and the candidate whose mean
   gain minus ``z`` standard errors is highest and above zero is played instead. The critic's
   values of close candidates differ by less than their error, so a plain argmax over them
   picks noise over the policy's choice (``z=0``: the plain argmax, ties to the favourite).

With ``rollouts=True`` (``ppo-rollout-K`` in the registry) step 3 plays each candidate out
instead: after it the network plays every seat greedily, each seat on its own view, to the end
of the world's deal, and the value is the deal's score difference for the acting side
(:func:`agents.ppo.demos.rollout_rows`, all worlds and candidates in lockstep, one batched
forward pass per step). No critic is needed, and the values are exact for that continuation.

The search covers the play phase: the cards, and in bazar the declaration steps of the first
trick; in the auction the network acts alone unless ``auction=True``. The network alone decides
where no world can be drawn. The critic's values assume the policy's
own play from the next position on, so this is one step of policy improvement, not a
minimax. Without ``rollouts`` it needs a policy file that carries the critic (``policy.pt``
files written since the critic was exported, the shipped ones among them).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, deal_result, is_terminal
from blot_env.errors import ConfigError
from blot_env.observation import privileged_features
from blot_env.scoring import side_score_difference
from blot_env.state import Phase, State
from blot_env.view import SeatView, seat_view

from ..base import BaseAgent, legal_or_raise
from . import solver
from .belief import pick_by_belief, policy_log_likelihood
from .sampler import SamplingError, sample_worlds


class NetSearchAgent(BaseAgent):
    """The critic of a PPO network over ``k`` sampled worlds (see the module doc).

    Args:
        agent: a :class:`agents.ppo.agent.PPOAgent` whose network has a critic (any PPO policy
            with ``rollouts``).
        k: worlds per decision.
        top: candidate actions per decision (the policy's most likely ones).
        exact_tricks: solve the position exactly when at most this many tricks are left (0: never).
        name: the agent's name in tables.
        auction: also search the auction and the declarations (off: there the policy acts alone;
            the search covers the card play).
        z: standard errors of the paired gain by which a candidate must beat the policy's
            favourite to be played instead (0: the candidate with the highest mean value).
        rollouts: value each candidate by playing the deal out with the network in every seat
            (module doc) instead of the critic and the solver; ``exact_tricks`` is then unused.
        belief: worlds drawn uniformly before ``k`` are kept by the actor's likelihood of the
            other seats' actions (0: off, the ``k`` uniform worlds are used as drawn; else more
            than ``k``).
        belief_power: the likelihood's exponent (1: every seat modelled as this policy;
            below 1 flattens the weights for opponents who play otherwise).

    The critic's values are turned into score-sheet units with the agent's training
    ``rollout.reward_scale`` (``agent.reward_scale``).

    Raises:
        ValueError: ``k`` / ``top`` below 1, ``exact_tricks`` or ``z`` below 0, ``belief``
            neither 0 nor more than ``k``, ``belief_power`` negative or not finite.
        ConfigError: the policy file has no critic weights (not raised with ``rollouts``).
    """

    def __init__(self, agent: Any, k: int = 16, top: int = 6, exact_tricks: int = 2,
                 name: str = "ppo-search", auction: bool = False, z: float = 2.0, rollouts: bool = False,
                 belief: int = 0, belief_power: float = 0.5) -> None:
        if (belief and belief <= k) or belief < 0 or not 0 <= belief_power < float("inf"):
            raise ValueError(f"belief must be 0 (off) or more than k={k} worlds and belief_power finite and >= 0, "
                             f"got belief={belief}, belief_power={belief_power}")
        if k < 1 or top < 1 or exact_tricks < 0 or not 0 <= z < float("inf"):
            raise ValueError(f"k and top must be >= 1, exact_tricks >= 0 and z finite and >= 0, got k={k}, top={top}, "
                             f"exact_tricks={exact_tricks}, z={z}")
        if not rollouts and not getattr(agent, "has_critic", False):
            raise ConfigError(f"{name}: the policy file has no critic weights (a policy exported by an older "
                              "blot-train); train or export it again")
        self.agent = agent
        self.net = agent.policy
        self.encoder = agent.encoder
        self.k, self.top, self.exact_tricks = int(k), int(top), int(exact_tricks)
        self.auction = bool(auction)
        self.z = float(z)
        self.rollouts = bool(rollouts)
        self.belief, self.belief_power = int(belief), float(belief_power)
        self.reward_scale = float(agent.reward_scale)
        self.name = name
        self.seconds = 0.0
        self.decisions = 0

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_or_raise(view)
        if len(legal) == 1:
            return legal[0]
        t0 = time.perf_counter()
        acts, p = self.agent.action_probs(view)
        order = np.argsort(-p, kind="stable")[:self.top]
        cands = [int(acts[i]) for i in order]
        if view.phase != Phase.PLAY and not self.auction:
            # the critic's values after calls the policy rarely makes (a bid far above its own
            # level) are extrapolations: searching the auction on them bid 26 on average and
            # made 31% of its contracts against rules-medium (docs/search.md, section 4)
            return cands[0]
        try:
            worlds = sample_worlds(view, self.belief or self.k, rng)
        except SamplingError:
            worlds = []
        if not worlds:
            return cands[0]
        if self.belief and len(worlds) > self.k:
            ll = policy_log_likelihood(worlds, view.seat, self.net, self.encoder)
            worlds = pick_by_belief(worlds, ll, self.k, self.belief_power, rng)
        if self.rollouts:
            from ..ppo.demos import rollout_rows

            q = rollout_rows([w.state for w in worlds], self.net, self.encoder, layout_for(view.cfg).num_actions,
                             actions=cands)[:, cands].astype(np.float64)
        else:
            q = np.stack([self._world_values(w.state, view.seat, cands) for w in worlds])  # [worlds, candidates]
        best = cands[choose(q, self.z)]
        self.seconds += time.perf_counter() - t0
        self.decisions += 1
        return best

    def _world_values(self, state: State, me: int, cands: list[int]) -> np.ndarray:
        """Score-sheet value of each candidate in one world, from ``me``'s side (``me`` to act):
        one exact solve of the position when at most ``exact_tricks`` tricks are left in it,
        else :meth:`_values`."""
        left = state.cfg.num_tricks - state.trick_no
        if self.exact_tricks and state.phase == Phase.PLAY and left <= self.exact_tricks:
            _, vals = solver.solve(state)  # every legal action's value for the mover's side, one search
            return np.array([vals[a] for a in cands], dtype=np.float64)
        return self._values(state, me, cands)

    def _values(self, state: State, me: int, cands: list[int]) -> np.ndarray:
        """Score-sheet value of each candidate in one world, from ``me``'s side."""
        out = np.zeros(len(cands))
        pending: list[tuple[int, State, int]] = []  # (candidate index, next state, seat to act)
        for i, a in enumerate(cands):
            nxt = apply_action(state, a)
            if is_terminal(nxt):
                out[i] = side_score_difference(deal_result(nxt).score, me)
                continue
            t = current_seat(nxt)
            left = nxt.cfg.num_tricks - nxt.trick_no
            if self.exact_tricks and nxt.phase == Phase.PLAY and left <= self.exact_tricks and not nxt.pending:
                v, _ = solver.solve(nxt)
                out[i] = v if t % 2 == me % 2 else -v
                continue
            pending.append((i, nxt, t))
        if pending:
            obs = np.stack([self.encoder.quantize(self.encoder.encode(seat_view(s, t))) for _, s, t in pending])
            priv = None
            if self.net.privileged:
                priv = torch.from_numpy(np.stack([privileged_features(s, t) for _, s, t in pending]))
            with torch.no_grad():
                v = self.net.critic_value(torch.from_numpy(obs), priv).numpy().astype(np.float64)
            v /= self.reward_scale
            for (i, _, t), vi in zip(pending, v):
                out[i] = vi if t % 2 == me % 2 else -vi
        return out


def choose(q: np.ndarray, z: float) -> int:
    """Index of the candidate to play from values ``q`` (float[worlds, candidates], column 0
    the policy's favourite): the favourite unless some candidate's paired mean gain over it,
    minus ``z`` standard errors of that gain, is above zero, in which case the candidate where
    this is highest (the first on ties). ``z=0`` is the argmax of the mean values; with ``z > 0``
    and a single world (no error estimate) the favourite is kept."""
    gain = q[:, 1:] - q[:, :1]
    m = gain.mean(axis=0)
    if len(q) < 2:
        return 0 if z > 0 or gain.size == 0 or m.max() <= 0 else 1 + int(np.argmax(m))
    score = m - z * gain.std(axis=0, ddof=1) / np.sqrt(len(q))
    if score.size == 0 or score.max() <= 0:
        return 0
    return 1 + int(np.argmax(score))


__all__ = ["NetSearchAgent", "choose"]
