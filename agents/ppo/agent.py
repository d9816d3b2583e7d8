"""A trained PPO policy as an agent of agents/base.py: ``act(view, rng) -> action id``.

``load_ppo_agent("ppo")`` loads the policy shipped with the package (agents/data/ppo_bazar.pt);
any other argument is a path to a ``policy.pt`` exported by the trainer or a trainer
``checkpoint.pt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from blot_env.actions import layout_for
from blot_env.errors import ConfigError
from blot_env.observation import ObservationEncoder, privileged_size
from blot_env.rules_config import RulesConfig, make_rules
from blot_env.view import SeatView

from ..base import BaseAgent, legal_or_raise
from .config import TrainConfig, config_from_saved
from .network import ActorCritic, action_groups

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
CARD_FORMAT = "blot-model-card/1"
"""The ``format`` of a model card (:func:`model_card`)."""
SHIPPED = ("ppo",)
"""Names that resolve to the policies shipped in agents/data/: ``ppo`` is ``ppo_<preset>.pt`` of
the preset being played."""


def shipped_path(preset: str) -> Path:
    """``agents/data/ppo_<preset>.pt``, the shipped policy of ``preset``."""
    return DATA_DIR / f"ppo_{preset}.pt"


class PPOAgent(BaseAgent):
    """Acts with a policy network on the egocentric encoding of a :class:`SeatView`.

    Args:
        policy: the network (only its actor is used to act).
        encoder: the observation encoder the policy was trained with.
        greedy: play the most likely legal action (True) or sample from the masked
            policy with the ``rng`` passed to :meth:`act` (False).
        name: the agent's name in tables.
        config: the training config (``rollout.reward_scale`` gives the critic's unit).
        has_critic: the network's critic was trained and loaded (policy files written before the
            critic was exported hold the actor only).

    The observation goes in as the compact ``uint8`` numerators the network trained on
    (``ObservationEncoder.quantize``), through the same input layer.
    """

    def __init__(self, policy: ActorCritic, encoder: Any, greedy: bool = True, name: str = "ppo",
                 config: TrainConfig | None = None, has_critic: bool = True):
        self.policy = policy.eval()
        self.has_critic = bool(has_critic)
        self.config = config or TrainConfig()
        self.encoder = encoder
        self.greedy = bool(greedy)
        self.name = name

    @property
    def reward_scale(self) -> float:
        """Reward units per score-sheet point of the training (the critic's values are in reward units)."""
        return float(self.config.rollout.reward_scale)

    @torch.no_grad()
    def action_probs(self, view: SeatView) -> tuple[tuple[int, ...], np.ndarray]:
        """(legal action ids, ``float64[len(legal)]`` policy probabilities over them).

        Raises:
            ConfigError: the policy is an oracle (``network.oracle``): it reads every seat's
                hidden cards, which a seat's view does not hold.
        """
        if self.policy.oracle:
            raise ConfigError(f"{self.name}: an oracle policy (network.oracle) reads every seat's hidden cards and "
                              "cannot act from a seat's view; it plays only as a pool member of a training run "
                              "(pool.baselines)")
        legal = legal_or_raise(view)
        obs = torch.from_numpy(self.encoder.quantize(self.encoder.encode(view))).unsqueeze(0)
        logits = self.policy.logits(obs)[0].numpy().astype(np.float64)[list(legal)]
        p = np.exp(logits - logits.max())
        return legal, p / p.sum()

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal, p = self.action_probs(view)
        if self.greedy or len(legal) == 1:
            return int(legal[int(np.argmax(p))])
        return int(legal[int(rng.choice(len(legal), p=p))])


def resolve_policy_path(path_or_name: str | Path, preset: str | None = None) -> Path:
    """The file of a shipped name (``"ppo"``: the policy of ``preset``, default ``bazar``) or a path.

    Raises:
        FileNotFoundError: no such file, or no shipped policy for the preset.
    """
    if str(path_or_name) in SHIPPED:
        p = shipped_path(preset or "bazar")
        if not p.exists():
            have = sorted(q.stem.removeprefix("ppo_") for q in DATA_DIR.glob("ppo_*.pt"))
            raise FileNotFoundError(f"no shipped PPO policy for preset {preset!r} ({p.name}); "
                                    f"shipped: {', '.join(have)}")
        return p
    p = Path(path_or_name)
    if not p.exists():
        raise FileNotFoundError(f"no PPO policy file at {p} (names: {', '.join(SHIPPED)}, or a path to policy.pt)")
    return p


def model_card(preset_or_path: str | Path = "bazar") -> dict[str, Any]:
    """The model card of a policy: ``agents/data/ppo_<preset>.json`` for a preset name (the card
    of the shipped policy ``ppo``), or the ``.json`` beside a policy file (what ``blot-train
    --recipe`` writes beside ``OUT/ppo_<preset>.pt``), or a card file itself.

    A card (``format`` ``blot-model-card/1``, agents/ppo/recipe.py) names the recipe that made the
    policy and the commit it came with, its weights digest
    (:func:`agents.eval.board_pool.weights_digest`), learner steps and wall time per stage, and
    its test-suite rows (``test_rows``: mean board score per deal with its 95% CI in the preset's
    score-sheet unit, table points or raw card points on belote; the board count and the
    command) with a small ``check_row`` that ``blot-eval`` reproduces exactly.

    Raises:
        FileNotFoundError: no card for that preset or file.
        ConfigError: the file is not a JSON model card.
    """
    import json

    from blot_env.rules_config import PRESETS

    name = str(preset_or_path)
    if name in PRESETS:
        path = DATA_DIR / f"ppo_{name}.json"
    else:
        p = Path(preset_or_path)
        path = p if p.suffix == ".json" else p.with_suffix(".json")
    if not path.is_file():
        have = sorted(q.stem.removeprefix("ppo_") for q in DATA_DIR.glob("ppo_*.json"))
        raise FileNotFoundError(f"no model card {path} (shipped cards: {', '.join(have) or 'none'})")
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: not a JSON model card ({e})") from None
    if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
        raise ConfigError(f"{path}: not a model card (no format {CARD_FORMAT!r})")
    return card


def read_policy_file(path: str | Path) -> dict[str, Any]:
    """The dict stored in a ``policy.pt`` or ``checkpoint.pt``.

    Raises:
        ConfigError: the file is empty, truncated, corrupt, or not a PPO file (the message names
            the file and what was expected).
    """
    path = Path(path)
    if path.stat().st_size == 0:
        raise ConfigError(f"{path}: the file is empty; expected a PPO policy.pt or checkpoint.pt written by blot-train")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises RuntimeError, EOFError, UnpicklingError, IndexError, ...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"{path}: not a readable PPO policy or checkpoint file (truncated or corrupt?): "
                          f"{type(e).__name__}: {first[:160]}") from None
    if not isinstance(data, dict) or "policy" not in data or "config" not in data:
        raise ConfigError(f"{path}: not a PPO policy or checkpoint file (no 'policy' and 'config' entries)")
    return data


