"""Optional warm start before PPO: imitate a baseline agent (behaviour cloning) and fit the critic.

The baseline (``PretrainConfig.agent``, an agents.registry name) plays every seat of
``PretrainConfig.deals`` random deals, stepped in lockstep by :class:`EngineVector`; for each
decision with more than one legal action we keep the acting seat's observation, mask and
action, and the seat's deal reward (the same reward as in PPO, so the critic learns the
baseline's value). The actor minimises the masked cross-entropy to the baseline's actions,
the critic the squared error to the reward. Data is collected and trained on in chunks of
``chunk_deals`` deals so memory stays small.

With ``PretrainConfig.data`` the decisions come from a cloning-data file built in parallel by
``scripts/clone_data.py`` (agents/ppo/clone_data.py) instead, read in groups of about
``chunk_deals`` deals, ``passes`` times over. Cloning on top of a trained policy
(``from_init``) can keep it near its start: ``kl_coef`` adds KL(start || current) per decision,
and ``disagreements_only`` keeps the cross-entropy only where the start's greedy action is not the
recorded one. With ``q_temperature`` the actor learns from a file's card values (double-dummy or rollout)
instead (``q_objective``: the expected value under the current policy against a KL to the start,
or a cross-entropy to the start reweighted by ``exp(q / q_temperature)``).
"""

from __future__ import annotations

import copy
import logging
import math
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from blot_env.engine import apply_action, current_seat, deal_result, is_terminal, legal_actions
from blot_env.errors import ConfigError
from blot_env.observation import privileged_size
from blot_env.rules_config import RulesConfig
from blot_env.scoring import side_score_difference
from blot_env.state import Phase
from blot_env.view import seat_view

from ..base import reset_agent
from .config import PretrainConfig
from .distributions import MaskedCategorical
from .network import ActorCritic
from .rollout import AgentFactory, EngineVector

log = logging.getLogger(__name__)


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
    vec = EngineVector(rules, encoder, num_envs)
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


def file_groups(cfg: PretrainConfig, rules: RulesConfig, encoder: Any, privileged: bool) -> list[list[dict]]:
    """The chunk records of ``cfg.data`` (whole chunks in index order, at most ``cfg.deals`` deals
    unless the first chunk alone holds more) in groups of about ``cfg.chunk_deals`` deals.

    Raises:
        CloneDataError: the file is missing, unreadable, or built for another preset, encoding,
            action space or agent (agents/ppo/clone_data.py), or holds no ``qvalues`` when
            ``cfg.q_temperature`` asks for them.
    """
    from blot_env.actions import layout_for

    from .clone_data import CloneDataError, check_fits, read_clone_data

    recs, _ = read_clone_data(cfg.data)
    check_fits(recs, cfg.data, rules, encoder, layout_for(rules).num_actions, cfg.agent)
    recs.sort(key=lambda r: int(r["chunk"]))
    groups: list[list[dict]] = [[]]
    deals = in_group = 0
    for r in recs:
        if deals and deals + int(r["deals"]) > cfg.deals:
            break
        if in_group >= cfg.chunk_deals:
            groups.append([])
            in_group = 0
        groups[-1].append(r)
        deals += int(r["deals"])
        in_group += int(r["deals"])
    if deals < cfg.deals and deals == sum(int(r["deals"]) for r in recs):
        log.warning("pretrain.data %s holds %d deals, fewer than pretrain.deals=%d: cloning on all of them",
                    cfg.data, deals, cfg.deals)
    if privileged and "privileged" not in recs[0]["arrays"]:
        raise CloneDataError(f"{cfg.data}: no privileged observations, which this run's privileged critic needs")
    if cfg.q_temperature > 0 and "qvalues" not in recs[0]["arrays"]:
        raise CloneDataError(f"{cfg.data}: no card values (qvalues), which pretrain.q_temperature needs: "
                             "build the file with scripts/clone_data.py --dd-values (or --rollout-values)")
    return groups


def _read_group(group: list[dict], reward_scale: float, privileged: bool, qvalues: bool = False
                ) -> dict[str, np.ndarray]:
    from .clone_data import unpack_arrays

    parts = [unpack_arrays(r) for r in group]
    for p in parts:
        p.pop("deal", None)  # for analyses (clone_data.decision_hits), not for training
        if not privileged:
            p.pop("privileged", None)
        if not qvalues:
            p.pop("qvalues", None)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    data["returns"] = (data["returns"] * reward_scale).astype(np.float32)
    return data


