"""Typed, frozen configuration of an RLlib run (``configs/rllib_*.yaml``).

One dataclass per concern: :class:`EnvSection` (which env and how it rewards),
:class:`RLlibPPOSection` (RLlib's PPO update), :class:`RunnerSection` (env runners),
:class:`LeagueSection` (how agents map to modules: per team, or the main module against a
frozen-opponent league) and :class:`RayInitSection` (how ``ray.init`` starts a local cluster),
composed in :class:`RLlibRunConfig` together with :class:`agents.ppo.config.NetworkConfig`
(the same actor-critic MLP our PPO trains) and :class:`agents.ppo.config.EvalConfig`
(periodic duplicate evaluation against the baselines, the same metric our PPO logs).

This module does not import Ray: configs load, validate and document without it. Loading and
``key=value`` overrides reuse :func:`agents.ppo.config.config_from_dict`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from agents.config_checks import check_in_unit, check_literal, check_positive, merge_overrides, plain
from agents.ppo.config import EvalConfig, NetworkConfig, config_from_dict
from blot_env.errors import ConfigError


@dataclass(frozen=True)
class EnvSection:
    """The env every env runner builds (:class:`agents.integrations.rllib.BlotMultiAgentEnv`)."""

    preset: str = "bazar"
    """Rules preset (blot_env.rules_config.PRESETS)."""
    episode: Literal["deal", "match"] = "deal"
    """One deal per episode, or deals to the match target (docs/env.md "Reward model")."""
    observation_kind: Literal["observation", "information_state", "observation_voids"] = "observation"
    """Observation encoder kind (blot_env.observation)."""
    reward_scale: float = 0.02
    """Deal reward = (own side's deal score - opponents') in score-sheet units times this."""
    deal_rewards: bool = False
    """Match episodes only: also reward every deal (else only +-1 at the end of the match)."""
    skip_forced: bool = True
    """Play decisions with exactly one legal action inside the env (they are not RL steps)."""

    def __post_init__(self) -> None:
        from blot_env.rules_config import PRESETS

        if self.preset not in PRESETS:
            raise ConfigError(f"env.preset: unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")
        check_literal(self, "episode")
        check_literal(self, "observation_kind")
        check_positive(self, "reward_scale")

    def env_config(self) -> dict[str, Any]:
        """The ``env_config`` dict for :class:`~agents.integrations.rllib.BlotMultiAgentEnv`."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RLlibPPOSection:
    """RLlib's PPO (``ray.rllib.algorithms.ppo.PPOConfig.training``); defaults mirror agents/ppo."""

    lr: float = 2.5e-4
    """Adam learning rate (constant)."""
    gamma: float = 1.0
    """Discount per decision of a seat (deals are short and episodic)."""
    gae_lambda: float = 0.95
    """GAE lambda (RLlib's ``lambda_``)."""
    clip_param: float = 0.2
    """Policy ratio clip range."""
    vf_clip_param: float = 10.0
    """Value-loss clip (reward units)."""
    entropy_coeff: float = 0.01
    """Entropy bonus weight (RLlib's entropy of the masked distribution)."""
    vf_loss_coeff: float = 0.5
    """Value loss weight."""
    grad_clip: float = 0.5
    """Global gradient-norm clip."""
    num_epochs: int = 4
    """Passes over each train batch."""
    minibatch_size: int = 256
    """Agent steps per SGD minibatch."""
    train_batch_size: int = 4000
    """Agent steps per training iteration (RLlib's ``train_batch_size_per_learner``)."""

    def __post_init__(self) -> None:
        check_positive(self, "lr", "clip_param", "vf_clip_param", "grad_clip", "num_epochs", "minibatch_size",
                  "train_batch_size")
        check_in_unit(self, "gamma", "gae_lambda")
        if self.entropy_coeff < 0 or self.vf_loss_coeff < 0:
            raise ConfigError("ppo.entropy_coeff and ppo.vf_loss_coeff must be >= 0")
        if self.minibatch_size > self.train_batch_size:
            raise ConfigError(f"ppo.minibatch_size ({self.minibatch_size}) must not exceed "
                              f"ppo.train_batch_size ({self.train_batch_size})")


@dataclass(frozen=True)
class RunnerSection:
    """RLlib env runners (the Ray actors that step envs; ``AlgorithmConfig.env_runners``)."""

    num_env_runners: int = 2
    """Remote env runners (0: sample in the driver process)."""
    num_envs_per_env_runner: int = 1
    """Envs stepped in lockstep by each env runner (one batched forward pass per step)."""
    rollout_fragment_length: int = 0
    """Agent steps each runner returns per sample call (0: RLlib's ``"auto"``)."""
    num_cpus_per_env_runner: float = 1.0
    """CPUs Ray reserves for each env runner (a laptop with 2 cores: 1 each, or 0.5)."""
    sample_timeout_s: float = 300.0
    """Seconds the driver waits for one round of samples."""

    def __post_init__(self) -> None:
        if self.num_env_runners < 0 or self.rollout_fragment_length < 0:
            raise ConfigError("runners.num_env_runners and runners.rollout_fragment_length must be >= 0")
        check_positive(self, "num_envs_per_env_runner", "sample_timeout_s")
        if self.num_cpus_per_env_runner < 0:
            raise ConfigError("runners.num_cpus_per_env_runner must be >= 0")


