"""``SelfPlayVector``: N deals stepped in lockstep, every seat's decisions exposed (self-play).

Runs on :class:`blot_env.batched.BatchedEngine` (``engine="batched"``, compiled, the default)
or on a Python list of reference states (``engine="reference"``, :mod:`blot_env.engine`; the
readable rules, also for rules configs that do not fit in an engine row). Both behave
identically: same observations (``uint8`` numerators, ``ObservationEncoder.quantize``), masks,
seats, rewards and results for the same deals and actions.

Unlike :class:`~blot_env.vector.BlotVectorEnv` there are no opponents: every env reports its
seat to act, its observation and mask, and :meth:`SelfPlayVector.step` takes one action per
env, whoever sits there (a multi-agent learner decides per seat). An env whose deal ended
goes idle (``seat == -1``) until :meth:`SelfPlayVector.reset` deals it again, so a caller can
stop on deal boundaries; the randomness of each deal comes from the ``numpy`` generator given
to ``reset`` (a resumable trainer keeps it in its checkpoints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..actions import layout_for
from ..engine import apply_action, current_seat, deal_random, deal_result, is_terminal
from ..errors import ConfigError
from ..observation import KINDS, ObservationEncoder, privileged_features, privileged_size
from ..rules_config import RulesConfig
from ..scoring import DealResult, side_score_difference
from ..state import State
from ..view import SeatView, seat_view

ENGINES = ("batched", "reference")
"""The values of :class:`SelfPlayVector`'s ``engine``."""


class VecStep(NamedTuple):
    """What :meth:`SelfPlayVector.reset` and :meth:`SelfPlayVector.step` return (N envs, n seats).

    The arrays are the vector's own buffers, overwritten by the next call: copy what you keep.
    """

    obs: np.ndarray
    """``uint8[N, D]``: the acting seat's observation as integer numerators (value =
    numerator x ``ObservationEncoder.quantum``); stale (batched: zeros) where ``seat == -1``."""
    mask: np.ndarray
    """``bool[N, A]``: the acting seat's legal actions (idle rows: action 0 only on the
    batched engine, nothing on the reference one)."""
    seat: np.ndarray
    """``int64[N]``: the seat to act, -1 for an env with no deal in progress."""
    rewards: np.ndarray
    """``float32[N, n]``: per seat, its side's deal score minus the other side's (score-sheet
    units, unscaled; rules.md 2.5) for the deals that ended at this step, else 0."""
    done: np.ndarray
    """``bool[N]``: a deal ended at this step."""
    passed_out: np.ndarray
    """``bool[N]``: it ended passed out (every seat passed, rules.md 2.1; rewards 0)."""


