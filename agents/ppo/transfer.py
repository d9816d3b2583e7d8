"""Move a trained policy to another preset: the warm start of a preset from a stronger one's network.

Two presets of one family share most of their observation and action spaces: ``bazar`` and
``bazar-app`` play the same deck, tricks and card points, and differ in their bid ladder (8..80
with kaput+N against 8..24), their declarations (announced against automatic) and a few pieces
of the observation. :func:`transfer_policy` builds a network for the target preset and copies
into it, row by row, every weight whose input feature or output action has the same meaning in
the source preset:

* observation pieces (``ObservationEncoder.pieces``) of the same name and shape: row for row;
* ``last_call``: per relative seat, the call-kind columns by kind name, the strain columns, and
  the value column rescaled by the ratio of the presets' ``value_scale`` (the value is
  ``bid / value_scale``, so the weight times the input stays the same for the same bid);
* ``contract_value``: rescaled the same way;
* ``standing_bid``: by the action string of the bid it marks (``bid 16H``, ``bid kaput S``);
* policy-head rows: by action string (``pass``, ``contra``, ``bid 8C``, ``play JH`` ...);
* the hidden layers, the value head and the critic's privileged columns: as they are (the
  network config is the source's).

A target feature or action with no source equivalent keeps the fresh network's initial weights
(seeded by the source config's ``seed``); a source one with no target equivalent is dropped.
For every target observation ``x`` whose features all map, the transferred actor's logits over
mapped actions equal the source actor's on the mapped observation (``tests/test_transfer.py``).
The file is then a starting point for ``blot-train`` (``init_policy``), not a finished policy:
the rules it did not see (bazar-app's automatic declarations, say) still need training.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from blot_env.actions import layout_for
from blot_env.errors import ConfigError
from blot_env.observation import ObservationEncoder
from blot_env.rules_config import make_rules

from .config import config_from_saved
from .network import build_policy

_RESCALED = ("contract_value",)


@dataclass(frozen=True)
class FeatureMap:
    """Where each target input feature and action comes from.

    Attributes:
        obs_src: ``int64[D_target]``, the source feature index of each target feature, -1 if none.
        obs_scale: ``float32[D_target]``, the factor on the copied weight row (1 except the
            rescaled value columns).
        act_src: ``int64[A_target]``, the source action id of each target action, -1 if none.
    """

    obs_src: np.ndarray
    obs_scale: np.ndarray
    act_src: np.ndarray

    @property
    def obs_mapped(self) -> int:
        return int((self.obs_src >= 0).sum())

    @property
    def act_mapped(self) -> int:
        return int((self.act_src >= 0).sum())


def feature_map(src: ObservationEncoder, dst: ObservationEncoder) -> FeatureMap:
    """The row map from ``src``'s observation and action layout to ``dst``'s (see the module doc).

    Raises:
        ConfigError: the encoders are of different kinds, or their presets have different seat
            counts (relative-seat pieces would mean different seats).
    """
    if src.kind != dst.kind:
        raise ConfigError(f"cannot transfer between observation kinds {src.kind!r} and {dst.kind!r}")
    if src.n != dst.n:
        raise ConfigError(f"cannot transfer between {src.n}-player {src.cfg.preset!r} and "
                          f"{dst.n}-player {dst.cfg.preset!r}: the relative-seat pieces differ")
    obs_src = np.full(dst.size, -1, dtype=np.int64)
    scale = np.ones(dst.size, dtype=np.float32)
    ratio = dst.value_scale / src.value_scale
    lay_s, lay_d = src.layout, dst.layout
    act_of = {s: a for a, s in enumerate(lay_s.strings)}
    act_src = np.array([act_of.get(s, -1) for s in lay_d.strings], dtype=np.int64)
    pieces = {p.name: p for p in src.pieces}
    for p in dst.pieces:
        q = pieces.get(p.name)
        if q is None:
            continue
        if p.name == "last_call":
            ks, kd = len(src._call_kinds), len(dst._call_kinds)
            fs, fd = src._call_feat_size, dst._call_feat_size
            cols = {kd + 1 + s: ks + 1 + s for s in range(5)}        # strain columns
            cols[kd] = ks                                           # the value column
            for i, kind in enumerate(dst._call_kinds):
                if kind in src._call_kinds:
                    cols[i] = src._call_kinds.index(kind)
            for r in range(dst.n):
                for cd, cs in cols.items():
                    obs_src[p.offset + r * fd + cd] = q.offset + r * fs + cs
                    if cd == kd:
                        scale[p.offset + r * fd + cd] = ratio
        elif p.name == "standing_bid":
            pos_s = {lay_s.strings[a]: i for a, i in src._high_pos.items()}
            for a, i in dst._high_pos.items():
                j = pos_s.get(lay_d.strings[a])
                if j is not None:
                    obs_src[p.offset + i] = q.offset + j
        elif p.shape == q.shape:
            obs_src[p.offset:p.offset + p.size] = np.arange(q.offset, q.offset + q.size)
            if p.name in _RESCALED:
                scale[p.offset:p.offset + p.size] = ratio
    return FeatureMap(obs_src, scale, act_src)


def _weights_digest(weights: dict[str, torch.Tensor]) -> str:
    """The 12-digit digest ``agents.board_pool.weights_digest`` gives the network these weights load into."""
    h = hashlib.sha256()
    for key, value in sorted(weights.items()):
        h.update(key.encode())
        h.update(value.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def transfer_policy(src_path: str | Path, preset: str, out_path: str | Path) -> dict[str, Any]:
    """Write a policy file for ``preset`` whose weights come from the policy file ``src_path``.

    Args:
        src_path: a ``policy.pt`` or ``checkpoint.pt`` of another preset (or ``ppo`` is not
            accepted here: give the file).
        preset: the target preset (``bazar-app``, say).
        out_path: where to write the new ``policy.pt`` (its config is the source's with
            ``preset`` replaced; ``meta`` records the source and the map's coverage).

    Returns:
        A report: ``obs_mapped``/``obs_size``, ``actions_mapped``/``num_actions``, the source's
        preset and weights digest (``source_digest``, as ``agents.board_pool.weights_digest``).

    Raises:
        FileNotFoundError: no file at ``src_path``.
        ConfigError: not a PPO file; an unknown preset; a different seat count (see
            :func:`feature_map`); the same preset as the source.
    """
    from .agent import read_policy_file

    src_path = Path(src_path)
    if not src_path.is_file():
        raise FileNotFoundError(f"no policy file at {src_path}")
    data = read_policy_file(src_path)
    cfg_s = config_from_saved(data["config"])
    if cfg_s.preset == preset:
        raise ConfigError(f"{src_path} is already a {preset!r} policy; nothing to transfer")
    rules_s, rules_d = make_rules(cfg_s.preset), make_rules(preset)
    enc_s, enc_d = ObservationEncoder(rules_s, cfg_s.obs_kind), ObservationEncoder(rules_d, cfg_s.obs_kind)
    if enc_s.size != data["obs_dim"]:
        raise ConfigError(f"{src_path}: obs size {data['obs_dim']} does not fit preset {cfg_s.preset!r} "
                          f"({enc_s.size}); a file of an older encoder cannot be transferred")
    fm = feature_map(enc_s, enc_d)
    cfg_d = config_from_saved({**data["config"], "preset": preset})
    net = build_policy(cfg_d, enc_d, layout_for(rules_d))
    w = net.state_dict()
    src = data["policy"]
    out: dict[str, torch.Tensor] = {}
    rows = torch.from_numpy(np.flatnonzero(fm.obs_src >= 0))
    cols_from = torch.from_numpy(fm.obs_src[fm.obs_src >= 0])
    factor = torch.from_numpy(fm.obs_scale[fm.obs_src >= 0])[:, None]
    arow = torch.from_numpy(np.flatnonzero(fm.act_src >= 0))
    afrom = torch.from_numpy(fm.act_src[fm.act_src >= 0])
    for k, t in w.items():
        s = src.get(k)
        if s is None:
            out[k] = t
            continue
        t = t.clone()
        if k in ("actor_trunk.0.weight", "critic_trunk.0.weight"):
            # the sparse layer stores [in, out]; a dense nn.Linear stores [out, in]
            in_rows = cfg_d.network.input_layer == "sparse"
            tt, ss = (t, s) if in_rows else (t.T, s.T)
            tt[rows] = ss[cols_from] * factor
            extra = tt.shape[0] - enc_d.size                         # the critic's privileged columns
            if extra and extra == ss.shape[0] - enc_s.size:
                tt[enc_d.size:] = ss[enc_s.size:]
            t = tt if in_rows else tt.T
        elif k == "policy_head.weight" or k == "policy_head.bias":
            t[arow] = s[afrom]
        elif t.shape == s.shape:
            t = s.clone()
        else:
            raise ConfigError(f"{src_path}: weight {k} has shape {tuple(s.shape)}, the target network "
                              f"{tuple(t.shape)}")
        out[k] = t.contiguous()
    report = {"source": str(src_path), "source_preset": cfg_s.preset, "source_digest": _weights_digest(data["policy"]),
              "preset": preset, "obs_mapped": fm.obs_mapped, "obs_size": enc_d.size,
              "actions_mapped": fm.act_mapped, "num_actions": layout_for(rules_d).num_actions}
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    from .trainer import POLICY_FORMAT

    blob = {"format": POLICY_FORMAT, "config": cfg_d.to_dict(), "obs_dim": enc_d.size,
            "num_actions": layout_for(rules_d).num_actions, "policy": out,
            "meta": {"transferred_from": report}}
    tmp = out_path.with_suffix(out_path.suffix + ".tmp")
    torch.save(blob, tmp)
    tmp.replace(out_path)
    return report


__all__ = ["FeatureMap", "feature_map", "transfer_policy"]