def behaviour_clone(policy: ActorCritic, rules: RulesConfig, encoder: Any, cfg: PretrainConfig, num_envs: int,
                    reward_scale: float, rng: np.random.Generator, agent_factory: AgentFactory | None = None,
                    device: torch.device | str = "cpu") -> dict[str, float]:
    """Train ``policy`` in place to imitate ``cfg.agent`` (played here, ``cfg.deals`` deals in chunks of
    ``cfg.chunk_deals``) or the decisions of the cloning-data file ``cfg.data`` (read in groups of
    about ``cfg.chunk_deals`` deals, ``cfg.passes`` times over); returns the final chunk's metrics
    (``bc_loss``, ``bc_accuracy`` on the chunk before this pass trained on it, so with ``passes`` > 1
    on decisions seen in earlier passes, ``bc_value_loss``, ``bc_samples``: decisions, each counted
    once, ``bc_seconds``). With ``cfg.kl_coef`` > 0 or ``cfg.disagreements_only`` also ``bc_kl``,
    KL(start || current) in nats per decision averaged over the chunk's minibatches (each measured
    before its step), and ``bc_disagreements``, the fraction of the chunk's decisions on which the
    start's greedy action is not the recorded one. Under ``disagreements_only``, ``bc_loss`` is
    the cross-entropy averaged over all the minibatch's decisions, the agreeing ones counting 0.
    With ``cfg.q_temperature`` > 0, ``bc_loss`` is the actor's loss of ``cfg.q_objective``
    (``expected``: the KL less :func:`dd_gain` over the temperature; ``target``: the
    cross-entropy to :func:`dd_target`), ``bc_kl`` is reported, and ``bc_dd_regret`` is the mean
    loss of the network's greedy card against the best card by the file's values (double-dummy
    or rollout) over the chunk's card decisions that keep values (table points; with
    ``q_from_trick`` the later cards only), before this pass trained on the chunk.

    Raises:
        ConfigError: no ``agent_factory`` when the deals are played here.
        CloneDataError: ``cfg.data`` is missing, unreadable, or does not fit the run (see
            :func:`file_groups`).
    """
    t0 = time.perf_counter()
    opt = (torch.optim.SGD(policy.parameters(), lr=cfg.learning_rate, momentum=0.9) if cfg.optimizer == "sgd"
           else torch.optim.Adam(policy.parameters(), lr=cfg.learning_rate, eps=1e-5))
    reference = None  # the network as the cloning begins: what kl_coef and disagreements_only compare with
    if cfg.kl_coef > 0 or cfg.disagreements_only or cfg.q_temperature > 0:
        reference = copy.deepcopy(policy).eval()
        reference.requires_grad_(False)
    chunks = max(1, math.ceil(cfg.deals / cfg.chunk_deals))
    total = 0
    metrics: dict[str, float] = {}
    policy.train()
    groups = file_groups(cfg, rules, encoder, policy.privileged) if cfg.data else None
    if groups is not None:
        chunks = len(groups)
    passes = cfg.passes if groups is not None else 1
    for step in range(passes * chunks):
        c = step % chunks
        if groups is not None:
            data = _read_group(groups[c], reward_scale, policy.privileged, cfg.q_temperature > 0)
        else:
            deals = min(cfg.chunk_deals, cfg.deals - c * cfg.chunk_deals)
            data = collect_demonstrations(rules, encoder, cfg.agent, deals, num_envs, rng, reward_scale, seed=c,
                                          agent_factory=agent_factory, privileged=policy.privileged)
        T = len(data["actions"])
        total += T if step < chunks else 0
        obs = torch.from_numpy(data["obs"]).to(device)
        masks = torch.from_numpy(data["masks"]).to(device)
        acts = torch.from_numpy(data["actions"]).to(device)
        rets = torch.from_numpy(data["returns"]).to(device)
        priv = torch.from_numpy(data["privileged"]).to(device) if "privileged" in data else None
        with torch.no_grad():
            logits = policy.logits(obs)
            acc = float((MaskedCategorical(logits, masks).mode() == acts).float().mean())
            weight = torch.ones_like(acts, dtype=torch.float32)
            ref_logp = disagree = None  # float32[T, A]: the start's log-probabilities (only these are kept)
            if reference is not None:
                ref = MaskedCategorical(reference.logits(obs), masks)
                ref_logp, disagree = ref.log_probs, (ref.mode() != acts).float()
                del ref
                if cfg.disagreements_only:
                    weight = disagree
            q = None  # float32[T, A]: the card values (q_temperature), NaN where there are none
            if cfg.q_temperature > 0:
                q = torch.from_numpy(data["qvalues"]).to(device)
                if cfg.q_from_trick > 0:  # keep the values from that trick on (tricks completed, one-hot in obs)
                    tricks = obs[:, encoder.o_trick_no:encoder.o_trick_no + rules.num_tricks + 1].argmax(-1)
                    q = torch.where((tricks >= cfg.q_from_trick)[:, None], q, float("nan"))
                regret = dd_regret(logits, masks, q)
        sums = {"bc_loss": 0.0, "bc_value_loss": 0.0, **({"bc_kl": 0.0} if reference is not None else {})}
        count = 0
        for _ in range(cfg.epochs):
            perm = torch.from_numpy(rng.permutation(T)).to(device)
            for start in range(0, T, cfg.batch_size):
                idx = perm[start:start + cfg.batch_size]
                priv_b = None if priv is None else priv[idx]
                if reference is None:
                    logp, _, value = policy.policy_terms(obs[idx], masks[idx], acts[idx], priv_b)
                else:  # one forward gives the whole distribution, for the KL, and the recorded action's term
                    logits_b, value = policy(obs[idx], priv_b)
                    cur = MaskedCategorical(logits_b, masks[idx])
                    logp = cur.log_prob(acts[idx])
                    lp = ref_logp[idx]
                    kl = torch.where(masks[idx], lp.exp() * (lp - cur.log_probs), 0.0).sum(-1).mean()
                    sums["bc_kl"] += float(kl.detach())
                if q is not None and cfg.q_objective == "target":  # cross-entropy to the reweighted start
                    target = dd_target(lp, masks[idx], q[idx], cfg.q_temperature)
                    loss_pi = -torch.where(masks[idx], target * cur.log_probs, 0.0).sum(-1).mean()
                elif q is not None:  # KL to the start less the expected gain in table points / temperature
                    loss_pi = kl - dd_gain(cur.log_probs, lp, masks[idx], q[idx]) / cfg.q_temperature
                else:
                    loss_pi = -(logp * weight[idx]).mean()
                loss_v = 0.5 * ((value - rets[idx]) ** 2).mean()
                loss = loss_pi + cfg.value_coef * loss_v
                if reference is not None and cfg.kl_coef > 0:  # KL(start || current), nats per decision
                    loss = loss + cfg.kl_coef * kl
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                opt.step()
                sums["bc_loss"] += float(loss_pi.detach())
                sums["bc_value_loss"] += float(loss_v.detach())
                count += 1
        metrics = {k: v / max(count, 1) for k, v in sums.items()}
        metrics["bc_accuracy"] = acc
        if disagree is not None:
            metrics["bc_disagreements"] = float(disagree.mean())
        if q is not None:
            metrics["bc_dd_regret"] = regret
        log.info("pretrain pass %d/%d chunk %d/%d: %d samples, accuracy before %.3f, loss %.3f, value loss %.3f%s",
                 step // chunks + 1, passes, c + 1, chunks, T, acc, metrics["bc_loss"], metrics["bc_value_loss"],
                 f", KL to the start {metrics['bc_kl']:.4f}, start disagrees on {metrics['bc_disagreements']:.3f}"
                 if "bc_kl" in metrics else "")
        if q is not None:
            log.info("  regret of the greedy card by the card values before the chunk's training: %.3f table points",
                     regret)
    policy.eval()
    metrics["bc_samples"] = float(total)
    metrics["bc_seconds"] = time.perf_counter() - t0
    return metrics


