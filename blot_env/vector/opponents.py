"""Opponents of the vector environments: seats that act for a whole batch of envs at once.

:class:`~blot_env.vector.BlotVectorEnv` (and the SB3 and TorchRL wrappers over it) lets the
learner play some seats; every other seat is played by an opponent that acts for all envs
where that seat is to act, in one call. An opponent is given as

* ``"random"``: a uniformly random legal action per env, drawn by the batched engine's own
  seeded sampler (:meth:`blot_env.batched.BatchedEngine.random_actions`; reproducible from
  ``reset(seed=...)``);
* a callable ``policy(obs, mask) -> actions``: ``obs float32[k, D]`` (the acting seats'
  observations, the learner's encoding), ``mask bool[k, A]`` (their legal actions) and
  ``actions int[k]`` (``k`` = envs where the seat is to act now);
* an object with ``act(batch: OpponentBatch) -> int[k]`` (and optionally
  ``reset(envs: int64[m])``, called when ``envs`` start a new deal): an :class:`Opponent`;
* any other string: an agent name or a ``.pt`` policy file, resolved by the providers of the
  ``blot_env.opponents`` entry-point group (:func:`resolve_opponent`). This project's
  ``agents`` package registers one (``agents.opponents:make_opponent``: rule agents such as
  ``"rules"``/``"rules-medium"``, ``"ppo"``, ``ppo:PATH`` and ``PATH.pt``). ``blot_env``
  never imports ``agents`` itself.

Provider protocol (for other packages): an entry point in the group ``blot_env.opponents``
names a function ``make(spec: str, rules: RulesConfig, obs_kind: str, seed: int) -> Opponent``.
It raises :class:`~blot_env.errors.ConfigError` (or a ``ValueError``) for a spec it does not
know; the next provider is then tried, and when none knows the spec the error names them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ConfigError
from ..rules_config import RulesConfig
from ..view import SeatView

#: the entry-point group that resolves opponent names and policy files
ENTRY_POINT_GROUP = "blot_env.opponents"

BatchPolicy = Callable[[np.ndarray, np.ndarray], Any]
"""``policy(obs float32[k, D], mask bool[k, A]) -> actions int[k]``."""


@dataclass
class OpponentBatch:
    """What an :class:`Opponent` gets for one decision of ``k`` envs (one seat each).

    Attributes:
        envs: ``int64[k]`` env indices (rows of the vector env).
        seats: ``int64[k]`` the seat to act in each env (the vector env's seats, as the
            learner's ``seats`` argument numbers them).
        obs: ``float32[k, D]`` the acting seats' observations (the AEC env's
            ``"observation"``, ``obs_kind`` of the vector env; match pieces included in match
            mode).
        mask: ``bool[k, A]`` their legal actions.
        rng: a generator seeded by the vector env's ``reset(seed=...)``, for random choices.
    """

    envs: np.ndarray
    seats: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    rng: np.random.Generator
    _views: Callable[[], list[SeatView]] | None = field(default=None, repr=False)

    def views(self) -> list[SeatView]:
        """The acting seats' :class:`~blot_env.view.SeatView` per env, built on demand from
        :meth:`blot_env.batched.BatchedEngine.state` (call it inside ``act``: the engine moves
        on after it). A view's ``seat`` is the engine's seat, which differs from ``seats`` when
        the vector env turns the seats (match mode, a fixed dealer); partners, opponents and the
        dealer sit as they do for the learner."""
        if self._views is None:
            raise RuntimeError("this batch carries no views")
        return self._views()


@runtime_checkable
class Opponent(Protocol):
    """An opponent acting for a batch of envs (module docstring)."""

    def act(self, batch: OpponentBatch) -> Any:
        """``int[k]``: one legal action per env of ``batch``."""
        ...


class RandomOpponent:
    """Uniformly random legal actions, drawn by the batched engine's sampler (module docstring).

    The vector env recognises it and takes the actions from
    :meth:`~blot_env.batched.BatchedEngine.random_actions`; :meth:`act` is the same choice
    from ``batch.rng`` for other callers.
    """

    name = "random"

    def act(self, batch: OpponentBatch) -> np.ndarray:
        m = batch.mask
        counts = m.sum(axis=1)
        k = (batch.rng.random(len(counts)) * counts).astype(np.int64)
        return (np.cumsum(m, axis=1) > k[:, None]).argmax(axis=1)


class PolicyOpponent:
    """A batch callable ``policy(obs, mask) -> actions`` as an :class:`Opponent`."""

    def __init__(self, policy: BatchPolicy, name: str | None = None) -> None:
        self.policy = policy
        self.name = name or getattr(policy, "__name__", type(policy).__name__)

    def act(self, batch: OpponentBatch) -> Any:
        return self.policy(batch.obs, batch.mask)


def _providers() -> list[Any]:
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def resolve_opponent(spec: Any, rules: RulesConfig, obs_kind: str = "observation", seed: int = 0) -> Opponent:
    """The :class:`Opponent` of ``spec`` (module docstring): ``"random"``, an Opponent, a
    batch callable, or a name / policy file resolved through the ``blot_env.opponents``
    entry-point group.

    Args:
        spec: the opponent.
        rules: the game's rules (a provider builds agents for them).
        obs_kind: the vector env's observation kind (a policy file trained on it may act
            batched on the observations).
        seed: base seed of the opponent's agents.

    Raises:
        ConfigError: ``spec`` is none of these, or no installed provider knows the name (the
            message lists each provider's answer).
    """
    if isinstance(spec, str):
        if spec == "random":
            return RandomOpponent()
        providers = _providers()
        if not providers:
            raise ConfigError(f"opponent {spec!r}: no provider is installed in the {ENTRY_POINT_GROUP!r} entry-point "
                              "group (install this project with its agents package: pip install -e .); use "
                              "'random' or a callable policy(obs, mask) -> actions")
        answers = []
        for ep in providers:
            try:
                make = ep.load()
            except ImportError as e:
                answers.append(f"{ep.name} ({ep.value}): cannot be imported: {e}")
                continue
            try:
                return make(spec, rules, obs_kind, seed)
            except (ConfigError, ValueError, FileNotFoundError) as e:
                answers.append(f"{ep.name}: {e}")
        raise ConfigError(f"unknown opponent {spec!r}: " + "; ".join(answers))
    if isinstance(spec, type):
        raise ConfigError(f"opponent {spec.__name__!r} is a class: pass an instance")
    if callable(getattr(spec, "act", None)):
        return spec
    if callable(spec):
        return PolicyOpponent(spec)
    raise ConfigError(f"an opponent must be 'random', an agent name or policy file, a callable "
                      f"policy(obs, mask) -> actions or an object with act(batch); got {type(spec).__name__}")


def opponents_per_seat(opponents: Any, num_players: int, learner: Sequence[int]) -> list[Any]:
    """One opponent spec per seat (``None`` at the learner's seats) from the ``opponents``
    argument of a vector env: one spec for every other seat, a list with one entry per seat
    (the learner's entries are ignored), or a dict ``{seat: spec}`` covering every other seat.

    Raises:
        ConfigError: a list of the wrong length, a dict key that is no seat, or a seat of
            neither the learner nor the dict.
    """
    n = num_players
    if isinstance(opponents, Mapping):
        bad = [k for k in opponents if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < n]
        if bad:
            raise ConfigError(f"opponents: key {bad[0]!r} is no seat; the keys of an opponents dict are seats "
                              f"0..{n - 1}")
        missing = [s for s in range(n) if s not in learner and s not in opponents]
        if missing:
            raise ConfigError(f"opponents: seat {missing[0]} is neither a learner seat ({list(learner)}) nor a key "
                              "of the opponents dict")
        per = [opponents.get(s) for s in range(n)]
    elif isinstance(opponents, Sequence) and not isinstance(opponents, str):
        per = list(opponents)
        if len(per) != n:
            raise ConfigError(f"opponents: expected {n} entries (one per seat), got {len(per)}")
    else:
        per = [opponents] * n
    for s in learner:
        per[s] = None
    for s in range(n):
        if s not in learner and per[s] is None:
            raise ConfigError(f"opponents[{s}]: seat {s} is not a learner seat and needs an opponent")
    return per


__all__ = [
    "ENTRY_POINT_GROUP",
    "BatchPolicy",
    "Opponent",
    "OpponentBatch",
    "PolicyOpponent",
    "RandomOpponent",
    "opponents_per_seat",
    "resolve_opponent",
]
