"""This project's agents as opponents of the vector envs (``blot_env.vector``).

``blot_env`` never imports ``agents``; it finds this module through the ``blot_env.opponents``
entry-point group (pyproject.toml: ``agents = "agents.opponents:make_opponent"``), so that
``BlotVectorEnv(opponents="rules-medium")`` or ``opponents="runs/x/policy.pt"`` works once
the project is installed (docs/vector.md "Opponents").

* A PPO policy (``"ppo"``, ``ppo:PATH``, ``PATH.pt``) that reads the vector env's observation
  kind acts **batched**: one forward pass of its network over every env where its seats are
  to act (:class:`NetworkOpponent`).
* Every other agent of :func:`agents.registry.make_agent` (``"rules"``, ``"rules-medium"``,
  ``pimc-K``, a policy trained on another observation kind, ``BIDDER+PLAYER``...) acts env by
  env on the :class:`~blot_env.view.SeatView` of its seat (:class:`AgentOpponent`), one agent
  instance per env, reset at every new deal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from blot_env.rules_config import RulesConfig
from blot_env.vector.opponents import OpponentBatch

from .base import reset_agent
from .registry import make_agent


class AgentOpponent:
    """An agent of :func:`agents.registry.make_agent` acting env by env on seat views.

    Args:
        spec: the agent's name (``make_agent``'s names).
        rules: the rules it plays.
        seed: base seed of the per-env instances (env ``e`` gets ``seed + 7919 e``; their
            random choices come from the vector env's generator, ``OpponentBatch.rng``).
        first: an instance already built for env 0 (from the name check).

    Raises:
        UnknownAgentError: an unknown name (from ``make_agent``).
    """

    def __init__(self, spec: str, rules: RulesConfig, seed: int = 0, first: Any = None) -> None:
        self.spec, self.rules, self.seed = spec, rules, int(seed)
        self._agents: dict[int, Any] = {}
        agent = first if first is not None else make_agent(spec, rules, self.seed)
        self._agents[0] = agent
        self.name = getattr(agent, "name", spec)

    def _agent(self, e: int) -> Any:
        a = self._agents.get(e)
        if a is None:
            a = self._agents[e] = make_agent(self.spec, self.rules, self.seed + 7919 * e)
        return a

    def reset(self, envs: np.ndarray) -> None:
        """New deals start in ``envs``: forget the per-deal caches of their agents."""
        for e in envs:
            a = self._agents.get(int(e))
            if a is not None:
                reset_agent(a)

    def act(self, batch: OpponentBatch) -> np.ndarray:
        views = batch.views()
        return np.array([int(self._agent(int(e)).act(v, batch.rng)) for e, v in zip(batch.envs, views)],
                        dtype=np.int64)


class NetworkOpponent:
    """A PPO policy acting on a whole batch of observations in one forward pass.

    Args:
        agent: a :class:`agents.ppo.agent.PPOAgent` whose encoder reads the vector env's
            observation kind (its first ``encoder.size`` entries: match pieces, if any, are
            not read).
        seed: seed of the torch generator of its sampling (``agent.greedy`` False only).
    """

    def __init__(self, agent: Any, seed: int = 0) -> None:
        import torch

        self._torch = torch
        self.net = agent.policy.eval()
        self.greedy = bool(agent.greedy)
        self.size = agent.encoder.size
        self.quantum = agent.encoder.quantum.astype(np.float64)
        self.name = agent.name
        self.gen = torch.Generator().manual_seed(int(seed))

    def act(self, batch: OpponentBatch) -> np.ndarray:
        torch = self._torch
        num = np.rint(batch.obs[:, :self.size] / self.quantum).astype(np.uint8)  # the numerators it trained on
        with torch.no_grad():
            a, _, _ = self.net.act(torch.from_numpy(num), torch.from_numpy(np.ascontiguousarray(batch.mask)),
                                   self.gen, greedy=self.greedy, with_value=False)
        return a.numpy()


def make_opponent(spec: str, rules: RulesConfig, obs_kind: str = "observation", seed: int = 0) -> Any:
    """The ``blot_env.opponents`` provider: the opponent of an agent name or policy file.

    Args:
        spec: a name of :func:`agents.registry.make_agent` or a ``.pt`` policy file.
        rules: the vector env's rules.
        obs_kind: the vector env's observation kind: a PPO policy trained on it acts batched.
        seed: base seed.

    Raises:
        UnknownAgentError: an unknown name; ConfigError: a policy file that cannot be read,
            or an oracle policy (it reads hidden cards, which an opponent never gets);
            FileNotFoundError: ``ppo:PATH`` with no file.
    """
    agent = make_agent(spec, rules, seed)
    try:
        from .ppo.agent import PPOAgent
    except ImportError:  # no torch: no policy file can have been loaded
        PPOAgent = None
    if PPOAgent is not None and type(agent) is PPOAgent and agent.encoder.kind == obs_kind:
        return NetworkOpponent(agent, seed)
    return AgentOpponent(spec, rules, seed, first=agent)


__all__ = ["AgentOpponent", "NetworkOpponent", "make_opponent"]