def dd_target(ref_logp: torch.Tensor, masks: torch.Tensor, q: torch.Tensor, temperature: float) -> torch.Tensor:
    """``float32[T, A]``: the start's distribution reweighted by ``exp(q / temperature)`` over the
    legal actions, renormalised; rows without values (``q`` NaN on every legal action) keep the
    start's distribution; zero on illegal actions.

    Args:
        ref_logp: ``float32[T, A]`` the start's log-probabilities (illegal entries are ignored).
        masks: ``bool[T, A]`` legal actions.
        q: ``float32[T, A]`` card values (double-dummy or rollout) in table points (NaN where there are none).
        temperature: table points; > 0.
    """
    bonus = torch.nan_to_num(q, nan=0.0) / temperature
    z = torch.where(masks, ref_logp + bonus, float("-inf"))
    return torch.where(masks, torch.softmax(z, dim=-1), 0.0)


def dd_gain(logp: torch.Tensor, ref_logp: torch.Tensor, masks: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Mean over the rows of the expected card value under ``exp(logp)`` less that under
    the start's ``exp(ref_logp)`` (table points, a scalar that carries ``logp``'s gradient); rows
    without values (``q`` NaN) add 0. Shapes ``[T, A]``; ``masks`` bool, the others float32."""
    has = masks & ~torch.isnan(q)
    q0 = torch.where(has, q, 0.0)
    return torch.where(has, (logp.exp() - ref_logp.exp()) * q0, 0.0).sum(-1).mean()


def dd_losses(q: torch.Tensor, masks: torch.Tensor, picks: torch.Tensor) -> torch.Tensor:
    """``float32[T]``: the best legal action's card value minus that of ``picks``
    (``int64[T]``, legal action ids), table points; NaN on the rows without values. ``q`` is
    ``float32[T, A]`` (NaN where there are no values), ``masks`` ``bool[T, A]``."""
    qv = torch.where(masks, torch.nan_to_num(q, nan=float("-inf")), float("-inf"))
    loss = qv.max(-1).values - qv.gather(-1, picks.unsqueeze(-1)).squeeze(-1)
    return torch.where(torch.isnan(torch.where(masks, q, float("nan"))).all(-1), float("nan"), loss)


def dd_regret(logits: torch.Tensor, masks: torch.Tensor, q: torch.Tensor) -> float:
    """Mean :func:`dd_losses` of the greedy legal action (``logits float32[T, A]``) over the rows
    that have values (card decisions), table points; NaN when there are none."""
    loss = dd_losses(q, masks, torch.where(masks, logits, float("-inf")).argmax(-1))
    return float(loss.nanmean())


__all__ = ["behaviour_clone", "collect_demonstrations", "dd_gain", "dd_losses", "dd_regret", "dd_target",
           "file_groups"]