class SelfPlayVector:
    """``num_envs`` deals of one rules config in lockstep, for self-play (module docstring).

    Args:
        rules: the rules config.
        encoder: an :class:`~blot_env.observation.ObservationEncoder` (deal observations, no
            match pieces) or its kind (``"observation"``, ``"information_state"``,
            ``"observation_voids"``).
        num_envs: N.
        engine: ``"batched"`` (:class:`~blot_env.batched.BatchedEngine`) or ``"reference"``.

    The argument order is that of ``make_vector(rules, encoder, num_envs, engine)`` in
    ``agents/ppo/rollout.py``, whose ``BatchedVector``/``EngineVector`` this class replaces.

    Attributes:
        num_envs, num_seats (n), num_actions (A), obs (``uint8[N, D]``, the buffer every
        :class:`VecStep` shares), encoder, engine (``"batched"`` or ``"reference"``), eng
        (the :class:`~blot_env.batched.BatchedEngine`, ``None`` on the reference engine).
        ``views[e]``: the acting seat's :class:`~blot_env.view.SeatView` of env ``e`` (what
        rule agents read); ``results[e]``: the :class:`~blot_env.scoring.DealResult` of its
        last finished deal (batched: of a deal that ended at the last step only);
        ``states[e]``: its reference :class:`~blot_env.state.State` (full information).

    Raises:
        ConfigError: an unknown engine or observation kind, an encoder with match pieces, or
            (batched) rules that do not fit in an engine row.
    """

    def __init__(self, rules: RulesConfig, encoder: Any = "observation", num_envs: int = 64,
                 engine: str = "batched") -> None:
        if engine not in ENGINES:
            raise ConfigError(f"engine must be one of {ENGINES}, got {engine!r}")
        if isinstance(encoder, str):
            if encoder not in KINDS:
                raise ConfigError(f"observation kind must be one of {KINDS}, got {encoder!r}")
            encoder = ObservationEncoder(rules, encoder)
        if getattr(encoder, "match", False):
            raise ConfigError("the encoder has match pieces (match=True); SelfPlayVector plays single deals")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive int, got {num_envs!r}")
        self.rules, self.encoder, self.num_envs, self.engine = rules, encoder, int(num_envs), engine
        self.num_seats = rules.num_players
        self.num_actions = layout_for(rules).num_actions
        self.eng = None
        if engine == "batched":
            from ..batched import BatchedEngine

            self.eng = BatchedEngine(rules=rules, num_envs=self.num_envs, obs_kind=encoder.kind, seed=0,
                                     autoreset=False, obs_dtype="uint8")
            self.eng.release_rows(np.arange(self.num_envs))
            self.obs = self.eng.buffers().obs
            self.views: Any = _RowViews(self.eng)
            self.results: Any = _RowResults(self.eng)
            self.states: Any = _RowStates(self.eng)
        else:
            N = self.num_envs
            self.states = [None] * N
            self.views = [None] * N
            self.results = [None] * N
            self.obs = np.zeros((N, encoder.size), dtype=np.uint8)
            self._mask = np.zeros((N, self.num_actions), dtype=bool)
            self._seat = np.full(N, -1, dtype=np.int64)

    # ------------------------------------------------------------------ API
    def reset(self, envs: Sequence[int], rng: np.random.Generator) -> VecStep:
        """Deal new deals in ``envs`` (others are untouched); the randomness comes from ``rng``
        (batched: one shuffle key per env, ``BatchedEngine.reset_rows``; reference: the cards
        and a random dealer, ``engine.deal_random``). Rewards and done flags are zeros."""
        if self.eng is not None:
            envs = np.asarray(envs, dtype=np.int64)
            keys = rng.integers(0, np.iinfo(np.int64).max, size=envs.size, dtype=np.int64).astype(np.uint64)
            return self._out(self.eng.reset_rows(envs, keys), zero=True)
        for e in envs:
            dealer = int(rng.integers(self.num_seats))
            self.states[e] = deal_random(self.rules, rng, dealer)
            self._refresh(int(e))
        N = self.num_envs
        return VecStep(self.obs, self._mask, self._seat, np.zeros((N, self.num_seats), np.float32),
                       np.zeros(N, bool), np.zeros(N, bool))

    def step(self, actions: np.ndarray) -> VecStep:
        """Apply ``actions`` (``int64[N]``, one per env) in every env with a deal in progress
        (idle envs ignore theirs).

        Raises:
            IllegalActionError: an action that is not legal for the seat to act (the message
                names the env (batched: "row"), the action, the seat and the rule).
            ValueError: ``actions`` is not an integer array of length N (batched).
        """
        if self.eng is not None:
            return self._out(self.eng.step(actions))
        N, n = self.num_envs, self.num_seats
        rewards = np.zeros((N, n), np.float32)
        done = np.zeros(N, bool)
        passed = np.zeros(N, bool)
        for e in np.flatnonzero(self._seat >= 0):
            s = apply_action(self.states[e], int(actions[e]))
            self.states[e] = s
            if is_terminal(s):
                res = deal_result(s)
                self.results[e] = res
                for seat in range(n):
                    rewards[e, seat] = side_score_difference(res.score, seat)
                done[e] = True
                passed[e] = res.contract is None
                self._seat[e] = -1
                self.views[e] = None
            else:
                self._refresh(int(e))
        return VecStep(self.obs, self._mask, self._seat, rewards, done, passed)

    def privileged(self, envs: np.ndarray) -> np.ndarray:
        """``uint8[len(envs), P]``: the acting seats' hidden cards (P = 32 n + 32;
        :func:`blot_env.observation.privileged_features`), for a critic that sees every hand
        during training; a policy must never read it."""
        if self.eng is not None:
            return self.eng.privileged(envs)
        if not len(envs):
            return np.zeros((0, privileged_size(self.num_seats)), np.uint8)
        return np.stack([privileged_features(self.states[e], int(self._seat[e])) for e in envs])

    # ------------------------------------------------------------------ internals
    def _refresh(self, e: int) -> None:
        s = self.states[e]
        seat = current_seat(s)
        v = seat_view(s, seat)
        self.views[e] = v
        self._seat[e] = seat
        self.obs[e] = self.encoder.quantize(self.encoder.encode(v))
        self._mask[e] = False
        self._mask[e, list(v.legal)] = True

    def _out(self, b, zero: bool = False) -> VecStep:
        mask = b.action_mask.view(np.bool_)
        if zero:
            N = self.num_envs
            return VecStep(b.obs, mask, b.seat, np.zeros((N, self.num_seats), np.float32), np.zeros(N, bool),
                           np.zeros(N, bool))
        return VecStep(b.obs, mask, b.seat, b.reward, b.done, b.done & (b.result[:, 0] < 0))


class _RowViews:
    def __init__(self, eng) -> None:
        self.eng = eng

    def __getitem__(self, e: int) -> SeatView:
        return seat_view(self.eng.state(int(e)), int(self.eng.buffers().seat[e]))


class _RowResults:
    def __init__(self, eng) -> None:
        self.eng = eng

    def __getitem__(self, e: int) -> DealResult | None:
        return self.eng.deal_result(int(e))


class _RowStates:
    def __init__(self, eng) -> None:
        self.eng = eng

    def __getitem__(self, e: int) -> State:
        return self.eng.state(int(e))


__all__ = ["ENGINES", "SelfPlayVector", "VecStep"]
