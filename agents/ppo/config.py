"""Typed, frozen configuration of the PPO trainer.

One dataclass per concern: :class:`NetworkConfig` (the policy/value MLP), :class:`PPOConfig`
(the update), :class:`RolloutConfig` (data collection and rewards), :class:`PoolConfig`
(self-play and the opponent pool), :class:`PretrainConfig` (optional behaviour-cloning warm
start), :class:`EvalConfig` (periodic duplicate evaluation), all composed in
:class:`TrainConfig`. Every field carries a docstring; :func:`field_docs` reads them from the
source so that docs/training.md's reference table is generated, not copied.

YAML files in ``configs/`` load with :func:`load_config`; a file may inherit from others
(``base: ppo_bazar.yaml``) and hold only its changes (:func:`read_config_file`); ``key=value``
overrides with dotted keys (``ppo.learning_rate=1e-4``) apply with :func:`apply_overrides`.
Nothing mutates a config after construction: overrides build a new value.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import json
import math
import textwrap
import typing
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from blot_env.errors import ConfigError

from ..config_checks import check_in_unit, check_literal, check_positive, merge_overrides, plain


def _widths(name: str, values: Any) -> tuple[int, ...]:
    """``network.<name>`` as a tuple of ints. Raises ConfigError on an entry that is no integer
    (a string, a bool, 1.5: ``int()`` would have read 1.5 as 1 and True as 1)."""
    out = []
    for h in values:
        if isinstance(h, float) and h.is_integer():
            h = int(h)
        if isinstance(h, bool) or not isinstance(h, int):
            raise ConfigError(f"network.{name} must be a list of integer widths, got {list(values)!r}")
        out.append(h)
    return tuple(out)


@dataclass(frozen=True)
class NetworkConfig:
    """The actor-critic MLP (agents/ppo/network.py)."""

    hidden: tuple[int, ...] = (256, 256)
    """Widths of the hidden layers of the actor (and of the critic unless ``shared_trunk``)."""
    activation: Literal["relu", "tanh"] = "relu"
    """Hidden-layer nonlinearity."""
    shared_trunk: bool = False
    """One trunk for policy and value heads (cheaper) instead of two separate MLPs (CleanRL default)."""
    policy_bias_init: Literal["auction_prior", "block_uniform", "zero"] = "auction_prior"
    """Initial policy-head bias (the untrained policy's prior; training moves it freely).
    ``block_uniform``: each action gets ``-log(size of its layout block)``, so the policy is
    uniform over blocks (pass / bid / contra / cards ...) rather than over the ~400 bid ids;
    ``auction_prior``: block_uniform, and within the ``BID`` and ``KAPUT_PLUS`` blocks each step
    up the ladder halves the probability, and kaput bids get a tenth of a block's mass (an
    untrained policy then opens low instead of at a random level); ``zero``: uniform over ids."""
    critic: Literal["observation", "privileged"] = "observation"
    """Critic inputs: the acting seat's observation, or ``privileged``: the observation plus
    every seat's hidden cards (``BatchedEngine.privileged``), seen during training only (the
    actor and exported policies never read them; PerfectDou's scheme)."""
    critic_hidden: tuple[int, ...] = ()
    """Hidden widths of the critic (empty: the same as ``hidden``)."""
    input_layer: Literal["dense", "sparse"] = "sparse"
    """First layer over the observation: ``sparse`` sums the weight rows of the active entries
    (agents/ppo/sparse.py; the same function as ``dense``, about 1/30 of its work on bazar,
    CPU only, dense elsewhere) or ``dense``: a plain ``Linear`` over all D entries."""
    precision: Literal["float32", "bfloat16"] = "float32"
    """Arithmetic of the hidden layers: float32, or bfloat16 under autocast (float32 weights,
    optimizer, heads and losses)."""
    oracle: bool = False
    """The actor reads the privileged features too (every seat's hidden cards), a player with
    perfect information, for use as a pool member of another run (``pool.baselines``), never
    as an agent: it cannot act from a seat's view, and the trainer does not evaluate it
    (``eval.every: 0``). A non-oracle ``init_policy`` starts it with zero weights on the hidden
    cards, so it first plays exactly as that policy."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", _widths("hidden", self.hidden))
        object.__setattr__(self, "critic_hidden", _widths("critic_hidden", self.critic_hidden))
        if not self.hidden or any(h < 1 for h in self.hidden):
            raise ConfigError(f"network.hidden must be a non-empty list of positive widths, got {self.hidden}")
        if any(h < 1 for h in self.critic_hidden):
            raise ConfigError(f"network.critic_hidden must hold positive widths, got {self.critic_hidden}")
        check_literal(self, "activation")
        check_literal(self, "policy_bias_init")
        check_literal(self, "critic")
        check_literal(self, "precision")
        check_literal(self, "input_layer")
        if self.critic == "privileged" and self.shared_trunk:
            raise ConfigError("network.critic=privileged needs separate trunks (network.shared_trunk=false)")
        if self.oracle and self.shared_trunk:
            raise ConfigError("network.oracle needs separate trunks (network.shared_trunk=false)")


@dataclass(frozen=True)
class PPOConfig:
    """The clipped-surrogate PPO update (Schulman et al. 2017; CleanRL's ppo.py details)."""

    learning_rate: float = 2.5e-4
    """Adam learning rate at the start of training."""
    anneal_lr: bool = True
    """Anneal the learning rate linearly to 0 over ``total_steps`` learner steps."""
    adam_eps: float = 1e-5
    """Adam epsilon (1e-5 as in the PPO reference implementations, not torch's 1e-8)."""
    gamma: float = 1.0
    """Discount per decision of a seat (a deal is short and episodic; 1.0 = undiscounted)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    update_epochs: int = 4
    """Passes over each rollout batch."""
    num_minibatches: int = 4
    """Minibatches per epoch (the batch of learner steps is split into this many)."""
    clip_coef: float = 0.2
    """Policy ratio clip range epsilon."""
    clip_vloss: bool = True
    """Clip the value update around the old value estimate with ``clip_coef`` (value units)."""
    norm_adv: bool = True
    """Normalise advantages per minibatch (mean 0, std 1)."""
    ent_coef: float = 0.01
    """Weight of the entropy bonus (entropy over legal actions only)."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    max_grad_norm: float = 0.5
    """Global gradient-norm clip."""
    target_kl: float | None = None
    """Stop the epochs of an update early when the approximate KL exceeds this (None: never)."""
    frozen: tuple[str, ...] = ()
    """Network parameters the PPO updates keep fixed: names or dotted prefixes of
    ``ActorCritic.named_parameters()`` (``actor_trunk``, ``actor_trunk.2``, ``policy_head.bias``,
    ``critic_trunk``, ``value_head``). Empty: every parameter trains. A cloning warm start
    (``pretrain``) still trains the whole network before them."""
    actor_inputs: tuple[str, ...] = ()
    """Observation pieces (``ObservationEncoder.pieces`` names, e.g. ``voids``) whose weights in the
    actor's first layer the PPO updates train; that layer's other input weights stay fixed (its
    bias follows ``frozen``; with ``network.shared_trunk`` the critic reads that layer too). Empty:
    every input weight trains."""

    def __post_init__(self) -> None:
        check_positive(self, "learning_rate", "adam_eps", "update_epochs", "num_minibatches", "max_grad_norm")
        check_in_unit(self, "gamma", "gae_lambda")
        if not 0.0 < self.clip_coef < 1.0:
            raise ConfigError(f"ppo.clip_coef must be in (0, 1), got {self.clip_coef}")
        if not (0 <= self.ent_coef < math.inf and 0 <= self.vf_coef < math.inf):  # NaN fails too
            raise ConfigError(f"ppo.ent_coef and ppo.vf_coef must be >= 0 and finite, got "
                              f"{self.ent_coef!r} and {self.vf_coef!r}")
        if self.target_kl is not None and not self.target_kl > 0:  # NaN fails too
            raise ConfigError(f"ppo.target_kl must be positive or null, got {self.target_kl}")
        for key in ("frozen", "actor_inputs"):
            names = getattr(self, key)
            if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
                raise ConfigError(f"ppo.{key} must be a list of distinct non-empty names, got {list(names)}")
            object.__setattr__(self, key, tuple(sorted(names)))  # a selection, not a sequence


@dataclass(frozen=True)
class RolloutConfig:
    """Data collection: deals stepped in lockstep, per-seat trajectories, rewards."""

    num_envs: int = 64
    """Deals stepped in lockstep (one batched policy forward pass per lockstep step)."""
    deals_per_rollout: int = 256
    """Complete deals collected per update (a rollout always ends on deal boundaries)."""
    reward_scale: float = 0.02
    """Reward per deal = (own side's deal score - opponents') in score-sheet units times this."""
    reward_clip: float = 0.0
    """Clip the scaled deal reward to +-this (0: no clipping)."""
    skip_forced: bool = True
    """Play decisions with a single legal action without the policy and keep them out of the batch."""
    overlap: bool = False
    """Collect in a worker process while the update runs (two cores; each rollout is collected
    by the policy of one update earlier, agents/ppo/async_rollout.py). Exact resume holds."""
    engine: str = "batched"
    """Deal stepping: "batched" (the compiled ``blot_env.batched`` engine) or "reference"
    (the Python reference engine, one state per env; same rules, slower)."""

    def __post_init__(self) -> None:
        check_positive(self, "num_envs", "deals_per_rollout", "reward_scale")
        if self.engine not in ("batched", "reference"):
            raise ConfigError(f"rollout.engine must be 'batched' or 'reference', got {self.engine!r}")
        if not self.reward_clip >= 0:  # NaN fails too
            raise ConfigError(f"rollout.reward_clip must be >= 0, got {self.reward_clip}")


@dataclass(frozen=True)
class PoolConfig:
    """Self-play with one shared policy, plus an opponent pool (past snapshots and baselines)."""

    opponent_prob: float = 0.5
    """Per deal: probability that the opponents' side is played by a pool member (else pure self-play)."""
    baselines: tuple[str, ...] = ("random", "rules")
    """Baseline agents (agents.registry names) in the pool. A PPO policy file (a path ending in
    ``.pt``, such as a clone of ``rules-medium``) trained on the run's observation kind acts
    batched, one forward pass per step for all its envs, like a snapshot."""
    baseline_probs: tuple[float, ...] = ()
    """Relative weights of ``baselines`` when a baseline is drawn (empty: uniform)."""
    baseline_weight: float = 0.5
    """Probability that a pool deal draws a baseline rather than a past snapshot (1.0 when no
    snapshot yet); the snapshot deals of one rollout all face the same snapshot, drawn per rollout."""
    snapshot_every: int = 10
    """Updates between snapshots of the learner added to the pool (0: no snapshots)."""
    max_snapshots: int = 5
    """Snapshots kept (the oldest is dropped first)."""
    snapshot_greedy: bool = False
    """Snapshots act greedily (argmax) instead of sampling."""
    partner_prob: float = 0.0
    """Per deal (4-player presets): probability of a mixed-partnership deal, in which the
    learner plays one random seat and one pool member (drawn as for ``opponent_prob``) plays
    the other three, the learner's partner included; the evaluation's ``--mixed`` mode
    (docs/evaluation.md). Drawn first; the remaining deals use ``opponent_prob``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "baselines", tuple(str(b) for b in self.baselines))
        probs = self.baseline_probs
        if not all(isinstance(p, int | float) and not isinstance(p, bool) for p in probs):
            raise ConfigError(f"pool.baseline_probs must be a list of numbers, got {list(probs)!r}")
        object.__setattr__(self, "baseline_probs", tuple(float(p) for p in probs))
        check_in_unit(self, "opponent_prob", "baseline_weight", "partner_prob")
        if self.baseline_probs and (len(self.baseline_probs) != len(self.baselines)
                                    or min(self.baseline_probs) < 0 or sum(self.baseline_probs) <= 0):
            raise ConfigError("pool.baseline_probs needs one non-negative weight per baseline (not all 0)")
        if self.snapshot_every < 0 or self.max_snapshots < 0:
            raise ConfigError("pool.snapshot_every and pool.max_snapshots must be >= 0")
        if max(self.opponent_prob, self.partner_prob) > 0 and not self.baselines and (
                self.snapshot_every == 0 or self.max_snapshots == 0):
            raise ConfigError("pool.opponent_prob > 0 or pool.partner_prob > 0 needs baselines or snapshots "
                              "in the pool")


@dataclass(frozen=True)
class PretrainConfig:
    """Optional warm start: behaviour cloning of a baseline agent before PPO (agents/ppo/pretrain.py)."""

    agent: str = ""
    """Baseline to imitate (agents.registry name, e.g. ``rules``); empty: no pretraining unless
    ``data`` is set."""
    data: str = ""
    """A cloning-data file of ``scripts/clone_data.py`` (agents/ppo/clone_data.py) to imitate instead
    of playing the deals here; when ``agent`` is set too, the file must hold that agent's play."""
    deals: int = 20000
    """Deals the baseline plays in every seat to produce the imitation data (with ``data``: the
    most deals read from the file, its chunks in index order)."""
    chunk_deals: int = 2000
    """Deals collected and trained on at a time (bounds memory)."""
    epochs: int = 2
    """Passes over each chunk."""
    passes: int = 1
    """Passes over the whole file of ``data`` (each chunk trained ``epochs`` times per pass); must
    be 1 when the deals are played here."""
    batch_size: int = 512
    """Minibatch size."""
    learning_rate: float = 1e-3
    """Learning rate of the cloning phase (of ``optimizer``)."""
    optimizer: str = "adam"
    """The cloning phase's optimizer: ``adam`` (eps 1e-5) or ``sgd`` (momentum 0.9). Adam scales
    every weight's step to about the learning rate for any gradient well above its eps, so even
    rounding-level gradients move a trained network (docs/training.md, "Double-dummy card
    values"); SGD's steps are proportional to the gradient, and it needs a larger learning rate.
    ConfigError for another name."""
    value_coef: float = 0.5
    """Weight of the critic's regression onto the baseline's deal rewards."""
    critic_warmup_updates: int = 0
    """First PPO updates after cloning that train only the critic (the cloned policy is kept)."""
    from_init: bool = False
    """Clone on top of ``init_policy``'s weights instead of a fresh network: distils the imitated
    play (a search agent's, say) into a trained policy. Without it ``init_policy`` and cloning
    together are refused, so that a config's warm start never silently overwrites the file's
    weights; with it, a missing ``init_policy`` or cloning source raises ConfigError."""
    kl_coef: float = 0.0
    """Weight of a penalty KL(start || current) between the actor's action distributions, in nats
    per decision, where start is the network when the cloning begins (``init_policy``'s weights,
    with ``from_init``): it pulls the actor's distributions toward the start's on every decision
    (docs/training.md, "Distilling the light search"). 0: none. ConfigError if negative or not
    finite, or if set without ``from_init``."""
    disagreements_only: bool = False
    """Apply the cross-entropy only on the decisions where the start's greedy action is not the
    recorded one; the others count only in the ``kl_coef`` term. The loss is averaged over the
    whole minibatch, so that ``kl_coef`` keeps its scale. With ``network.shared_trunk`` the
    critic's loss still moves the actor's trunk. ConfigError if set without ``from_init``."""
    q_temperature: float = 0.0
    """Learn from the card values of a file built with ``--dd-values`` (double-dummy) or
    ``--rollout-values`` (the network's own rollouts) (``qvalues``, agents/ppo/clone_data.py)
    instead of its recorded actions, in the way ``q_objective`` names; ``q`` is in table points
    (raw points in belote) and ``q_temperature`` in the same unit: smaller values follow the
    values more, against the pull toward the start (docs/training.md, "Double-dummy card values"
    and "Rollout card values"). Decisions without
    values (the auction, declarations) are pulled toward the start only. 0: off. ConfigError if
    negative or not finite, if set without ``from_init`` and ``data`` or with
    ``disagreements_only``; CloneDataError if the file holds no ``qvalues``."""
    q_from_trick: int = 0
    """Use the card values only at the cards played after this many tricks are complete
    (0: every card); earlier cards count as decisions without values. ConfigError if negative,
    or if set without ``q_temperature``."""
    q_objective: str = "expected"
    """How ``q_temperature`` uses the values. ``expected``: KL(start || current) less the current
    policy's expected value of ``q`` (minus the start's) divided by ``q_temperature``; linear in
    ``q``, so its average over the deals a view allows is the same loss on the values' average.
    ``target``: the cross-entropy to the start's distribution reweighted by
    ``exp(q / q_temperature)`` over the legal cards, a vote per deal: a card best by a little in
    most of the deals a view allows can win over one a little worse there and far better in the
    rest. ConfigError for another name, or for ``target`` without ``q_temperature``."""

    @property
    def enabled(self) -> bool:
        """Whether a cloning phase runs (``agent`` or ``data`` set)."""
        return bool(self.agent or self.data)

    def __post_init__(self) -> None:
        check_positive(self, "deals", "chunk_deals", "epochs", "passes", "batch_size", "learning_rate")
        if self.passes > 1 and not self.data:
            raise ConfigError("pretrain.passes > 1 needs pretrain.data (a cloning-data file): played deals are "
                              "trained on once; raise pretrain.deals instead")
        if not (self.value_coef >= 0 and self.critic_warmup_updates >= 0):  # NaN fails too
            raise ConfigError("pretrain.value_coef and pretrain.critic_warmup_updates must be >= 0")
        if not 0.0 <= self.kl_coef < float("inf"):
            raise ConfigError(f"pretrain.kl_coef must be >= 0 and finite, got {self.kl_coef!r}")
        if not 0.0 <= self.q_temperature < float("inf"):
            raise ConfigError(f"pretrain.q_temperature must be >= 0 and finite, got {self.q_temperature!r}")
        if self.q_temperature > 0 and not (self.from_init and self.data):
            raise ConfigError("pretrain.q_temperature > 0 reweights the starting policy by a file's card values: it "
                              "needs pretrain.from_init=true (and init_policy) and pretrain.data (a file of "
                              "scripts/clone_data.py --dd-values or --rollout-values)")
        if self.q_from_trick < 0:
            raise ConfigError(f"pretrain.q_from_trick must be >= 0, got {self.q_from_trick!r}")
        if self.optimizer not in ("adam", "sgd"):
            raise ConfigError(f"pretrain.optimizer must be 'adam' or 'sgd', got {self.optimizer!r}")
        if self.q_objective not in ("target", "expected"):
            raise ConfigError(f"pretrain.q_objective must be 'target' or 'expected', got {self.q_objective!r}")
        if self.q_temperature == 0 and (self.q_from_trick > 0 or self.q_objective != "expected"):
            raise ConfigError("pretrain.q_from_trick and pretrain.q_objective act on the card values: set "
                              "pretrain.q_temperature > 0 too")
        if self.q_temperature > 0 and self.disagreements_only:
            raise ConfigError("pretrain.disagreements_only weights the recorded actions, which pretrain.q_temperature "
                              "does not use: set only one of them")
        if (self.kl_coef > 0 or self.disagreements_only) and not self.from_init:
            raise ConfigError("pretrain.kl_coef > 0 and pretrain.disagreements_only=true compare with the starting "
                              "weights: they need pretrain.from_init=true (and init_policy)")


@dataclass(frozen=True)
class EvalConfig:
    """Periodic duplicate evaluation during training (the learning curve)."""

    every: int = 0
    """Updates between evaluations (0: never)."""
    boards: int = 100
    """Duplicate boards per evaluation: the first ones of the preset's frozen ``split`` suite."""
    split: str = "dev"
    """Deal suite of agents/data/suites (``dev`` is for checkpoint selection, docs/evaluation.md)."""
    opponents: tuple[str, ...] = ("random", "rules")
    """Baseline agents (agents.registry names) to evaluate against (greedy policy)."""
    seed: int = 12345
    """Seed of the agents' per-table generators (the same at every evaluation)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "opponents", tuple(str(b) for b in self.opponents))
        if self.every < 0 or self.boards < 1:
            raise ConfigError("eval.every must be >= 0 and eval.boards >= 1")


@dataclass(frozen=True)
class TrainConfig:
    """A whole training run.

    Units: "steps" are learner agent steps, one decision of a learner seat; with
    ``rollout.skip_forced`` only decisions with more than one legal action count.
    """

    preset: str = "bazar"
    """Rules preset (blot_env.rules_config.PRESETS)."""
    obs_kind: str = "observation"
    """Observation encoder kind: "observation", "information_state" or "observation_voids" (blot_env.observation)."""
    total_steps: int = 1_000_000
    """Learner agent steps to train for; the learning rate anneals over them. 0 (only with
    ``pretrain.agent`` or ``pretrain.data``): clone, then export the cloned policy."""
    seed: int = 0
    """Seed of every random stream of the run (deals, actions, minibatches, pool draws)."""
    torch_threads: int = 1
    """torch.set_num_threads for the run (fixed, for speed on small nets and for exact resume)."""
    deterministic: bool = True
    """torch.use_deterministic_algorithms(True): resumed runs reproduce straight runs exactly."""
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    """Where the network runs: the updates, and the collection's forward passes unless
    ``rollout.overlap`` puts collection in a CPU worker. ``auto`` takes CUDA when torch sees a
    GPU, else the CPU. The engine always runs on the CPU."""
    checkpoint_every: int = 10
    """Updates between checkpoints (the last update is always saved)."""
    keep_checkpoints: bool = False
    """At every checkpoint also keep the policy of that update (``policy_<update>.pt``, the
    network without optimizer or pool: a few MB) for picking the best one later."""
    tensorboard: bool = True
    """Write TensorBoard event files next to the CSV log."""
    init_policy: str = ""
    """Start from the weights of this policy file (``policy.pt``, ``policy_<update>.pt``, a
    checkpoint, or ``ppo`` for the shipped policy of ``preset``) instead of a fresh network:
    fine-tuning. Its network settings must match ``network``; excludes cloning
    (``pretrain.agent``, ``pretrain.data``) unless ``pretrain.from_init``.
    Empty: a fresh network."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    """Policy/value network."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """PPO update."""
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    """Data collection."""
    pool: PoolConfig = field(default_factory=PoolConfig)
    """Self-play and opponent pool."""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """Optional behaviour-cloning warm start."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """Periodic duplicate evaluation."""

    def __post_init__(self) -> None:
        from blot_env.observation import KINDS
        from blot_env.rules_config import PRESETS

        if self.preset not in PRESETS:
            raise ConfigError(f"unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")
        if self.obs_kind not in KINDS:
            raise ConfigError(f"obs_kind must be one of {list(KINDS)}, got {self.obs_kind!r}")
        if self.seed < 0:
            raise ConfigError(f"seed must be >= 0 (numpy seeds are non-negative), got {self.seed}")
        check_positive(self, "torch_threads")
        if self.total_steps < 0 or (self.total_steps == 0 and not self.pretrain.enabled):
            raise ConfigError(f"total_steps must be > 0 (0 is allowed only with pretrain.agent or pretrain.data: "
                              f"a cloning-only run), got {self.total_steps}")
        check_literal(self, "device")
        if self.checkpoint_every < 1:
            raise ConfigError(f"checkpoint_every must be >= 1, got {self.checkpoint_every}")
        if self.init_policy and self.pretrain.enabled and not self.pretrain.from_init:
            which = "pretrain.agent" if self.pretrain.agent else "pretrain.data"
            raise ConfigError(f"init_policy ({self.init_policy!r}) and {which} "
                              f"({self.pretrain.agent or self.pretrain.data!r}) both set the starting weights; set one "
                              f"of them (--set {which}= clears it), or set pretrain.from_init=true to clone on top "
                              f"of init_policy's weights")
        if self.pretrain.from_init and not self.init_policy:
            raise ConfigError("pretrain.from_init=true needs init_policy (the weights to start from); it is empty")
        if self.pretrain.from_init and not self.pretrain.enabled:
            raise ConfigError("pretrain.from_init=true needs pretrain.agent or pretrain.data (the play to clone); "
                              "both are empty")
        if self.network.oracle and self.eval.every:
            raise ConfigError(f"network.oracle: an oracle policy reads every seat's hidden cards, so it cannot play "
                              f"the evaluation's boards from a seat's view; set eval.every=0 (it is {self.eval.every})")
        if self.network.oracle and self.pretrain.enabled:
            raise ConfigError("network.oracle cannot be cloned (pretrain.agent, pretrain.data): the cloning data hold "
                              "no hidden cards; start it from init_policy instead")

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (tuples as lists), the YAML form."""
        return plain(dataclasses.asdict(self))


# --------------------------------------------------------------------------- loading

#: fields added after files were first written, with the value that those files meant
SAVED_DEFAULTS = {("network", "input_layer"): "dense"}


def config_from_saved(data: dict[str, Any]) -> TrainConfig:
    """The :class:`TrainConfig` stored in a checkpoint or policy file; a key the file predates
    takes the value it had then (``SAVED_DEFAULTS``: a file without ``network.input_layer`` was
    written by a dense input layer)."""
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in dict(data).items()}
    for (section, key), value in SAVED_DEFAULTS.items():
        data.setdefault(section, {})
        data[section].setdefault(key, value)
    return config_from_dict(data)


