"""Agents for the blot family: the baseline ladder (random, rules, rules-medium), the PPO
policy (``agents.ppo``), and duplicate evaluation (``agents.eval.arena``, ``blot-eval``).

Every agent implements :class:`agents.base.Agent`: ``act(view, rng) -> action id`` on a
:class:`blot_env.view.SeatView`. Build one by name with :func:`agents.registry.make_agent`.
"""

from .base import Agent, BaseAgent, CallableAgent, as_policy
from .registry import known_agents, make_agent

__all__ = ["Agent", "BaseAgent", "CallableAgent", "as_policy", "known_agents", "make_agent"]
