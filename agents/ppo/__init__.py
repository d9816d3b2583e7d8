"""PPO for the blot family: masked categorical policy, per-seat self-play rollouts, exact-resume trainer.

Modules: ``config`` (typed frozen configs, YAML loading), ``network`` (actor-critic MLP),
``distributions`` (masked categorical), ``rollout`` (opponent pool, collector, GAE),
``pretrain`` (optional behaviour-cloning warm start),
``trainer`` (PPOTrainer, checkpoints), ``agent`` (load_ppo_agent), ``cli`` (``blot-train``).
torch is imported by the submodules only, so ``import agents`` does not need it.
"""

from __future__ import annotations

__all__ = ["agent", "cli", "config", "distributions", "network", "pretrain", "rollout", "trainer"]
