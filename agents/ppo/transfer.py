"""Move a trained policy to another preset or observation kind: the warm start of a preset from
a stronger one's network, or of a richer input from the same network.

Two presets of one family share most of their observation and action spaces: ``bazar`` and
``bazar-app`` play the same deck, tricks and card points, and differ in their bid ladder (8..80
with kaput+N against 8..24), their declarations (announced against automatic) and a few pieces
of the observation. :func:`transfer_policy` builds a network for the target preset and copies
into it, row by row, every weight whose input feature or output action means the same in the
source preset:

* input features by their label (``ObservationEncoder.feature_labels``: the piece and index,
  or the call a column stands for), each row times the ratio of the two columns' divisors
  (bazar divides bid values by 80, bazar-app by 25, so the weight times the input stays the
  same for the same bid; a duel's ``tricks_won`` by 9, duel-app's by 8);
* policy-head rows by action string, bids with their score unit (``ObservationEncoder.bid_label``:
  bazar's ``bid 80C`` is 80 table points, belote's 80 raw points, so they do not map);
* the hidden layers, the value head and the critic's privileged columns as they are (the
  network config is the source's).

A target feature or action with no source equivalent keeps the fresh network's initial weights
(seeded by the source config's ``seed``; a source file without critic weights leaves the whole
critic fresh), or, with ``new_features="zero"``, a zero weight row, so that the new input cannot
move the network until training does; a source one with no target equivalent is dropped.

The target may also be another observation kind of the same preset (``obs_kind``): every
``"observation"`` feature is a feature of ``"observation_voids"``, which adds the public voids
(16 features on a 4-player preset). Moved with zero rows for the new features, the network
gives the source's logits and values on every position, and PPO can then learn what the voids
are worth (docs/experiments.md, "Stage 9: stage 4 on the public voids"). Presets of different seat
counts are refused: their relative-seat pieces would mean different seats. For every target
observation whose features all map, the moved actor's logits over mapped actions equal the
source actor's on the same position (``tests/test_transfer.py``). The file is a starting point
for ``blot-train`` (``init_policy``), not a finished policy: the rules the source never saw
(bazar-app's automatic declarations, say) still need training.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from blot_env.actions import layout_for
from blot_env.errors import ConfigError
from blot_env.observation import KINDS, ObservationEncoder
from blot_env.rules_config import make_rules

from ..eval.board_pool import state_dict_digest
from .config import config_from_saved
from .network import build_policy

_FIRST_LAYERS = ("actor_trunk.0.weight", "critic_trunk.0.weight")


@dataclass(frozen=True)
class FeatureMap:
    """Where each target input feature and action comes from (D: the target encoder's size,
    A: the target layout's action count).

    Attributes:
        obs_src: ``int64[D]``, the source feature index of each target feature, -1 if none.
        obs_scale: ``float32[D]``, the factor on the copied weight row (the target column's
            divisor over the source column's; 1 for one-hot and bitmask entries).
        act_src: ``int64[A]``, the source action id of each target action, -1 if none.
    """

    obs_src: np.ndarray
    obs_scale: np.ndarray
    act_src: np.ndarray

    @property
    def obs_mapped(self) -> int:
        """Target input features with a source feature."""
        return int((self.obs_src >= 0).sum())

    @property
    def act_mapped(self) -> int:
        """Target actions with a source action."""
        return int((self.act_src >= 0).sum())


def action_labels(enc: ObservationEncoder) -> list[str]:
    """``list[str]`` of length A: each action's string, bids with their score unit
    (``ObservationEncoder.bid_label``)."""
    return [enc.bid_label(a) for a in range(enc.layout.num_actions)]


def feature_map(src: ObservationEncoder, dst: ObservationEncoder) -> FeatureMap:
    """The row map from ``src``'s observation and actions to ``dst``'s: columns and actions
    are paired by label (``feature_labels``, :func:`action_labels`).

    Args:
        src: the encoder of the trained policy's preset.
        dst: the encoder of the target preset; of another kind, the pieces both kinds have
            pair by label and the others map to nothing.

    Returns:
        The :class:`FeatureMap`.

    Raises:
        ConfigError: their presets have different seat counts (relative-seat pieces would mean
            different seats).
    """
    if src.n != dst.n:
        raise ConfigError(f"cannot transfer between {src.n}-player {src.cfg.preset!r} and "
                          f"{dst.n}-player {dst.cfg.preset!r}: the relative-seat pieces differ")
    where = {label: (j, div) for j, (label, div) in enumerate(src.feature_labels())}
    obs_src = np.full(dst.size, -1, dtype=np.int64)
    scale = np.ones(dst.size, dtype=np.float32)
    for i, (label, div) in enumerate(dst.feature_labels()):
        if label in where:
            j, div_s = where[label]
            obs_src[i], scale[i] = j, div / div_s
    act_of = {s: a for a, s in enumerate(action_labels(src))}
    act_src = np.array([act_of.get(s, -1) for s in action_labels(dst)], dtype=np.int64)
    return FeatureMap(obs_src, scale, act_src)


def transfer_policy(src_path: str | Path, preset: str, out_path: str | Path, obs_kind: str | None = None,
                    new_features: Literal["fresh", "zero"] = "fresh") -> dict[str, Any]:
    """Write a policy file for ``preset`` whose weights come from the policy file ``src_path``.

    Args:
        src_path: a ``policy.pt`` or ``checkpoint.pt`` (a path; the name ``ppo`` is not
            resolved here).
        preset: the target preset (``bazar-app``, say; the source's own preset with another
            ``obs_kind``).
        out_path: where to write the new ``policy.pt`` (its config is the source's with
            ``preset`` and ``obs_kind`` replaced; ``meta["transferred_from"]`` holds the report
            below).
        obs_kind: the target observation kind (``blot_env.observation.KINDS``; default: the
            source's).
        new_features: ``"fresh"`` (the new network's initial weights) or ``"zero"`` (zero
            weights) for the rows of target input features without a source feature.

    Returns:
        A report: ``obs_mapped`` of ``obs_size`` input features, ``obs_dropped`` of the
        source's ``source_obs_size`` with no target feature (their trained weights are lost),
        ``actions_mapped`` of ``num_actions`` actions, the source's preset, observation kind
        and weights digest (``source_digest``, as ``agents.eval.board_pool.weights_digest`` gives
        it), the target's ``obs_kind`` and ``new_features``.

    Raises:
        FileNotFoundError: no file at ``src_path``.
        ConfigError: not a PPO file, or one whose sizes do not fit its own preset (an older
            encoder or layout); an unknown preset or observation kind; an unknown
            ``new_features``; the source's own preset and observation kind; another seat
            count (:func:`feature_map`); a hidden-layer weight of another shape; ``out_path``
            is a directory or cannot be written.
    """
    from .agent import read_policy_file
    from .trainer import save_policy

    src_path, out_path = Path(src_path), Path(out_path)
    if not src_path.is_file():
        raise FileNotFoundError(f"no policy file at {src_path}")
    if out_path.is_dir():
        raise ConfigError(f"--out {out_path} is a directory; give the policy file to write")
    if new_features not in ("fresh", "zero"):
        raise ConfigError(f"new_features must be 'fresh' or 'zero', got {new_features!r}")
    data = read_policy_file(src_path)
    cfg_s = config_from_saved(data["config"])
    kind = cfg_s.obs_kind if obs_kind is None else obs_kind
    if kind not in KINDS:
        raise ConfigError(f"unknown observation kind {kind!r}; expected one of {', '.join(KINDS)}")
    if (cfg_s.preset, cfg_s.obs_kind) == (preset, kind):
        raise ConfigError(f"{src_path} is already a {preset!r} policy reading the {kind!r} observation kind; "
                          "nothing to transfer")
    rules_s, rules_d = make_rules(cfg_s.preset), make_rules(preset)
    enc_s, enc_d = ObservationEncoder(rules_s, cfg_s.obs_kind), ObservationEncoder(rules_d, kind)
    sizes = (data.get("obs_dim"), data.get("num_actions"))
    if sizes != (enc_s.size, enc_s.layout.num_actions):
        raise ConfigError(f"{src_path}: obs size and action count {sizes} do not fit preset {cfg_s.preset!r} "
                          f"({enc_s.size}, {enc_s.layout.num_actions}); a file of an older encoder or action "
                          "layout cannot be transferred")
    fm = feature_map(enc_s, enc_d)
    cfg_d = config_from_saved({**data["config"], "preset": preset, "obs_kind": kind})
    net = build_policy(cfg_d, enc_d, layout_for(rules_d))
    src = data["policy"]
    keep = fm.obs_src >= 0
    rows, cols_from = torch.from_numpy(np.flatnonzero(keep)), torch.from_numpy(fm.obs_src[keep])
    factor = torch.from_numpy(fm.obs_scale[keep])[:, None]
    arow = torch.from_numpy(np.flatnonzero(fm.act_src >= 0))
    afrom = torch.from_numpy(fm.act_src[fm.act_src >= 0])
    sparse = cfg_d.network.input_layer == "sparse"    # the sparse layer stores [in, out], nn.Linear [out, in]
    new: dict[str, torch.Tensor] = {}
    for k, t in net.state_dict().items():
        s = src.get(k)
        if s is None:
            new[k] = t
            continue
        t = t.clone()
        if k in _FIRST_LAYERS:
            tt, ss = (t, s) if sparse else (t.T, s.T)
            if new_features == "zero":
                tt[:enc_d.size][~torch.from_numpy(keep)] = 0.0
            tt[rows] = ss[cols_from] * factor
            extra = tt.shape[0] - enc_d.size                  # the critic's privileged columns
            if extra and extra == ss.shape[0] - enc_s.size:
                tt[enc_d.size:] = ss[enc_s.size:]
        elif k in ("policy_head.weight", "policy_head.bias"):
            t[arow] = s[afrom]
        elif t.shape == s.shape:
            t = s.clone()
        else:
            raise ConfigError(f"{src_path}: weight {k} has shape {tuple(s.shape)}, the target network "
                              f"{tuple(t.shape)}")
        new[k] = t.contiguous()
    net.load_state_dict(new)
    report = {"source": str(src_path), "source_preset": cfg_s.preset, "source_obs_kind": cfg_s.obs_kind,
              "source_digest": state_dict_digest(src), "preset": preset, "obs_kind": kind,
              "new_features": new_features, "obs_mapped": fm.obs_mapped, "obs_size": enc_d.size,
              "obs_dropped": enc_s.size - len(np.unique(fm.obs_src[keep])), "source_obs_size": enc_s.size,
              "actions_mapped": fm.act_mapped, "num_actions": enc_d.layout.num_actions}
    try:
        save_policy(net, cfg_d, out_path, meta={"transferred_from": report})
    except OSError as e:
        raise ConfigError(f"cannot write {out_path}: {e.strerror or e}") from None
    return report


__all__ = ["FeatureMap", "action_labels", "feature_map", "transfer_policy"]