def config_from_dict(data: dict[str, Any], cls: type = TrainConfig) -> Any:
    """Build a config dataclass from a nested dict. Raises ConfigError on unknown keys or bad values."""
    if not isinstance(data, dict):
        raise ConfigError(f"{cls.__name__}: expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names, key=str)
    if unknown:
        raise ConfigError(f"{cls.__name__}: unknown key(s) {unknown}; known: {', '.join(sorted(names))}")
    kwargs = {}
    for key, value in data.items():
        sub = hints[key]
        if dataclasses.is_dataclass(sub):
            kwargs[key] = config_from_dict({} if value is None else value, sub)
        elif typing.get_origin(sub) is tuple:
            if not isinstance(value, list | tuple):
                raise ConfigError(f"{cls.__name__}.{key}: expected a list, got {value!r}")
            kwargs[key] = tuple(value)
        else:
            kwargs[key] = _coerce(cls.__name__, key, sub, value)
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise ConfigError(f"{cls.__name__}: {e}") from None


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """A :class:`TrainConfig` from a YAML file (with its ``base`` files, :func:`read_config_file`)
    plus ``key=value`` overrides (dotted keys).

    Raises:
        ConfigError: the file or one of its bases is empty or not a YAML mapping, a base is
            missing or the bases form a cycle (the message names the files), or a key or value
            is bad.
        OSError: a file cannot be read.
    """
    return config_from_dict(_merge(read_config_file(path), overrides))


BASE_KEY = "base"
"""The top-level key of a config file that names the file(s) it inherits from."""


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping of a config file with its bases merged in: fully expanded, no ``base`` key.

    A file may name a base, ``base: ppo_bazar.yaml`` (a path relative to the file's folder), or
    a list of them, and hold only what it changes. The bases merge in order (a later one wins),
    then the file's own keys: mappings merge key by key at every depth; any other value, a
    list or ``null`` included, replaces the base's value whole (``pretrain: null`` puts a
    section back to its defaults: it comes back as an empty mapping, so that ``--set
    pretrain.deals=...`` still applies). A base may name bases of its own.

    Raises:
        ConfigError: a file is empty, not UTF-8 YAML or not a mapping; ``base`` is not a file
            name or a list of them; a base file does not exist; or the bases form a cycle (the
            message names the files of the chain).
        OSError: a file exists but cannot be read.
    """
    data = _read_with_bases(Path(path), ())
    return {k: ({} if v is None and k in _SECTION_NAMES else v) for k, v in data.items()}


#: the sections of a config file (mappings of :class:`TrainConfig`'s nested dataclasses)
_SECTION_NAMES = ("network", "ppo", "rollout", "pool", "pretrain", "eval")


def _read_with_bases(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    data = _read_yaml_mapping(path)
    bases = data.pop(BASE_KEY, None)
    if bases is None:
        return data
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, list) or not bases or not all(isinstance(b, str) and b for b in bases):
        raise ConfigError(f"{path}: {BASE_KEY} must be a config file name or a list of them (relative to "
                          f"{path.parent}), got {bases!r}")
    here = chain + (path.resolve(),)
    merged: dict[str, Any] = {}
    for name in bases:
        base = (path.parent / name)
        if base.resolve() in here:
            loop = " -> ".join(str(p) for p in (*here, base.resolve()))
            raise ConfigError(f"{path}: {BASE_KEY} {name!r} makes a cycle of config files: {loop}")
        if not base.is_file():
            raise ConfigError(f"{path}: {BASE_KEY} {name!r} not found (no file {base})")
        merged = deep_merge(merged, _read_with_bases(base, here))
    return deep_merge(merged, data)


def _read_yaml_mapping(path: Path) -> dict[str, Any]:
    """One YAML file's top-level mapping (no bases resolved). ConfigError if it is not one."""
    with open(path, encoding="utf-8") as f:
        try:
            data = yaml.safe_load(f)
        except UnicodeDecodeError as e:
            raise ConfigError(f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); "
                              "a config file is YAML text") from None
        except (yaml.YAMLError, ValueError, OverflowError) as e:  # PyYAML's chr() of "\U7fffffff", "\Uffffffff"
            raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if data is None:
        raise ConfigError(f"{path}: the config file is empty (start from configs/ppo_<preset>.yaml)")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a YAML mapping of config keys, got {type(data).__name__}")
    return data


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``over``, a new dict: mappings merge key by key at every depth, any
    other value of ``over`` (a list, a scalar, ``None``) replaces ``base``'s whole. Neither
    argument is modified."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def apply_overrides(cfg: TrainConfig, overrides: list[str] | tuple[str, ...] | dict[str, Any]) -> TrainConfig:
    """A new config with ``key=value`` strings (or a ``{dotted key: value}`` dict) applied.

    Raises:
        ConfigError: an override that is no ``key=value`` string (or a mapping key that is no
            string), whose value is not valid YAML, or a bad key or value.
    """
    return config_from_dict(_merge(cfg.to_dict(), overrides))


