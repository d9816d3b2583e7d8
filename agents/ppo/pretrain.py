"""Optional warm start before PPO: imitate a baseline agent (behaviour cloning) and fit the critic.

The baseline (``PretrainConfig.agent``, an agents.registry name) plays every seat of
``PretrainConfig.deals`` random deals, stepped in lockstep by :class:`blot_env.vector.SelfPlayVector`; for each
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

from blot_env.rules_config import RulesConfig

from .config import PretrainConfig
from .demos import collect_demonstrations, dd_losses
from .distributions import MaskedCategorical
from .network import ActorCritic
from .rollout import AgentFactory

log = logging.getLogger(__name__)


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


def dd_regret(logits: torch.Tensor, masks: torch.Tensor, q: torch.Tensor) -> float:
    """Mean :func:`dd_losses` of the greedy legal action (``logits float32[T, A]``) over the rows
    that have values (card decisions), table points; NaN when there are none."""
    loss = dd_losses(q, masks, torch.where(masks, logits, float("-inf")).argmax(-1))
    return float(loss.nanmean())


__all__ = ["behaviour_clone", "dd_gain", "dd_regret", "dd_target", "file_groups"]
