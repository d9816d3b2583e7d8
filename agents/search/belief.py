"""Belief from the policy's own actor: how likely a sampled world makes the calls and cards seen.

:func:`sample_worlds` draws deals uniformly among those consistent with a seat's view: a world
where the partner bid 100 on a hand of sevens counts as much as one where the bid fits the hand.
:func:`policy_log_likelihood` scores each world by the log-probability that the network, sitting
at every other seat with that seat's view in that world, would have taken the actions the deal
shows (the calls, the declaration steps and the cards; decisions with one legal action add
nothing). Weighting worlds by ``exp(power * log-likelihood)`` is the posterior over the hidden
cards under the model "every seat plays like this policy" (``power`` 1), tempered for
opponents who play otherwise (``power`` below 1); it is the belief that public-belief methods
(ReBeL, PerfectDou's perfect-information distillation in reverse) build from the actor's
probabilities. :func:`pick_by_belief` draws the worlds a search uses from a larger uniform
sample by these weights. ``agents.search.net_search.NetSearchAgent`` (``ppo-search-K-bM``)
uses both; docs/search.md section 4.

The replay runs on the compiled engine (:class:`blot_env.batched.deal_row.DealRow`, one call per
action, observations written by the compiled encoder) and every world's rows go through the
actor in one batched forward pass; a rules config that does not fit a compiled row replays on
the reference engine (the same observations, slower).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import torch

from blot_env.batched.deal_row import DealRow, capacity_problem, lay_cards
from blot_env.engine import apply_action, current_seat, legal_actions, new_deal
from blot_env.observation import ObservationEncoder
from blot_env.rules_config import RulesConfig
from blot_env.state import Phase

from .pimc import pick_weighted
from .sampler import World

if TYPE_CHECKING:
    from ..ppo.network import ActorCritic


@lru_cache(maxsize=8)
def _deal_row(cfg: RulesConfig, kind: str) -> DealRow:
    """One compiled row per rules config and observation kind, reused (each replay restarts it)."""
    return DealRow(cfg, obs_kind=kind)


def _rows_compiled(worlds: Sequence[World], me: int, encoder: ObservationEncoder) -> tuple[list, list, list, list]:
    """The other seats' decisions with a choice in every world: (observations, masks, actions, world index)."""
    row = _deal_row(worlds[0].state.cfg, encoder.kind)
    obs_l, mask_l, act_l, own_l = [], [], [], []
    for w, world in enumerate(worlds):
        seat = row.start_cards(world.dealer, lay_cards(world.hands, world.stock, world.piles))
        for a in world.state.history:
            if seat != me:
                obs, mask = row.observe(seat)
                if int(mask.sum()) > 1:
                    obs_l.append(obs.copy())
                    mask_l.append(mask.astype(bool))
                    act_l.append(int(a))
                    own_l.append(w)
            seat = row.step(int(a))
    return obs_l, mask_l, act_l, own_l


def _rows_reference(worlds: Sequence[World], me: int, encoder: ObservationEncoder) -> tuple[list, list, list, list]:
    """:func:`_rows_compiled` on the reference engine."""
    from blot_env.view import seat_view

    n_act = encoder.layout.num_actions
    obs_l, mask_l, act_l, own_l = [], [], [], []
    for w, world in enumerate(worlds):
        s = new_deal(world.state.cfg, world.dealer, world.hands, world.stock, world.piles)
        for a in world.state.history:
            seat = current_seat(s)
            if seat != me and s.phase != Phase.DONE:
                legal = legal_actions(s)
                if len(legal) > 1:
                    mask = np.zeros(n_act, bool)
                    mask[list(legal)] = True
                    obs_l.append(encoder.encode(seat_view(s, seat)))
                    mask_l.append(mask)
                    act_l.append(int(a))
                    own_l.append(w)
            s = apply_action(s, int(a))
    return obs_l, mask_l, act_l, own_l