def _merge(data: dict[str, Any], overrides: Any) -> dict[str, Any]:
    """``merge_overrides`` with every bad override refused by a ConfigError naming it."""
    items = list(overrides.keys()) if isinstance(overrides, dict) else list(overrides)
    for o in items:
        if not isinstance(o, str):
            raise ConfigError(f"override {o!r}: expected a 'key=value' string (for example ppo.learning_rate=1e-4)")
        if not isinstance(overrides, dict):
            try:
                merge_overrides({}, [o])
            except ConfigError:
                pass  # merge_overrides below names it
            except (yaml.YAMLError, ValueError, OverflowError) as e:
                first = (str(e).splitlines() or [type(e).__name__])[0]
                raise ConfigError(f"override {o!r}: the value is not valid YAML ({first})") from None
    return merge_overrides(data, overrides)


def _coerce(owner: str, key: str, hint: Any, value: Any) -> Any:
    """Accept YAML's ints for floats and reject obviously wrong types with a clear message."""
    args = set(typing.get_args(hint))
    base = args if args else {hint}
    if value is None and type(None) in base:
        return None
    if float in base and isinstance(value, int | float) and not isinstance(value, bool):
        return _float(owner, key, value)
    if float in base and isinstance(value, str):
        try:  # YAML 1.1 reads "1e-3" (no dot) as a string
            return _float(owner, key, float(value))
        except ValueError:
            pass
    if int in base and isinstance(value, int) and not isinstance(value, bool):
        return value
    if int in base and isinstance(value, float) and value.is_integer():
        return int(value)
    if bool in base and isinstance(value, bool):
        return value
    if str in base and isinstance(value, str):
        return value
    if typing.get_origin(hint) is Literal and value in list(args):  # a list, not a set: values may be unhashable
        return value
    if typing.get_origin(hint) is Literal:
        want = "one of " + ", ".join(repr(a) for a in args)
    else:
        want = " or ".join(getattr(t, "__name__", str(t)).replace("NoneType", "null") for t in base)
    raise ConfigError(f"{_SECTION.get(owner, owner)}{key}: expected {want}, got {value!r}")


