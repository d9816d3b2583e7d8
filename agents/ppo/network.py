"""The actor-critic MLP: egocentric observation in, masked policy and a value out."""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor, nn

from blot_env.actions import ActionLayout

from .config import NetworkConfig
from .distributions import MaskedCategorical


def layer_init(layer: nn.Linear, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights with gain ``std`` and constant bias (the PPO implementation detail)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def _mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(sizes):
        layers += [layer_init(nn.Linear(a, b)), activation()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Policy and value network.

    Args:
        obs_dim: D, the observation encoder's ``size``.
        num_actions: A, the action layout's ``num_actions``.
        cfg: widths, nonlinearity and trunk sharing.

    ``forward(obs float32[B, D]) -> (logits float32[B, A], value float32[B])``. The value is in
    reward units (scaled score-sheet points, see ``RolloutConfig.reward_scale``). ``policy_bias``
    (``float32[A]``) sets the initial bias of the policy head (see :func:`block_uniform_bias`).
    """

    def __init__(self, obs_dim: int, num_actions: int, cfg: NetworkConfig | None = None,
                 policy_bias: Tensor | None = None):
        super().__init__()
        cfg = cfg or NetworkConfig()
        self.obs_dim, self.num_actions, self.cfg = obs_dim, num_actions, cfg
        act = nn.ReLU if cfg.activation == "relu" else nn.Tanh
        sizes = [obs_dim, *cfg.hidden]
        self.actor_trunk = _mlp(sizes, act)
        self.critic_trunk = None if cfg.shared_trunk else _mlp(sizes, act)
        self.policy_head = layer_init(nn.Linear(cfg.hidden[-1], num_actions), std=0.01)
        self.value_head = layer_init(nn.Linear(cfg.hidden[-1], 1), std=1.0)
        if policy_bias is not None:
            with torch.no_grad():
                self.policy_head.bias.copy_(policy_bias)

    def forward(self, obs: Tensor) -> tuple[Tensor, Tensor]:
        h = self.actor_trunk(obs)
        hv = h if self.critic_trunk is None else self.critic_trunk(obs)
        return self.policy_head(h), self.value_head(hv).squeeze(-1)

    def logits(self, obs: Tensor) -> Tensor:
        """``float32[B, A]`` policy logits only (no critic pass)."""
        return self.policy_head(self.actor_trunk(obs))

    def value(self, obs: Tensor) -> Tensor:
        """``float32[B]`` value estimates."""
        return self.forward(obs)[1]

    def dist(self, obs: Tensor, mask: Tensor) -> tuple[MaskedCategorical, Tensor]:
        """(masked distribution, value) for ``obs float32[B, D]`` and ``mask bool[B, A]``."""
        logits, value = self.forward(obs)
        return MaskedCategorical(logits, mask), value

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def block_uniform_bias(layout: ActionLayout) -> Tensor:
    """``float32[A]``: ``-log(block size)`` per action id, so equal logits elsewhere give each
    layout block (PASS, BID, CONTRA, PLAY, ...) the same total probability among legal blocks."""
    bias = torch.zeros(layout.num_actions)
    for b in layout.blocks.values():
        bias[b.start:b.stop] = -math.log(b.size)
    return bias


#: auction_prior: halving per ladder step, and the mass of the kaput blocks relative to a block
LADDER_DECAY = 0.5
KAPUT_MASS = 0.1


def auction_prior_bias(layout: ActionLayout) -> Tensor:
    """``float32[A]``: :func:`block_uniform_bias`, except that inside ``BID`` and ``KAPUT_PLUS``
    the probability halves with each step up the ladder (ids are ordered by level, then strain),
    and the ``KAPUT``/``KAPUT_PLUS`` blocks carry ``KAPUT_MASS`` of a block's probability."""
    bias = block_uniform_bias(layout)
    for name in ("BID", "KAPUT_PLUS"):
        if name not in layout.blocks:
            continue
        b = layout.blocks[name]
        per_level = len(layout.strains)
        levels = torch.arange(b.size) // per_level
        logw = levels * math.log(LADDER_DECAY)
        bias[b.start:b.stop] = logw - torch.logsumexp(logw, 0)
    for name in ("KAPUT", "KAPUT_PLUS"):
        if name in layout.blocks:
            b = layout.blocks[name]
            bias[b.start:b.stop] += math.log(KAPUT_MASS)
    return bias


def initial_policy_bias(layout: ActionLayout, kind: str) -> Tensor | None:
    """The policy-head bias of ``NetworkConfig.policy_bias_init`` (None for ``zero``)."""
    if kind == "auction_prior":
        return auction_prior_bias(layout)
    if kind == "block_uniform":
        return block_uniform_bias(layout)
    return None


__all__ = ["ActorCritic", "auction_prior_bias", "block_uniform_bias", "initial_policy_bias", "layer_init"]