def load_policy(path_or_name: str | Path, rules: RulesConfig | str | None = None
                ) -> tuple[ActorCritic, Any, TrainConfig, RulesConfig, bool]:
    """(policy, encoder, training config, rules, has_critic) from a policy or checkpoint file
    (``has_critic``: the file holds the critic's weights too).

    Raises:
        FileNotFoundError: no such file or name.
        ConfigError: not a PPO file, or ``rules`` gives a different observation or action size.
    """
    path = resolve_policy_path(path_or_name, rules.preset if isinstance(rules, RulesConfig) else rules)
    data = read_policy_file(path)
    cfg = config_from_saved(data["config"])
    if rules is None:
        rules = make_rules(cfg.preset)
    elif isinstance(rules, str):
        rules = make_rules(rules)
    encoder = ObservationEncoder(rules, cfg.obs_kind)
    num_actions = layout_for(rules).num_actions
    if encoder.size != data["obs_dim"] or num_actions != data["num_actions"]:
        raise ConfigError(f"{path}: trained for obs size {data['obs_dim']} and {data['num_actions']} actions "
                          f"(preset {cfg.preset!r}); rules {rules.preset!r} give {encoder.size} and {num_actions}")
    net = ActorCritic(encoder.size, num_actions, cfg.network, obs_quantum=torch.from_numpy(encoder.quantum),
                      groups=action_groups(layout_for(rules)), privileged_dim=privileged_size(rules.num_players))
    try:
        missing, unexpected = net.load_state_dict(data["policy"], strict=False)
    except RuntimeError as e:
        raise ConfigError(f"{path}: policy weights do not match the network config: {str(e)[:300]}") from None
    bad = [k for k in missing if k.startswith(("actor_trunk.", "policy_head."))] + list(unexpected)
    if bad:
        raise ConfigError(f"{path}: policy weights do not match the network config: {bad[:5]}")
    return net.eval(), encoder, cfg, rules, not missing


def load_ppo_agent(path_or_name: str | Path = "ppo", cfg: RulesConfig | str | None = None,
                   greedy: bool = True, name: str | None = None) -> PPOAgent:
    """A :class:`PPOAgent` from ``"ppo"`` (the shipped policy of the preset) or a policy/checkpoint path.

    Args:
        path_or_name: ``"ppo"`` (``agents/data/ppo_<preset>.pt``, the preset of ``cfg``, default
            bazar) or a path to a ``policy.pt`` / ``checkpoint.pt``.
        cfg: the rules to play (a RulesConfig or preset name); default: the training preset.
        greedy: argmax over legal actions (default) or sample with the ``rng`` given to ``act``.
        name: the agent's name (default ``"ppo"`` for the shipped policy, else the file stem).
    """
    net, encoder, train_cfg, _, has_critic = load_policy(path_or_name, cfg)
    if name is None:
        name = str(path_or_name) if str(path_or_name) in SHIPPED else Path(path_or_name).stem
    return PPOAgent(net, encoder, greedy=greedy, name=name, config=train_cfg, has_critic=has_critic)


__all__ = ["CARD_FORMAT", "SHIPPED", "PPOAgent", "load_policy", "load_ppo_agent", "model_card", "read_policy_file",
           "resolve_policy_path", "shipped_path"]
