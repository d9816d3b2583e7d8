"""The actor-critic MLP: egocentric observation in, masked policy and a value out."""

from __future__ import annotations

import itertools
import math

from torch import Tensor, nn

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
    reward units (scaled score-sheet points, see ``RolloutConfig.reward_scale``).
    """

    def __init__(self, obs_dim: int, num_actions: int, cfg: NetworkConfig | None = None):
        super().__init__()
        cfg = cfg or NetworkConfig()
        self.obs_dim, self.num_actions, self.cfg = obs_dim, num_actions, cfg
        act = nn.ReLU if cfg.activation == "relu" else nn.Tanh
        sizes = [obs_dim, *cfg.hidden]
        self.actor_trunk = _mlp(sizes, act)
        self.critic_trunk = None if cfg.shared_trunk else _mlp(sizes, act)
        self.policy_head = layer_init(nn.Linear(cfg.hidden[-1], num_actions), std=0.01)
        self.value_head = layer_init(nn.Linear(cfg.hidden[-1], 1), std=1.0)

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


__all__ = ["ActorCritic", "layer_init"]