def _float(owner: str, key: str, value: int | float) -> float:
    """``value`` as a float; an int beyond the float range is refused (ConfigError). NaN is
    left to the fields' own checks, which refuse it."""
    try:
        out = float(value)
    except OverflowError:
        raise ConfigError(f"{_SECTION.get(owner, owner)}{key}: {value} is too large for a float") from None
    return out


#: the YAML section of each config class, for error messages (``rollout.reward_scale``)
_SECTION = {"TrainConfig": "", "NetworkConfig": "network.", "PPOConfig": "ppo.", "RolloutConfig": "rollout.",
            "PoolConfig": "pool.", "PretrainConfig": "pretrain.", "EvalConfig": "eval."}


# --------------------------------------------------------------------------- documentation


@cache
def field_docs(cls: type) -> dict[str, str]:
    """``{field: docstring}`` of a dataclass, read from the string literal under each field."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs: dict[str, str] = {}
    for node, nxt in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def config_reference_markdown() -> str:
    """The config reference table of docs/training.md, generated from the dataclasses above."""
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    default = TrainConfig()

    def walk(cls: type, prefix: str, value: Any) -> None:
        hints = typing.get_type_hints(cls)
        docs = field_docs(cls)
        for f in dataclasses.fields(cls):
            sub = getattr(value, f.name)
            if dataclasses.is_dataclass(sub):
                walk(type(sub), f"{prefix}{f.name}.", sub)
                continue
            typ = _type_name(hints[f.name]).replace("|", "or")
            default_text = json.dumps(plain(sub))
            rows.append(f"| `{prefix}{f.name}` | {typ} | `{default_text}` | {docs.get(f.name, '')} |")

    walk(TrainConfig, "", default)
    return "\n".join(rows)


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) is Literal:
        return " / ".join(repr(a).replace("'", '"') for a in typing.get_args(hint))
    text = getattr(hint, "__name__", None) if not typing.get_args(hint) else None
    return text or str(hint).replace("typing.", "")


__all__ = [
    "EvalConfig",
    "NetworkConfig",
    "PPOConfig",
    "PoolConfig",
    "PretrainConfig",
    "RolloutConfig",
    "TrainConfig",
    "apply_overrides",
    "config_from_dict",
    "config_reference_markdown",
    "deep_merge",
    "field_docs",
    "load_config",
    "read_config_file",
]


if __name__ == "__main__":  # python -m agents.ppo.config: the reference table of docs/training.md
    print(config_reference_markdown())
