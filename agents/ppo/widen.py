"""Grow a trained policy's actor into a wider or deeper one that acts exactly as before.

A fine-tuning stage can only use the capacity its network has. :func:`widen_policy` builds
the policy-file dict of a larger actor (``network.hidden``) whose logits equal the source's
on every observation, so that ``blot-train`` (``init_policy``) continues from the trained
play with room to learn more (Net2Net's function-preserving growth, Chen et al., 2016):

* every source unit keeps its incoming weights and bias;
* a new unit of a widened layer gets freshly initialised incoming weights (orthogonal, as a
  fresh network's) and zero outgoing weights, so it changes nothing until training moves
  the outgoing weights; its incoming weights get gradients once those are non-zero;
* a new layer after the last source layer starts as the identity on the source units (a
  ReLU of a ReLU's output is that output) plus new units as above; so it needs ``relu``.

The critic (``network.critic_hidden``, or ``hidden`` when that is empty, which is then kept as
an explicit ``critic_hidden``) is copied as it is. The output's config is the source's with the
new ``network.hidden``; its ``meta`` records the source file and widths (and keeps an earlier
widening's record under ``earlier``). With ``network.precision: bfloat16`` an added layer
rounds its input to bfloat16 where the source's head read float32 (after the first layer,
which runs outside autocast), so the logits agree to bfloat16 rounding only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from blot_env.errors import ConfigError

from .agent import read_policy_file
from .trainer import POLICY_FORMAT, write_policy_file


def _fresh_rows(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    """``float32[rows, cols]`` orthogonal rows with the ReLU gain, as :func:`network.layer_init`."""
    a = torch.randn(max(rows, cols), min(rows, cols), generator=gen, dtype=torch.float64)
    q, r = torch.linalg.qr(a)
    q = q * torch.sign(torch.diagonal(r))
    q = q if rows >= cols else q.t()
    return (math.sqrt(2) * q[:rows, :cols]).to(torch.float32)


def widen_policy(data: dict[str, Any], hidden: Sequence[int], seed: int = 0) -> dict[str, Any]:
    """The policy-file dict of ``data``'s network with actor widths ``hidden``, acting as ``data``.

    Args:
        data: a policy or checkpoint dict (:func:`agents.ppo.agent.read_policy_file`); only its
            ``config``, ``policy`` (the weights), ``obs_dim``, ``num_actions`` and ``meta`` are used.
        hidden: the new actor widths: at least as many layers as the source, each of the source's
            layers at least as wide as before, each added layer at least as wide as the source's
            last.
        seed: seed of the new units' incoming weights.

    Returns:
        A dict in the policy-file format (``blot-ppo-policy/1``) whose actor gives the same logits
        as the source's to float32 rounding (``tests/test_widen.py``).

    Raises:
        ConfigError: ``hidden`` shrinks a layer, drops one, or adds one to a ``tanh`` network;
            the network shares its trunk with the critic; the weights do not fit the config's
            ``network.hidden`` (the message names the missing or unexpected weight).
    """
    cfg = data["config"]
    net = dict(cfg.get("network") or {})
    old = [int(h) for h in net.get("hidden", [256, 256])]
    new = [int(h) for h in hidden]
    if net.get("shared_trunk"):
        raise ConfigError("network.shared_trunk: the critic reads the actor's trunk, so the actor cannot grow alone")
    if len(new) < len(old) or any(n < o for n, o in zip(new, old)):
        raise ConfigError(f"network.hidden {new} must keep every layer of {old} at least as wide (it may add layers)")
    if len(new) > len(old) and net.get("activation", "relu") != "relu":
        raise ConfigError("an added layer starts as the identity, which only a relu network keeps; "
                          f"this one has activation={net.get('activation')!r}")
    if any(n < old[-1] for n in new[len(old):]):
        raise ConfigError(f"an added layer must be at least {old[-1]} wide (the source's last layer) to start as "
                          f"the identity; got {new[len(old):]}")
    w = data["policy"]
    needed = [f"actor_trunk.{2 * i}.{p}" for i in range(len(old)) for p in ("weight", "bias")]
    needed += ["policy_head.weight", "policy_head.bias"]
    absent = [k for k in needed if k not in w]
    extra = [k for k in w if k.startswith("actor_trunk.") and k not in needed]
    if absent or extra:
        raise ConfigError(f"the weights are not those of an actor with network.hidden={old}: missing {absent[:3]}, "
                          f"unexpected {extra[:3]}")
    if "obs_dim" not in data or "num_actions" not in data:
        raise ConfigError("no obs_dim and num_actions entries: not a policy or checkpoint file written by blot-train")
    gen = torch.Generator().manual_seed(int(seed))
    sparse = net.get("input_layer") == "sparse"
    out: dict[str, torch.Tensor] = {k: v.clone() for k, v in w.items()
                                    if not k.startswith(("actor_trunk.", "policy_head."))}
    prev_old, prev_new = int(data["obs_dim"]), int(data["obs_dim"])
    for i, width in enumerate(new):
        key = f"actor_trunk.{2 * i}"
        grown = torch.zeros(width, prev_new)  # [out, in]
        bias = torch.zeros(width)
        if i < len(old):
            src = w[f"{key}.weight"].float()
            src = src.t() if (i == 0 and sparse) else src  # the sparse layer stores [in, out]
            if tuple(src.shape) != (old[i], prev_old):
                raise ConfigError(f"{key}.weight has shape {tuple(src.shape)}, expected {(old[i], prev_old)}")
            grown[:old[i], :prev_old] = src
            bias[:old[i]] = w[f"{key}.bias"].float()
            kept = old[i]
        else:  # an added layer: the identity on the source's last units
            grown[:prev_old, :prev_old] = torch.eye(prev_old)
            kept = prev_old
        if width > kept:  # new units read every input, old and new; nothing reads them yet
            grown[kept:, :] = _fresh_rows(width - kept, prev_new, gen)
        out[f"{key}.weight"] = grown.t().contiguous() if (i == 0 and sparse) else grown
        out[f"{key}.bias"] = bias
        prev_old, prev_new = kept, width
    head = w["policy_head.weight"].float()
    if head.shape[1] != prev_old:
        raise ConfigError(f"policy_head.weight has {head.shape[1]} inputs, expected {prev_old}")
    new_head = torch.zeros(head.shape[0], prev_new)
    new_head[:, :prev_old] = head
    out["policy_head.weight"] = new_head
    out["policy_head.bias"] = w["policy_head.bias"].float().clone()
    net_out = {**net, "hidden": new}
    if not net.get("critic_hidden"):
        net_out["critic_hidden"] = old
    meta = dict(data.get("meta") or {})
    record: dict[str, Any] = {"hidden": old, "to": new, "seed": int(seed)}
    if "widened_from" in meta:
        record["earlier"] = meta["widened_from"]
    meta["widened_from"] = record
    return {"format": POLICY_FORMAT, "config": {**cfg, "network": net_out}, "obs_dim": int(data["obs_dim"]),
            "num_actions": int(data["num_actions"]), "policy": out, "meta": meta}


def widen_policy_file(src: str | Path, out: str | Path, hidden: Sequence[int], seed: int = 0) -> dict[str, Any]:
    """Read ``src`` (a policy or checkpoint file), widen it (:func:`widen_policy`) and save the
    result as a policy file at ``out``; returns the saved dict.

    Raises:
        ConfigError: as :func:`read_policy_file` and :func:`widen_policy`.
        OSError: ``out`` cannot be written.
    """
    data = widen_policy(read_policy_file(src), hidden, seed)
    data["meta"]["widened_from"]["file"] = str(src)
    write_policy_file(data, out)
    return data
