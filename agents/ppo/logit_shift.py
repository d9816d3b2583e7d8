"""Shift the policy head's bias of whole action blocks: reopen calls a policy stopped trying.

PPO can drive a call's probability so low that sampling never tries it again, and then it
can never learn when the call pays. The bazar policies of stages 4, 10 and 11 never say
``contra`` (rules.md 2.2): over their own greedy play the mean probability they give it where it
is legal lies between 2.7e-11 and 4.9e-10 (``scripts/shift_logits.py --probe 300``), so no
rollout samples it.

:func:`shift_logits` adds one constant to the policy head's bias of every action of the named
blocks (:class:`blot_env.actions.ActionLayout`: ``CONTRA``, ``RECONTRA``, ``BID``, ...). In
every position that multiplies the odds of each of those actions against every legal action
outside the blocks by ``exp(shift)``, leaves their odds among themselves as they were, and
leaves every other logit as it was; the critic is untouched. The result is a start for ``init_policy`` from which
training can learn where the call helps (docs/training.md, "Stage 13").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, deal_random, is_terminal
from blot_env.errors import ConfigError
from blot_env.rules_config import make_rules
from blot_env.view import seat_view

from .agent import load_ppo_agent, read_policy_file
from .config import config_from_saved
from .trainer import POLICY_FORMAT, write_policy_file


def block_ids(preset: str, blocks: Sequence[str]) -> list[int]:
    """The action ids of ``blocks`` in ``preset``'s layout, in id order.

    Raises:
        ConfigError: no block named, or a name the preset's layout does not have (the message
            lists the blocks it has).
    """
    lay = layout_for(make_rules(preset))
    if not blocks:
        raise ConfigError(f"name at least one action block; {preset} has {', '.join(lay.blocks)}")
    unknown = [b for b in blocks if b not in lay.blocks]
    if unknown:
        raise ConfigError(f"no action block {', '.join(map(repr, unknown))} in {preset}; "
                          f"it has {', '.join(lay.blocks)}")
    return sorted({a for b in blocks for a in range(lay.blocks[b].start, lay.blocks[b].stop)})


def shift_logits(data: dict[str, Any], blocks: Sequence[str], shift: float) -> dict[str, Any]:
    """The policy-file dict of ``data`` with ``shift`` added to the head's bias of ``blocks``.

    Args:
        data: a policy or checkpoint dict (:func:`agents.ppo.agent.read_policy_file`); its
            ``config``, ``policy`` (the weights), ``obs_dim``, ``num_actions`` and ``meta`` are used.
        blocks: action block names of the policy's preset (``CONTRA``, ``RECONTRA``, ...).
        shift: added to those actions' logits, in logit units (natural log of the odds).

    Returns:
        A dict in the policy-file format (``blot-ppo-policy/1``); ``meta["logit_shift"]`` records
        the blocks and shift (an earlier shift's record under ``earlier``).

    The one tensor changed is ``policy_head.bias`` (``float32[A]``, A = ``num_actions``; saved
    as float32 whatever its stored dtype): ``shift`` is added at the blocks' action ids.

    Raises:
        ConfigError: an unknown block (:func:`block_ids`), a shift that is not finite, no
            ``obs_dim`` and ``num_actions`` entries, or weights without a ``policy_head.bias``
            of ``num_actions`` entries.
    """
    if not np.isfinite(shift):
        raise ConfigError(f"the shift must be a finite number of logit units, got {shift}")
    if "obs_dim" not in data or "num_actions" not in data:
        raise ConfigError("no obs_dim and num_actions entries: not a policy or checkpoint file written by blot-train")
    cfg = config_from_saved(data["config"])
    ids = block_ids(cfg.preset, blocks)
    bias = data["policy"].get("policy_head.bias")
    if bias is None or tuple(bias.shape) != (int(data["num_actions"]),):
        raise ConfigError(f"no policy_head.bias of {data['num_actions']} entries in the weights: not an actor "
                          "written by blot-train")
    weights = {k: v.clone() for k, v in data["policy"].items()}
    weights["policy_head.bias"] = bias.float().clone()
    weights["policy_head.bias"][ids] += float(shift)
    meta = dict(data.get("meta") or {})
    record: dict[str, Any] = {"blocks": list(blocks), "shift": float(shift)}
    if "logit_shift" in meta:
        record["earlier"] = meta["logit_shift"]
    meta["logit_shift"] = record
    return {"format": POLICY_FORMAT, "config": data["config"], "obs_dim": int(data["obs_dim"]),
            "num_actions": int(data["num_actions"]), "policy": weights, "meta": meta}


def shift_logits_file(src: str | Path, out: str | Path, blocks: Sequence[str], shift: float) -> dict[str, Any]:
    """Read ``src`` (a policy or checkpoint file), shift it (:func:`shift_logits`) and save the
    result as a policy file at ``out``; returns the saved dict.

    Raises:
        FileNotFoundError: no file ``src``.
        ConfigError: as :func:`read_policy_file` and :func:`shift_logits`.
        OSError: ``out`` cannot be written.
    """
    data = shift_logits(read_policy_file(src), blocks, shift)
    data["meta"]["logit_shift"]["file"] = str(src)
    write_policy_file(data, out)
    return data


def probe_blocks(policy: str | Path, blocks: Sequence[str], deals: int = 300, seed: int = 0) -> dict[str, Any]:
    """How likely ``policy`` makes ``blocks`` where one of them is legal, over its own greedy play
    in every seat of ``deals`` random deals (the dealer rotating).

    Returns:
        ``{"decisions": positions with a legal action of the blocks, "mean", "max": the policy's
        probability of the blocks there (in [0, 1], summed over their legal actions), "share_above_1pct":
        the share of those positions where it exceeds 0.01, "greedy_share": the share where the
        greedy action is one of them}``; the float entries are None without such positions.

    Raises:
        FileNotFoundError: no such file or shipped name.
        ConfigError: an unknown block; not a PPO file (:func:`agents.ppo.agent.load_ppo_agent`);
            an oracle policy (``network.oracle``), which cannot act from a seat's view.
        ValueError: ``deals`` below 1.
    """
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    agent = load_ppo_agent(policy)
    cfg = make_rules(agent.config.preset)
    ids = set(block_ids(cfg.preset, blocks))
    rng = np.random.default_rng(seed)
    probs: list[float] = []
    greedy = 0
    for i in range(deals):
        state = deal_random(cfg, rng, dealer=i % cfg.num_players)
        while not is_terminal(state):
            legal, p = agent.action_probs(seat_view(state, current_seat(state)))
            action = int(legal[int(np.argmax(p))])
            inside = [j for j, a in enumerate(legal) if a in ids]
            if inside:
                probs.append(float(p[inside].sum()))
                greedy += action in ids
            state = apply_action(state, action)
    arr = np.asarray(probs)
    n = len(arr)
    return {"decisions": n, "mean": float(arr.mean()) if n else None, "max": float(arr.max()) if n else None,
            "share_above_1pct": float((arr > 0.01).mean()) if n else None,
            "greedy_share": greedy / n if n else None}


__all__ = ["block_ids", "probe_blocks", "shift_logits", "shift_logits_file"]
