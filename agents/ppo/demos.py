"""Decisions of an agent and values of its actions: what behaviour cloning and the light search read.

:func:`collect_demonstrations` plays a baseline in every seat of random deals (stepped in
lockstep by :class:`blot_env.vector.SelfPlayVector` on the reference engine) and keeps each decision with more than
one legal action; with ``dd_values`` or ``rollout_values`` it also keeps each legal card's
value (exact double-dummy solves, or rollouts of the agent's own network: :func:`rollout_rows`).
:func:`dd_losses` compares a choice with the best card by those values. The training on these
decisions is :mod:`agents.ppo.pretrain`; the cloning-data files that store them are
:mod:`agents.ppo.clone_data`; the light search (:mod:`agents.search.net_search`) values its
candidate cards with :func:`rollout_rows`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from blot_env.engine import apply_action, current_seat, deal_result, is_terminal, legal_actions
from blot_env.errors import ConfigError
from blot_env.observation import privileged_size
from blot_env.rules_config import RulesConfig
from blot_env.scoring import side_score_difference
from blot_env.state import Phase
from blot_env.vector import SelfPlayVector
from blot_env.view import seat_view

from ..base import reset_agent
from .distributions import MaskedCategorical
from .network import ActorCritic
from .rollout import AgentFactory


def collect_demonstrations(rules: RulesConfig, encoder: Any, agent_name: str, num_deals: int, num_envs: int,
                           rng: np.random.Generator, reward_scale: float, seed: int = 0,
                           agent_factory: AgentFactory | None = None, privileged: bool = False,
                           dd_values: bool = False, rollout_values: bool = False,
                           rollout_worlds: int = 0) -> dict[str, np.ndarray]:
    """``num_deals`` deals of ``agent_name`` (built by ``agent_factory(name, rules, seed)``) in every
    seat: ``obs uint8[T, D]`` (numerators), ``masks bool[T, A]``, ``actions int64[T]``, ``returns
    float32[T]`` (scaled deal reward of the acting seat's side), ``deal int32[T]`` (the deal's
    number, 0..num_deals-1 in the order the deals began: the decisions of the deals played side
    by side interleave), with ``privileged`` also ``privileged uint8[T, P]``, and with
    ``dd_values`` also ``qvalues float32[T, A]``: at each card to play (play phase, no
    declaration step pending) the exact double-dummy value of every legal card on the deal's
    real hands (:func:`agents.search.solver.solve`: the acting seat's side's final score minus
    the other side's under best play by all four seats from there, declaration steps still to
    come following :func:`agents.search.solver.policy_action`, in the preset's score-sheet
    units, unscaled: table points, raw points in belote; rules.md 2.5 for bazar), NaN for the
    illegal actions and on every other decision. With ``rollout_values`` (a PPO policy agent only)
    ``qvalues`` holds at the same decisions each legal card's **rollout value** instead
    (:func:`rollout_rows`): the acting side's final score minus the other side's when, after that
    card, the agent's own network plays every seat greedily to the end of the deal on the real
    hands, each seat acting on its own view; same units. The played card's value is then the
    deal's outcome. With ``rollout_worlds`` K > 0 the rollouts run instead in K deals drawn
    uniformly from those consistent with the acting seat's view
    (:func:`agents.search.sampler.sample_worlds`, from a generator of its own seeded by ``seed``,
    so the deals do not change) and each card's value is their mean: a value of
    the seat's view alone, with the luck of the hidden cards averaged over K deals (the real
    deal where no world can be drawn).

    Raises:
        ConfigError: no ``agent_factory``; ``dd_values`` and ``rollout_values`` both set;
            ``rollout_worlds`` negative or set without ``rollout_values``; rollout values for an
            agent without a policy network.
    """
    if agent_factory is None:
        raise ConfigError("behaviour cloning needs an agent factory (agents.registry.make_agent)")
    if dd_values and rollout_values:
        raise ConfigError("double-dummy values and rollout values fill the same qvalues: ask for one of them")
    if rollout_worlds < 0 or (rollout_worlds and not rollout_values):
        raise ConfigError(f"rollout_worlds must be 0, or > 0 with rollout_values; got {rollout_worlds!r}")
    n = rules.num_players
    vec = SelfPlayVector(rules, encoder, num_envs, engine="reference")
    agents = [[agent_factory(agent_name, rules, seed + 97 * e + s) for s in range(n)] for e in range(num_envs)]
    if rollout_values:
        check_rollout_agent(agents[0][0], agent_name)
    obs, masks, acts, seat_of, env_of, privs, deal_of, qvals = [], [], [], [], [], [], [], []
    card_states: list[tuple[int, Any]] = []  # (decision row, state) of the card decisions, for rollout_values
    returns: list[float] = []
    pending: dict[tuple[int, int], list[int]] = {}
    started = min(num_envs, num_deals)
    deal_now = list(range(num_envs))  # the number of the deal each env plays
    first = list(range(started))
    for e in first:
        for a in agents[e]:
            reset_agent(a)
    out = vec.reset(first, rng)
    while True:
        active = np.flatnonzero(out.seat >= 0)
        if len(active) == 0:
            break
        actions = np.zeros(num_envs, dtype=np.int64)
        for e in active:
            s = int(out.seat[e])
            kept = out.mask[e].sum() > 1
            if dd_values and kept:
                qvals.append(_dd_row(vec.states[e], vec.num_actions))  # before act: an agent may not touch the state
            if rollout_values and kept and _card_decision(vec.states[e]):
                card_states.append((len(acts), vec.states[e]))  # states are immutable: no copy needed
            a = int(agents[e][s].act(vec.views[e], rng))
            actions[e] = a
            if kept:
                pending.setdefault((int(e), s), []).append(len(acts))
                obs.append(out.obs[e].copy())
                if privileged:
                    privs.append(vec.privileged([e])[0])
                masks.append(out.mask[e].copy())
                acts.append(a)
                returns.append(0.0)
                seat_of.append(s)
                env_of.append(int(e))
                deal_of.append(deal_now[e])
        out = vec.step(actions)
        refill = []
        for e in np.flatnonzero(out.done):
            for s in range(n):
                for idx in pending.pop((int(e), s), []):
                    returns[idx] = float(out.rewards[e, s]) * reward_scale
            if started < num_deals:
                refill.append(int(e))
                deal_now[e] = started
                started += 1
                for a in agents[e]:
                    reset_agent(a)
        if refill:
            out = vec.reset(refill, rng)
    D, A = vec.obs.shape[1], vec.num_actions
    data = {
        "obs": np.stack(obs) if obs else np.zeros((0, D), np.uint8),
        "masks": np.stack(masks) if masks else np.zeros((0, A), bool),
        "actions": np.asarray(acts, dtype=np.int64),
        "returns": np.asarray(returns, dtype=np.float32),
        "deal": np.asarray(deal_of, dtype=np.int32),
    }
    if privileged:
        data["privileged"] = np.stack(privs) if privs else np.zeros((0, privileged_size(n)), np.uint8)
    if dd_values:
        data["qvalues"] = np.stack(qvals) if qvals else np.zeros((0, A), np.float32)
    if rollout_values:
        q = np.full((len(acts), A), np.nan, dtype=np.float32)
        if card_states:
            agent = agents[0][0]
            rows, states = [r for r, _ in card_states], [st for _, st in card_states]
            if rollout_worlds > 0:
                q[rows] = world_rollout_rows(states, agent.policy, agent.encoder, A, rollout_worlds,
                                             np.random.default_rng([seed, 0x5EED]))
            else:
                q[rows] = rollout_rows(states, agent.policy, agent.encoder, A)
        data["qvalues"] = q
    return data


def check_rollout_agent(agent: Any, name: str) -> None:
    """Raise ConfigError unless ``agent`` (built from the registry name ``name``) acts with a policy
    network, which :func:`rollout_rows` plays in every seat."""
    if not hasattr(agent, "policy") or not hasattr(agent, "encoder"):
        raise ConfigError(f"rollout values play the agent's own network in every seat: {name!r} has none "
                          "(use a PPO policy: ppo or a policy file)")


@torch.no_grad()
def rollout_rows(states: list[Any], policy: ActorCritic, encoder: Any, num_actions: int,
                 batch: int = 4096, actions: list[int] | None = None) -> np.ndarray:
    """``float32[N, A]``: for each of ``states`` (a seat to act), every legal action's rollout
    value: after that action, ``policy`` plays every seat greedily (its most likely legal action
    on that seat's own view, as :class:`agents.ppo.agent.PPOAgent` with ``greedy``) to the end of
    the deal, on the state's real hands, and the value is the acting seat's side's final score
    minus the other side's (:func:`blot_env.scoring.side_score_difference`: score-sheet units,
    table points, raw points in belote; rules.md 2.5). NaN on illegal actions. All the rollouts
    advance in lockstep, one batched forward pass per step (at most ``batch`` rows at a time).
    With the deal's hands fixed and greedy play, each value is exact for that continuation: the
    luck of the deal is the same for every action of a row. ``actions``: roll out only these
    action ids in every state (each must be legal there; the other entries stay NaN).

    Raises:
        IllegalActionError: an id of ``actions`` is not legal in a state."""
    rows = np.full((len(states), num_actions), np.nan, dtype=np.float32)
    runs: list[tuple[int, int, int, Any]] = []  # (row, action, mover, state)
    for i, st in enumerate(states):
        mover = current_seat(st)
        runs.extend((i, a, mover, apply_action(st, a)) for a in (legal_actions(st) if actions is None else actions))
    policy.eval()
    live = list(range(len(runs)))
    while live:
        nxt = []
        for k in live:
            i, a, mover, st = runs[k]
            if is_terminal(st):
                rows[i, a] = side_score_difference(deal_result(st).score, mover)
            else:
                nxt.append(k)
        live = nxt
        for b in range(0, len(live), batch):
            part = live[b:b + batch]
            views = [seat_view(runs[k][3], current_seat(runs[k][3])) for k in part]
            obs = torch.from_numpy(np.stack([encoder.quantize(encoder.encode(v)) for v in views]))
            mask = torch.zeros((len(part), num_actions), dtype=torch.bool)
            for j, v in enumerate(views):
                mask[j, list(v.legal)] = True
            picks = MaskedCategorical(policy.logits(obs), mask).mode().tolist()
            for k, a in zip(part, picks):
                i, a0, mover, st = runs[k]
                runs[k] = (i, a0, mover, apply_action(st, int(a)))
    return rows


def world_rollout_rows(states: list[Any], policy: ActorCritic, encoder: Any, num_actions: int, worlds: int,
                        rng: np.random.Generator) -> np.ndarray:
    """``float32[N, A]``: :func:`rollout_rows` averaged over up to ``worlds`` deals sampled from the
    acting seat's view of each state (:func:`agents.search.sampler.sample_worlds` may return fewer;
    the state itself where none can be drawn), table points; NaN on illegal actions."""
    from ..search.sampler import SamplingError, sample_worlds

    owner, drawn = [], []
    for i, st in enumerate(states):
        try:
            ws = [w.state for w in sample_worlds(seat_view(st, current_seat(st)), worlds, rng)]
        except SamplingError:
            ws = []
        ws = ws or [st]
        owner.extend([i] * len(ws))
        drawn.extend(ws)
    vals = rollout_rows(drawn, policy, encoder, num_actions)
    owner_arr = np.asarray(owner)
    sums = np.zeros((len(states), num_actions), np.float64)
    np.add.at(sums, owner_arr, np.nan_to_num(vals))
    counts = np.bincount(owner_arr, minlength=len(states))[:, None]
    out = (sums / counts).astype(np.float32)
    out[np.isnan(vals[np.unique(owner_arr, return_index=True)[1]])] = np.nan  # the legal set is the view's
    return out


def _card_decision(state: Any) -> bool:
    """Whether ``state`` waits for a card (play phase, no declaration step pending): the decisions
    that get card values."""
    return state.phase == Phase.PLAY and not state.pending


def _dd_row(state: Any, num_actions: int) -> np.ndarray:
    """``float32[A]``: each legal card's exact double-dummy value for the mover's side (table
    points) when ``state`` waits for a card with no declaration step pending; NaN elsewhere."""
    from ..search.solver import solve

    row = np.full(num_actions, np.nan, dtype=np.float32)
    if _card_decision(state):
        _, vals = solve(state)
        for a, v in vals.items():
            row[a] = v
    return row


def dd_losses(q: torch.Tensor, masks: torch.Tensor, picks: torch.Tensor) -> torch.Tensor:
    """``float32[T]``: the best legal action's card value minus that of ``picks``
    (``int64[T]``, legal action ids), table points; NaN on the rows without values. ``q`` is
    ``float32[T, A]`` (NaN where there are no values), ``masks`` ``bool[T, A]``."""
    qv = torch.where(masks, torch.nan_to_num(q, nan=float("-inf")), float("-inf"))
    loss = qv.max(-1).values - qv.gather(-1, picks.unsqueeze(-1)).squeeze(-1)
    return torch.where(torch.isnan(torch.where(masks, q, float("nan"))).all(-1), float("nan"), loss)


__all__ = ["check_rollout_agent", "collect_demonstrations", "dd_losses", "rollout_rows", "world_rollout_rows"]
