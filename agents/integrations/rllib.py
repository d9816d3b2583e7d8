"""Ray RLlib (new API stack, ray 2.x) adapter: env, masked RLModule, team/league mapping, config.

``pip install -e ".[rllib]"`` (after ``pip install torch==2.13.0``; see docs/integrations.md).
Importing this module imports Ray; ``import blot_env`` never does.

* :class:`BlotMultiAgentEnv`: a turn-based ``ray.rllib.env.multi_agent_env.MultiAgentEnv``
  over :class:`blot_env.env.raw_env`. Agents ``player_0..player_{n-1}``; each step returns
  the observation of the agent to act only, and the step that ends the episode returns a
  terminal observation, the reward and ``terminated=True`` for **every** agent, so every
  seat gets its terminal reward in the same step. Illegal actions raise
  :class:`blot_env.errors.IllegalActionError` (masking must prevent them).
* :class:`MaskedActorCriticModule`: a ``TorchRLModule`` with ``ValueFunctionAPI`` that wraps
  :class:`agents.ppo.network.ActorCritic` (the network our own PPO trains) and masks the
  logits with the observation's ``action_mask`` in every forward pass.
* :class:`RandomMaskedModule`: uniform over legal actions (the league's baseline).
* :class:`LeagueMapping` / :func:`team_mapping`: agent -> module per team.
* :class:`BlotLeagueCallback`: frozen-opponent snapshots, per-episode checks and metrics.
* :func:`build_algorithm_config`: the ``PPOConfig`` of an :class:`RLlibRunConfig`.
* :func:`export_policy` / :func:`module_agent`: a trained module as an ``agents`` policy file /
  agent, for ``blot-eval`` and :mod:`agents.eval.arena`.

Observation of every agent: ``Dict(observation=Box(float32, (D,)), action_mask=Box(int8, (A,)))``,
exactly the AEC env's (docs/env.md); the mask is all zeros in terminal observations.
"""

from __future__ import annotations

import functools
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.integrations.rllib_config import RLlibRunConfig
from agents.ppo.config import NetworkConfig
from agents.ppo.network import ActorCritic, initial_policy_bias
from blot_env.actions import layout_for
from blot_env.env import raw_env
from blot_env.rules_config import make_rules

MAIN = "main"
RANDOM = "random"


def frozen_id(slot: int) -> str:
    """Module id of frozen league slot ``slot``: ``frozen_<slot>``."""
    return f"frozen_{slot}"


def seat_of(agent_id: str) -> int:
    """``"player_2"`` -> 2."""
    return int(str(agent_id).rsplit("_", 1)[1])


# ============================================================================ env


