"""Single-agent Gymnasium view of the AEC env: one seat learns, the other seats follow given policies.

``gymnasium.make("BlotBazar-v0", opponents="random")`` (ids: ``Blot`` + the preset in
CamelCase + ``-v0``: ``BlotBazar-v0``, ``BlotBazarApp-v0``, ``BlotDuel-v0``, ...). The env has
``action_masks()`` so sb3-contrib's ``MaskablePPO`` trains on it directly. The ids are
registered without Gymnasium's ``OrderEnforcing`` and env-checker wrappers, which would hide
``action_masks()`` (Gymnasium wrappers do not forward unknown methods): ``gymnasium.make``
returns the env itself. Under wrappers of your own, call
``env.get_wrapper_attr("action_masks")()`` (what sb3-contrib does) or
``env.unwrapped.action_masks()``.

Opponent policies are callables of one of two forms (the form is read from the signature, or
forced by a ``policy_input`` attribute equal to ``"view"`` or ``"obs"``):

* ``policy(view: SeatView) -> int`` (one required positional parameter): gets the seat's
  :class:`~blot_env.view.SeatView` (``view.legal`` holds the legal ids);
* ``policy(obs: float32[D], mask: int8[A]) -> int`` (two required positional parameters): gets
  the same observation vector and action mask the learner would get in that seat.

``opponents`` may be ``"random"`` (uniform over legal actions, drawn from the env's seeded
RNG), one policy for every other seat, a list with one entry per seat (the learner's entry is
ignored), or a dict ``{seat: policy}``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from .actions import action_id
from .env import ENV_VERSION, _check_number, _is_int, raw_env
from .errors import ConfigError
from .rules_config import PRESETS
from .view import seat_view

Policy = Callable[..., int]


def gym_id(preset: str, version: int = ENV_VERSION) -> str:
    """``"bazar-app"`` -> ``"BlotBazarApp-v0"``."""
    return "Blot" + "".join(w.capitalize() for w in preset.replace("_", "-").split("-")) + f"-v{version}"


def _policy_input(policy: Policy) -> str:
    forced = getattr(policy, "policy_input", None)
    if forced in ("view", "obs"):
        return forced
    try:
        params = inspect.signature(policy).parameters.values()
    except (TypeError, ValueError):
        return "view"
    req = [p for p in params if p.default is p.empty
           and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return "obs" if len(req) >= 2 else "view"


class BlotGymEnv(gym.Env):
    """One learning seat against fixed policies, over :class:`blot_env.env.raw_env`.

    Args:
        preset: preset id; ``episode``, ``observation_kind``, ``reward_scale``, ``deal_rewards``,
            ``dealer`` and rules overrides are passed to :class:`~blot_env.env.raw_env`.
        seat: the learner's seat, or ``"random"`` (drawn at every reset).
        opponents: see the module docstring (default ``"random"``).
        illegal_reward: reward for a learner action that the mask forbids, which ends the
            episode (``info["illegal_action"] = True``); ``None`` raises IllegalActionError
            instead. A value that is no action id always raises (see :meth:`step`).
        render_mode: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"`` (the AEC env's
            ``render()``, :class:`~blot_env.env.raw_env`).

    Raises:
        ConfigError: a bad argument (a ``seat`` that is no seat, ``opponents`` that are no
            policies, a seat key of ``opponents`` that is no seat, an ``illegal_reward`` that is
            neither None nor a finite number, or a bad argument of the AEC env), naming it.

    Spaces: observation ``Box(0, hi, (D,), float32)`` (the AEC env's ``"observation"``),
    action ``Discrete(A)``; ``action_masks() -> bool[A]``.
    Reward: the learner agent's AEC reward accumulated over its own action and the opponents'
    following actions (deal mode: its side's score difference at the end of the deal).
    """

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2}

    def __init__(self, preset: str = "bazar", seat: int | str = 0,
                 opponents: str | Policy | Sequence[Policy | None] | Mapping[int, Policy] = "random",
                 episode: str = "deal", observation_kind: str = "observation",
                 illegal_reward: float | None = -1.0, render_mode: str | None = None, **env_kwargs: Any):
        self.raw = raw_env(preset=preset, episode=episode, observation_kind=observation_kind,
                           render_mode=render_mode, **env_kwargs)
        n = self.raw.cfg.num_players
        if not (isinstance(seat, str) and seat == "random") and not (_is_int(seat) and 0 <= seat < n):
            raise ConfigError(f"seat must be 0..{n - 1} or 'random', got {seat!r}")
        if illegal_reward is not None:
            _check_number("illegal_reward", illegal_reward)
        self.seat_option = seat
        self.seat = 0 if seat == "random" else int(seat)
        self.render_mode = render_mode
        self.illegal_reward = illegal_reward
        self.observation_space = self.raw.observation_spaces["player_0"]["observation"]
        self.action_space = self.raw.action_spaces["player_0"]
        self._policies = self._normalize(opponents, n)
        self._mask = np.zeros(self.action_space.n, dtype=bool)
        self._agent: str | None = None  # set by reset
        self._over = False  # the episode ended: step() needs a reset() first

    @staticmethod
    def _normalize(opponents, n: int) -> list[tuple[str, Policy] | None]:
        """One ``(input form, policy)`` or None (random) per seat. Raises ConfigError naming the
        entry that is no policy."""
        if isinstance(opponents, str):
            if opponents != "random":
                raise ConfigError(f"unknown opponents {opponents!r}; use 'random' or policies")
            return [None] * n
        if callable(opponents):
            pols = [opponents] * n
        elif isinstance(opponents, Mapping):
            bad = [k for k in opponents if not (_is_int(k) and 0 <= k < n)]
            if bad:
                raise ConfigError(f"opponents: key {bad[0]!r} is no seat; the keys of an opponents dict are "
                                  f"seats 0..{n - 1}")
            pols = [opponents.get(s) for s in range(n)]
        elif isinstance(opponents, Sequence):
            pols = list(opponents)
            if len(pols) != n:
                raise ConfigError(f"expected {n} policies (one per seat), got {len(pols)}")
        else:
            raise ConfigError(f"opponents must be 'random', a policy, a list of {n} policies (one per seat) or a "
                              f"dict {{seat: policy}}, got {type(opponents).__name__}")
        for s, p in enumerate(pols):
            if not (p is None or callable(p) or (isinstance(p, str) and p == "random")):
                raise ConfigError(f"opponents[{s}]: expected a policy (a callable), 'random' or None, got {p!r}")
        return [None if p is None or isinstance(p, str) else (_policy_input(p), p) for p in pols]

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        for _ in range(100):
            if self.seat_option == "random":
                self.seat = int(self.np_random.integers(self.raw.cfg.num_players))
            self.raw.reset(seed=int(self.np_random.integers(2**63 - 1)), options=options)
            self._agent = self.raw.possible_agents[self.seat]
            self._over = False
            _, done = self._play_others()
            if not done:
                return self._obs(), {"seat": self.seat}
        raise RuntimeError("the learner's seat never got to act in 100 deals")

    def step(self, action: int):
        """Play the learner's ``action``, then the other seats until the learner is to act again.

        ``action``: an id in ``0..A-1`` as :func:`blot_env.actions.action_id` accepts it (an
        int, a numpy integer or a 0-d integer array). A legal id that the mask forbids ends the
        episode with ``illegal_reward`` (``info["illegal_action"] = True``), or raises when
        ``illegal_reward`` is None.

        Raises:
            IllegalActionError: a value that is no action id (a bool, a float such as 3.7, a
                string such as ``'pass'``, None, an id outside ``0..A-1``, a longer array), always;
                a masked-out id when ``illegal_reward`` is None.
            gymnasium.error.ResetNeeded: before the first ``reset()``, or after the episode
                ended (``terminated`` or ``truncated``) and before the next ``reset()``.
        """
        if self._agent is None:
            raise gym.error.ResetNeeded("call reset() before step() (BlotGymEnv)")
        if self._over:
            raise gym.error.ResetNeeded("step() after the episode ended (terminated or truncated); call reset() "
                                        "first (BlotGymEnv)")
        raw = self.raw
        legal = lambda: [raw.describe(int(a)) for a in np.flatnonzero(self._mask)]  # noqa: E731
        action = action_id(action, self.seat, self._agent, int(self.action_space.n), legal=legal)
        if self.illegal_reward is not None and not self._mask[action]:
            self._over = True
            return self._obs(), float(self.illegal_reward), True, False, {"illegal_action": True}
        raw.step(action)
        reward = raw.rewards[self._agent]
        more, done = self._play_others()
        reward += more
        info = {}
        if done:
            info = dict(raw.infos.get(self._agent, {}))
        truncated = bool(done and raw.truncations.get(self._agent, False))
        self._over = bool(done)
        return self._obs(), float(reward), bool(done and not truncated), truncated, info

    def action_masks(self) -> np.ndarray:
        """``bool[A]``: the learner's legal actions now (all False when the episode is over)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        return self.raw.render()

    def close(self) -> None:
        self.raw.close()

    # ------------------------------------------------------------------ internals
    def _obs(self) -> np.ndarray:
        o = self.raw.observe(self._agent)
        self._mask = o["action_mask"].astype(bool)
        return o["observation"].copy()  # the AEC env caches its arrays; the caller keeps ours

    def _play_others(self) -> tuple[float, bool]:
        """Step the other seats until the learner is to act or the episode ends."""
        raw = self.raw
        me = self._agent
        reward = 0.0
        while True:
            if raw.terminations[me] or raw.truncations[me]:
                return reward, True
            agent = raw.agent_selection
            if agent == me:
                return reward, False
            s = raw.seat_of(agent)
            pol = self._policies[s]
            if pol is None:  # the legal ids, ascending, as seat_view(...).legal lists them
                legal = np.flatnonzero(raw.observe(agent)["action_mask"])
                a = legal[int(self.np_random.integers(len(legal)))]
            else:
                if pol[0] == "view":
                    a = pol[1](seat_view(raw.game_state, s))
                else:
                    o = raw.observe(agent)
                    a = pol[1](o["observation"], o["action_mask"])
                a = action_id(a, s, f"{agent}, opponent policy", int(self.action_space.n),
                              legal=lambda agent=agent: [raw.describe(int(x)) for x in
                                                         np.flatnonzero(raw.observe(agent)["action_mask"])])
            raw.step(a)
            reward += raw.rewards[me]


def vector_id(preset: str, version: int = ENV_VERSION) -> str:
    """The id of a preset's vector env (:class:`blot_env.vector.BlotVectorEnv`, docs/vector.md):
    ``"bazar-app"`` -> ``"blot_env/BazarApp-v0"``."""
    return "blot_env/" + gym_id(preset, version).removeprefix("Blot")


def register_gym_envs() -> list[str]:
    """Register ``Blot<Preset>-v0`` (:class:`BlotGymEnv`) and the vector env ``blot_env/<Preset>-v0``
    (``vector_entry_point`` only: ``gymnasium.make_vec(id, num_envs=B)``) for every preset with
    Gymnasium. Returns the ids."""
    ids = []
    for p in PRESETS:
        vid = vector_id(p)
        if vid not in gym.registry:
            gym.register(id=vid, vector_entry_point="blot_env.vector.gym_vector:BlotVectorEnv", kwargs={"preset": p})
        ids.append(vid)
        gid = gym_id(p)
        if gid not in gym.registry:
            # no OrderEnforcing/PassiveEnvChecker around it: Gymnasium's wrappers do not forward
            # unknown methods, and ``gymnasium.make(...).action_masks()`` must work (the env
            # enforces reset-before-step itself; check_env passes on it, tests/test_gym_wrapper.py)
            gym.register(id=gid, entry_point="blot_env.gym_env:BlotGymEnv", kwargs={"preset": p},
                         order_enforce=False, disable_env_checker=True)
        ids.append(gid)
    return ids


__all__ = ["BlotGymEnv", "gym_id", "register_gym_envs", "vector_id"]