@dataclass(frozen=True)
class LeagueSection:
    """Which RLModule plays which seat (``AlgorithmConfig.multi_agent``). Teams are ``seat % 2``.

    ``mode="league"``: per episode one team (drawn from the episode id) is played by the
    trained module ``main``; both seats of the other team are played by one opponent drawn
    from the league: ``random`` (uniform over legal actions) or a frozen snapshot
    ``frozen_0 .. frozen_{k-1}`` of ``main``. The snapshots start as copies of the untrained
    ``main`` and are overwritten round-robin by the current ``main`` every ``snapshot_every``
    iterations while main's win rate is at least ``win_rate_threshold``. Only ``main`` trains.

    ``mode="teams"``: module ``team_0`` plays seats 0 and 2, ``team_1`` seats 1 and 3 (2-player
    presets: one module per player); both train (independent learners, one per side).
    """

    mode: Literal["league", "teams"] = "league"
    """``league`` (main vs frozen opponents) or ``teams`` (one trained module per team)."""
    frozen_slots: int = 3
    """Number of frozen snapshots of ``main`` in the league."""
    snapshot_every: int = 5
    """Training iterations between snapshots (0: never; the slots keep the initial weights)."""
    win_rate_threshold: float = 0.0
    """Take a due snapshot only if main won at least this share of last iteration's deals
    (passed-out deals count one half)."""
    random_weight: float = 0.25
    """Probability that the opponent team is the uniform random module (else a frozen slot)."""

    def __post_init__(self) -> None:
        check_literal(self, "mode")
        check_in_unit(self, "win_rate_threshold", "random_weight")
        if self.frozen_slots < 0 or self.snapshot_every < 0:
            raise ConfigError("league.frozen_slots and league.snapshot_every must be >= 0")
        if self.mode == "league" and self.frozen_slots == 0 and self.random_weight < 1.0:
            raise ConfigError("league.frozen_slots = 0 needs league.random_weight = 1.0 (random is the only opponent)")


@dataclass(frozen=True)
class RayInitSection:
    """How the script starts Ray when no cluster address is given (``ray.init`` on this machine)."""

    num_cpus: int = 0
    """CPUs of the local Ray instance (0: all cores)."""
    object_store_memory_mb: int = 256
    """Object store size in MiB of the local instance (small: the weights are a few MiB)."""

    def __post_init__(self) -> None:
        if self.num_cpus < 0 or self.object_store_memory_mb < 80:
            raise ConfigError("ray.num_cpus must be >= 0 and ray.object_store_memory_mb >= 80")


@dataclass(frozen=True)
class RLlibRunConfig:
    """A whole RLlib run (``integrations/rllib/train_rllib.py --config configs/rllib_bazar.yaml``)."""

    iterations: int = 50
    """Training iterations (``Algorithm.train()`` calls)."""
    seed: int = 0
    """Seed of the algorithm (env runners seed their envs from it) and of torch."""
    torch_threads: int = 1
    """torch.set_num_threads in the driver (the learner) and in every env runner."""
    checkpoint_every: int = 10
    """Iterations between RLlib checkpoints (0: only the final one)."""
    env: EnvSection = field(default_factory=EnvSection)
    """The env."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    """The actor-critic MLP (agents.ppo.network.ActorCritic, the network our PPO trains)."""
    ppo: RLlibPPOSection = field(default_factory=RLlibPPOSection)
    """RLlib's PPO update."""
    runners: RunnerSection = field(default_factory=RunnerSection)
    """Env runners."""
    league: LeagueSection = field(default_factory=LeagueSection)
    """Agent-to-module mapping and the frozen-opponent league."""
    eval: EvalConfig = field(default_factory=lambda: EvalConfig(every=5, boards=100))
    """Duplicate evaluation of ``main`` (``team_0`` in teams mode) every ``every`` iterations."""
    ray: RayInitSection = field(default_factory=RayInitSection)
    """Local Ray instance (ignored when the script connects to a cluster)."""

    def __post_init__(self) -> None:
        check_positive(self, "iterations", "torch_threads")
        if self.network.oracle:
            raise ConfigError("network.oracle: an oracle reads every seat's hidden cards, which RLlib's env does not "
                              "give; it exists for blot-train's pools only")
        if self.checkpoint_every < 0:
            raise ConfigError(f"checkpoint_every must be >= 0, got {self.checkpoint_every}")

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (tuples as lists), the YAML form."""
        return plain(dataclasses.asdict(self))


def load_rllib_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> RLlibRunConfig:
    """An :class:`RLlibRunConfig` from a YAML file plus ``key=value`` overrides (dotted keys,
    e.g. ``ppo.lr=1e-4``). Raises ConfigError on unknown keys or bad values."""
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    return config_from_dict(merge_overrides(data, overrides), RLlibRunConfig)


def apply_rllib_overrides(cfg: RLlibRunConfig, overrides: list[str] | tuple[str, ...] | dict[str, Any]
                          ) -> RLlibRunConfig:
    """A new config with ``key=value`` strings (or a ``{dotted key: value}`` dict) applied."""
    return config_from_dict(merge_overrides(cfg.to_dict(), overrides), RLlibRunConfig)


__all__ = ["EnvSection", "LeagueSection", "RLlibPPOSection", "RLlibRunConfig", "RayInitSection", "RunnerSection",
           "apply_rllib_overrides", "load_rllib_config"]