class BlotMultiAgentEnv(MultiAgentEnv):
    """Any blot preset as a turn-based RLlib ``MultiAgentEnv``.

    Args:
        config: ``env_config`` dict (RLlib passes an ``EnvContext``): ``preset`` (default
            ``"bazar"``), ``episode`` (``"deal"``/``"match"``), ``observation_kind``,
            ``reward_scale`` (default 1.0), ``deal_rewards``, ``skip_forced`` (default False:
            play actions that are the only legal one inside the env, so RLlib only sees real
            decisions) and ``rules`` (a dict of rules-knob overrides).

    Spaces (per agent, in ``observation_spaces`` / ``action_spaces``): observation
    ``Dict(observation=Box(0, hi, (D,), float32), action_mask=Box(0, 1, (A,), int8))``,
    action ``Discrete(A)`` (the preset's layout, docs/env.md).

    Step protocol: ``reset`` and every non-final ``step`` return the observation of the one
    agent to act; rewards are returned for every agent in every step (0 until a deal ends),
    so the agent that acted always has a reward, as RLlib requires. The final step returns
    observations, rewards and ``terminated`` (``truncated`` if the match guard ``max_deals``
    hit) for all agents, plus ``"__all__"``. ``infos`` of the final step carry the env's
    ``deal_result`` (and match fields), ``"decisions"`` (the agent's actions chosen by the
    policy in this episode) and ``"decisions_by_seat"`` (the same for every seat) for every agent.

    A seat that made no decision in an episode (its turn never came, e.g. after
    ``bid kaput+``, contra, recontra; or, with ``skip_forced``, all its actions were forced)
    still gets its observation and reward in the final step, but RLlib's
    ``MultiAgentEpisode`` leaves an agent that never acted out of the episode (there is no
    action to credit), so it appears in neither the batch nor the episode returns.

    Raises:
        IllegalActionError: (in ``step``) the action is not legal; the message names it.
        ValueError: ``step`` without an action for the agent to act.
    """

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        self.skip_forced = bool(config.pop("skip_forced", False))
        rules = dict(config.pop("rules", None) or {})
        self.raw = raw_env(preset=config.pop("preset", "bazar"), episode=config.pop("episode", "deal"),
                           observation_kind=config.pop("observation_kind", "observation"),
                           reward_scale=float(config.pop("reward_scale", 1.0)),
                           deal_rewards=bool(config.pop("deal_rewards", False)), **rules)
        unknown = sorted(k for k in config if k not in ("worker_index", "num_workers", "vector_index", "remote"))
        if unknown:
            raise ValueError(f"BlotMultiAgentEnv: unknown env_config key(s) {unknown}")
        self.cfg = self.raw.cfg
        self.possible_agents = list(self.raw.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: self.raw.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self.raw.action_space(a) for a in self.possible_agents}
        self.forced_steps = 0  # actions played by the env because they were the only legal one
        self.decisions = dict.fromkeys(self.possible_agents, 0)  # actions chosen by RLlib, this episode

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode; returns ``({agent to act: obs}, {agent to act: {}})``."""
        self.raw.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self.decisions = dict.fromkeys(self.possible_agents, 0)
        rewards = dict.fromkeys(self.possible_agents, 0.0)
        self._play_forced(rewards)
        agent = self.raw.agent_selection
        return {agent: self.raw.observe(agent)}, {agent: {}}

    def step(self, action_dict: dict[str, Any]):
        agent = self.raw.agent_selection
        if agent not in action_dict:
            raise ValueError(f"BlotMultiAgentEnv.step: no action for {agent}, the agent to act "
                             f"(got actions for {sorted(action_dict)})")
        rewards = dict.fromkeys(self.possible_agents, 0.0)
        self.decisions[agent] += 1
        self._step_raw(int(action_dict[agent]), rewards)
        self._play_forced(rewards)
        if self._done():
            return self._final(rewards)
        nxt = self.raw.agent_selection
        terminateds = {"__all__": False}
        truncateds = {"__all__": False}
        return {nxt: self.raw.observe(nxt)}, rewards, terminateds, truncateds, {nxt: {}}

    # ------------------------------------------------------------------ internals
    def _step_raw(self, action: int, rewards: dict[str, float]) -> None:
        self.raw.step(action)  # raises IllegalActionError
        for a in self.possible_agents:
            rewards[a] += float(self.raw.rewards[a])
        if self._done():
            by_seat = [self.decisions[a] for a in self.possible_agents]
            self._infos = {a: {**self.raw.infos[a], "decisions": self.decisions[a], "decisions_by_seat": by_seat}
                           for a in self.possible_agents}

    def _done(self) -> bool:
        r = self.raw
        return all(r.terminations[a] or r.truncations[a] for a in self.possible_agents)

    def _play_forced(self, rewards: dict[str, float]) -> None:
        if not self.skip_forced:
            return
        while not self._done():
            raw = self.raw
            legal = np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])  # the env's cached mask
            if len(legal) != 1:
                return
            self.forced_steps += 1
            self._step_raw(int(legal[0]), rewards)

    def _final(self, rewards: dict[str, float]):
        r = self.raw
        obs = {a: r.observe(a) for a in self.possible_agents}
        truncated = any(r.truncations[a] for a in self.possible_agents)
        terminateds = {a: not truncated for a in self.possible_agents}
        truncateds = {a: truncated for a in self.possible_agents}
        terminateds["__all__"] = not truncated
        truncateds["__all__"] = truncated
        self.agents = []
        return obs, rewards, terminateds, truncateds, self._infos

    def render(self) -> str | None:
        return self.raw.render()


def make_env(config: dict[str, Any] | None = None) -> BlotMultiAgentEnv:
    """Env creator for ``ray.tune.registry.register_env`` (``config`` is the ``env_config``)."""
    return BlotMultiAgentEnv(config)


# ============================================================================ RLModules


def _split_obs(batch: dict[str, Any]) -> tuple[Any, Any]:
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or "observation" not in obs or "action_mask" not in obs:
        raise ValueError("blot RLModules need Dict observations with 'observation' and 'action_mask' "
                         "(BlotMultiAgentEnv's spaces); got "
                         f"{type(obs).__name__} {sorted(obs) if isinstance(obs, dict) else ''}")
    return obs["observation"], obs["action_mask"]


def _masked(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.where(mask > 0, logits, torch.full_like(logits, FLOAT_MIN))


class MaskedActorCriticModule(TorchRLModule, ValueFunctionAPI):
    """PPO-ready ``TorchRLModule``: :class:`agents.ppo.network.ActorCritic` with masked logits.

    ``model_config`` keys: ``network`` (a dict of :class:`agents.ppo.config.NetworkConfig`
    fields), ``preset`` and ``rules`` (rules overrides; for the initial policy bias of
    ``network.policy_bias_init``, :func:`agents.ppo.network.initial_policy_bias`, which needs
    the action layout).

    Forward: ``batch[Columns.OBS] = {"observation": float32[B, D], "action_mask": int8[B, A]}``
    -> ``{ACTION_DIST_INPUTS: float32[B, A]}``, illegal logits set to ``FLOAT_MIN`` (the
    categorical gives them probability 0, and 0 entropy contribution). ``compute_values``
    -> ``float32[B]`` (reward units). ``self.net`` is the ActorCritic (same state-dict keys as
    our PPO's, see :func:`export_policy`).
    """

    def setup(self) -> None:
        mc = dict(self.model_config or {})
        net_cfg = NetworkConfig(**{k: tuple(v) if k == "hidden" else v for k, v in (mc.get("network") or {}).items()})
        space = self.observation_space
        obs_dim = int(space["observation"].shape[0])
        num_actions = int(self.action_space.n)
        bias = None
        if mc.get("preset"):
            lay = layout_for(make_rules(mc["preset"], **(mc.get("rules") or {})))
            if lay.num_actions == num_actions:
                bias = initial_policy_bias(lay, net_cfg.policy_bias_init)
        self.net = ActorCritic(obs_dim, num_actions, net_cfg, policy_bias=bias)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = _split_obs(batch)
        return {Columns.ACTION_DIST_INPUTS: _masked(self.net.logits(x.float()), mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = _split_obs(batch)
        logits, values = self.net(x.float())
        return {Columns.ACTION_DIST_INPUTS: _masked(logits, mask), Columns.EMBEDDINGS: values}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is not None:
            return embeddings
        x, _ = _split_obs(batch)
        return self.net.value(x.float())


class RandomMaskedModule(RLModule):
    """Uniform over the legal actions; returns actions directly (no parameters, never trained).

    A plain ``RLModule`` (not a ``TorchRLModule``), so the torch learner builds no optimizer
    for it; it must not be in ``policies_to_train``.
    """

    def setup(self) -> None:
        self._rng = np.random.default_rng()

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        _, mask = _split_obs(batch)
        m = mask.cpu().numpy() if isinstance(mask, torch.Tensor) else np.asarray(mask)
        acts = [int(self._rng.choice(np.flatnonzero(row))) if row.any() else 0 for row in m.reshape(len(m), -1)]
        return {Columns.ACTIONS: torch.as_tensor(acts, dtype=torch.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("RandomMaskedModule is not trainable (keep it out of policies_to_train)")

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """No-op (RLlib may try to compile every module)."""


def module_spec(cfg: RLlibRunConfig) -> RLModuleSpec:
    """The ``RLModuleSpec`` of the trained (and frozen) modules of ``cfg``."""
    return RLModuleSpec(module_class=MaskedActorCriticModule,
                        model_config={"network": cfg.network.__dict__ | {"hidden": list(cfg.network.hidden)},
                                      "preset": cfg.env.preset})


# ============================================================================ mapping


def team_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """``mode="teams"``: seat ``s`` is played by module ``team_{s % 2}``."""
    return f"team_{seat_of(agent_id) % 2}"


class LeagueMapping:
    """``mode="league"``: per episode, one team plays ``main`` and the other one opponent.

    Both are drawn from a hash of the episode id (so every agent of an episode agrees, in any
    process): main's team with probability 1/2 each, the opponent ``random`` with probability
    ``random_weight`` and else one of the ``frozen_slots`` slots uniformly. Picklable (it is
    shipped to every env runner).
    """

    def __init__(self, frozen_slots: int, random_weight: float):
        self.opponents = [RANDOM] + [frozen_id(i) for i in range(frozen_slots)]
        rest = (1.0 - random_weight) / frozen_slots if frozen_slots else 0.0
        self.weights = [random_weight] + [rest] * frozen_slots

    def draw(self, episode_id: str) -> tuple[int, str]:
        """(main's team, opponent module id) of an episode."""
        h = zlib.crc32(str(episode_id).encode())
        rng = np.random.default_rng(h)
        opp = self.opponents[int(rng.choice(len(self.opponents), p=np.asarray(self.weights) / sum(self.weights)))]
        return h % 2, opp

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        main_team, opp = self.draw(episode.id_)
        return MAIN if seat_of(agent_id) % 2 == main_team else opp


def learning_modules(cfg: RLlibRunConfig) -> list[str]:
    """The module ids that train: ``["main"]`` (league) or ``["team_0", "team_1"]``."""
    return [MAIN] if cfg.league.mode == "league" else ["team_0", "team_1"]


# ============================================================================ callback


def expected_terminal_rewards(info: dict[str, Any], env_cfg: dict[str, Any], num_players: int) -> list[float]:
    """Per seat, the reward the env owes at the end of an episode, recomputed from the final
    ``info`` (``deal_result`` and, in match mode, ``match_winner``; docs/env.md reward model)."""
    diff = 0.0
    res = info.get("deal_result")
    if res is not None:
        diff = float(res["score"][0] - res["score"][1]) * float(env_cfg.get("reward_scale", 1.0))
    match = env_cfg.get("episode", "deal") == "match"
    out = []
    for s in range(num_players):
        side = s % 2
        r = (diff if side == 0 else -diff) if (not match or env_cfg.get("deal_rewards")) else 0.0
        if match and info.get("match_winner") is not None:
            r += 1.0 if side == info["match_winner"] else -1.0
        out.append(r)
    return out


class BlotLeagueCallback(RLlibCallback):
    """Checks and metrics per episode; the frozen-opponent league between iterations.

    Per episode (on the env runners) it logs under ``env_runners``:
    ``blot/seats_rewarded`` (agents whose single-agent episode ended terminated with the
    reward :func:`expected_terminal_rewards` says), ``blot/seats_no_decision`` (seats that
    never acted, so RLlib keeps no episode for them, confirmed by the env's
    ``decisions_by_seat``), ``blot/reward_mismatch`` (every other seat; must be 0: then each
    seat that acted got its terminal reward),
    ``blot/passed_out``, ``blot/main_win`` and ``blot/main_return`` (league mode; a win is
    a positive return, a passed-out deal counts 0.5) and ``blot/decisions`` (agent steps).

    League mode: at algorithm init every frozen slot gets ``main``'s initial weights; after
    an iteration whose number is a multiple of ``snapshot_every`` and in which main's win
    rate was at least ``win_rate_threshold``, ``main``'s weights are copied into the next
    slot (round-robin) in the learner and on every env runner. ``result["league"]`` holds
    ``snapshots`` and the slot written last.
    """

    def __init__(self, cfg: RLlibRunConfig | None = None):
        super().__init__()
        self.cfg = cfg or RLlibRunConfig()
        self.snapshots = 0

    # ------------------------------------------------------------------ env runner side
    def on_episode_end(self, *, episode: Any, env_runner: Any = None, metrics_logger: Any = None,
                       env: Any = None, env_index: int = 0, rl_module: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        env_cfg = self.cfg.env.env_config()
        agent_eps = episode.agent_episodes
        n = make_rules(self.cfg.env.preset).num_players
        info = {}
        for sa in agent_eps.values():
            infos = sa.get_infos()
            if len(infos) and infos[-1]:
                info = infos[-1]
                break
        expected = expected_terminal_rewards(info, env_cfg, n) if info else None
        ok = no_decision = 0
        for seat in range(n):
            aid = f"player_{seat}"
            sa = agent_eps.get(aid)
            if sa is None:
                # RLlib keeps no episode for an agent that never acted: fine if the env says so
                no_decision += int(expected is not None and info.get("decisions_by_seat", [None] * n)[seat] == 0)
                continue
            rewards = sa.get_rewards()
            if (expected is not None and sa.is_done and len(rewards)
                    and abs(float(rewards[-1]) - expected[seat]) < 1e-6):
                ok += 1
        metrics_logger.log_value("blot/seats_rewarded", ok, reduce="mean", window=1000)
        metrics_logger.log_value("blot/seats_no_decision", no_decision, reduce="mean", window=1000)
        metrics_logger.log_value("blot/reward_mismatch", n - ok - no_decision, reduce="sum")
        metrics_logger.log_value("blot/decisions", sum(len(sa) for sa in agent_eps.values()), reduce="mean",
                                 window=1000)
        res = info.get("deal_result") or {}
        metrics_logger.log_value("blot/passed_out", float(res.get("contract") is None), reduce="mean", window=1000)
        if self.cfg.league.mode == "league":
            for aid, sa in agent_eps.items():
                if episode.module_for(aid) == MAIN:
                    ret = float(sa.get_return())
                    metrics_logger.log_value("blot/main_return", ret, reduce="mean", window=1000)
                    metrics_logger.log_value("blot/main_win", 1.0 if ret > 0 else 0.5 if ret == 0 else 0.0,
                                             reduce="mean", window=1000)
                    opp = next((episode.module_for(a) for a in agent_eps if episode.module_for(a) != MAIN), "")
                    metrics_logger.log_value(f"blot/main_return_vs_{opp}", ret, reduce="mean", window=1000)
                    break

    # ------------------------------------------------------------------ driver side
    def on_algorithm_init(self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if self.cfg.league.mode == "league":
            for slot in range(self.cfg.league.frozen_slots):
                copy_module_weights(algorithm, MAIN, frozen_id(slot))

    def on_train_result(self, *, algorithm: Any, metrics_logger: Any = None, result: dict, **kwargs: Any) -> None:
        lg = self.cfg.league
        if lg.mode != "league":
            return
        it = int(result.get("training_iteration", algorithm.iteration))
        win = result.get("env_runners", {}).get("blot/main_win")
        slot = None
        if (lg.frozen_slots and lg.snapshot_every and it % lg.snapshot_every == 0
                and win is not None and float(win) >= lg.win_rate_threshold):
            slot = self.snapshots % lg.frozen_slots
            copy_module_weights(algorithm, MAIN, frozen_id(slot))
            self.snapshots += 1
        result["league"] = {"snapshots": self.snapshots, "slot_written": -1 if slot is None else slot}


def copy_module_weights(algorithm: Any, src: str, dst: str) -> None:
    """Copy module ``src``'s weights into module ``dst`` in the learner and on every env runner
    (local and remote), so ``dst`` plays with them from the next sample on.

    The env runners are written directly: ``EnvRunnerGroup.sync_weights`` would be skipped by
    runners that already hold the learner's current weights sequence number.
    """
    lg = algorithm.learner_group
    state = lg.get_state(components=f"learner/rl_module/{src}")["learner"]["rl_module"][src]
    lg.set_state({"learner": {"rl_module": {dst: state}}})
    algorithm.env_runner_group.foreach_env_runner(functools.partial(_set_module_state, dst, state),
                                                  local_env_runner=True)


def _set_module_state(module_id: str, state: dict, runner: Any) -> None:
    if getattr(runner, "module", None) is not None and module_id in runner.module:
        runner.module[module_id].set_state(state)


# ============================================================================ config


def build_algorithm_config(cfg: RLlibRunConfig, env_name: str = "blot", num_env_runners: int | None = None):
    """The ``PPOConfig`` (new API stack) of a run; register ``env_name`` with :func:`register`.

    Modules: ``main`` + ``random`` + ``frozen_<k>`` (league mode) or ``team_0``/``team_1``;
    ``policies_to_train`` = :func:`learning_modules`. ``num_env_runners`` overrides the config's.
    """
    from ray.rllib.algorithms.ppo import PPOConfig

    runners = cfg.runners
    n_runners = runners.num_env_runners if num_env_runners is None else int(num_env_runners)
    spec = module_spec(cfg)
    if cfg.league.mode == "league":
        specs = {MAIN: spec, RANDOM: RLModuleSpec(module_class=RandomMaskedModule)}
        specs.update({frozen_id(i): spec for i in range(cfg.league.frozen_slots)})
        mapping = LeagueMapping(cfg.league.frozen_slots, cfg.league.random_weight)
    else:
        specs = {"team_0": spec, "team_1": spec}
        mapping = team_mapping
    ppo = cfg.ppo
    config = (
        PPOConfig()
        # RLlib's env pre-check steps with unmasked action_space.sample(), which our env
        # rightly rejects (IllegalActionError); the env is checked by its own test suite.
        .environment(env_name, env_config=cfg.env.env_config(), disable_env_checking=True)
        .framework("torch", torch_compile_learner=False)
        .env_runners(num_env_runners=n_runners, num_envs_per_env_runner=runners.num_envs_per_env_runner,
                     rollout_fragment_length=runners.rollout_fragment_length or "auto",
                     num_cpus_per_env_runner=runners.num_cpus_per_env_runner,
                     sample_timeout_s=runners.sample_timeout_s)
        .learners(num_learners=0)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=learning_modules(cfg))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(lr=ppo.lr, gamma=ppo.gamma, lambda_=ppo.gae_lambda, clip_param=ppo.clip_param,
                  vf_clip_param=ppo.vf_clip_param, entropy_coeff=ppo.entropy_coeff,
                  vf_loss_coeff=ppo.vf_loss_coeff, grad_clip=ppo.grad_clip, num_epochs=ppo.num_epochs,
                  minibatch_size=ppo.minibatch_size, train_batch_size_per_learner=ppo.train_batch_size)
        .callbacks(functools.partial(BlotLeagueCallback, cfg))
        .debugging(seed=cfg.seed)
    )
    return config


def register(env_name: str = "blot") -> str:
    """Register :func:`make_env` with Ray Tune's registry under ``env_name``; returns the name."""
    from ray.tune.registry import register_env

    register_env(env_name, make_env)
    return env_name


# ============================================================================ export


def export_policy(module: MaskedActorCriticModule, cfg: RLlibRunConfig, path: str | Path,
                  meta: dict[str, Any] | None = None) -> Path:
    """Write ``module``'s actor as an agents/ppo policy file (``agents.ppo.trainer.save_policy``
    format), so ``blot-eval --agent PATH`` and ``agents.registry.make_agent(PATH)`` play it."""
    from agents.ppo.config import TrainConfig
    from agents.ppo.trainer import save_policy

    tc = TrainConfig(preset=cfg.env.preset, obs_kind=cfg.env.observation_kind, seed=cfg.seed, network=cfg.network)
    save_policy(module.net, tc, path, {"engine": "rllib", **(meta or {})})
    return Path(path)


def module_agent(module: MaskedActorCriticModule, cfg: RLlibRunConfig, greedy: bool = True, name: str = "rllib"):
    """A trained module as an agent of agents/base.py (``act(view, rng)``) for agents.eval.arena."""
    from agents.ppo.agent import PPOAgent
    from blot_env.observation import ObservationEncoder

    enc = ObservationEncoder(make_rules(cfg.env.preset), cfg.env.observation_kind)
    return PPOAgent(module.net, enc, greedy=greedy, name=name)


__all__ = ["MAIN", "RANDOM", "BlotLeagueCallback", "BlotMultiAgentEnv", "LeagueMapping", "MaskedActorCriticModule",
           "RandomMaskedModule", "build_algorithm_config", "copy_module_weights", "expected_terminal_rewards",
           "export_policy", "frozen_id", "learning_modules", "make_env", "module_agent", "module_spec", "register",
           "team_mapping"]