def policy_log_likelihood(worlds: Sequence[World], me: int, net: ActorCritic,
                          encoder: ObservationEncoder) -> np.ndarray:
    """``float64[len(worlds)]``: per world, the sum over the other seats' decisions that had
    more than one legal action of ``log p(action taken | that seat's view in the world)`` under
    ``net``'s actor (natural log; 0 for a world with no such decision).

    Args:
        worlds: sampled deals of one view (:func:`agents.search.sampler.sample_worlds`); their
            ``state.history`` is the deal so far.
        me: the seat whose view the worlds were drawn from (its own decisions are left out: they
            are the same in every world).
        net: an :class:`agents.ppo.network.ActorCritic` (not an oracle: it acts from views).
        encoder: the :class:`blot_env.observation.ObservationEncoder` the network was trained on.

    Raises:
        ValueError: ``worlds`` is empty, ``net`` is an oracle, or ``encoder`` carries the match
            pieces (a policy network reads per-deal observations).
    """
    if not worlds:
        raise ValueError("no worlds to weigh")
    if encoder.match:
        raise ValueError("the encoder carries the match pieces; the policy reads per-deal observations (match=False)")
    if getattr(net, "oracle", False):
        raise ValueError("an oracle actor reads every seat's hidden cards; it gives no likelihood of a view")
    cfg = worlds[0].state.cfg
    rows = _rows_compiled if capacity_problem(cfg) is None else _rows_reference
    obs_l, mask_l, act_l, own_l = rows(worlds, me, encoder)
    out = np.zeros(len(worlds), dtype=np.float64)
    if not obs_l:
        return out
    obs = torch.from_numpy(np.stack(obs_l))  # float values: the network reads them as it reads numerators
    with torch.no_grad():
        logits = net.logits(obs)
    logits = torch.where(torch.from_numpy(np.stack(mask_l)), logits, torch.tensor(float("-inf")))
    logp = torch.log_softmax(logits, dim=-1)[torch.arange(len(act_l)), torch.tensor(act_l)]
    np.add.at(out, np.array(own_l), logp.double().numpy())
    return out


def pick_by_belief(worlds: Sequence[World], loglik: np.ndarray, k: int, power: float,
                   rng: np.random.Generator) -> list[World]:
    """``k`` of ``worlds`` drawn without replacement with probabilities following
    ``exp(power * loglik)`` (:func:`agents.search.pimc.pick_weighted`), in their given order.

    Args:
        worlds: the candidates (``N`` of them).
        loglik: ``float64[N]`` log-likelihoods (:func:`policy_log_likelihood`); ``-inf`` (a world
            the actor rules out) is picked only when fewer than ``k`` worlds are possible, and
            when every world is ``-inf`` the pick is uniform.
        k: worlds to keep (all ``N`` when ``k >= N``).
        power: the exponent (0: uniform; 1: the posterior if every seat played like the actor).
        rng: draws the keys of the weighted sampling.

    Raises:
        ValueError: no worlds, ``k`` below 1, ``power`` negative or not finite, ``loglik`` of
            another length or holding NaN.
    """
    if not worlds or k < 1:
        raise ValueError(f"need at least one world and k >= 1, got {len(worlds)} worlds and k={k}")
    if not 0 <= power < float("inf"):
        raise ValueError(f"power must be finite and >= 0, got {power}")
    loglik = np.asarray(loglik, dtype=np.float64)
    if loglik.shape != (len(worlds),):
        raise ValueError(f"loglik has shape {loglik.shape}, expected ({len(worlds)},)")
    if np.isnan(loglik).any():
        raise ValueError("loglik holds NaN")
    possible = np.isfinite(loglik)
    if not possible.any():
        w = np.ones(len(worlds))
    else:
        x = np.where(possible, power * np.where(possible, loglik, 0.0), -np.inf)
        w = np.exp(x - x[possible].max())
    return [worlds[i] for i in pick_weighted(w, rng.random(len(worlds)), k)]


__all__ = ["pick_by_belief", "policy_log_likelihood"]
