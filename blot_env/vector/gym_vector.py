"""``BlotVectorEnv``: a Gymnasium vector env of B deals over the batched engine.

Runs on :class:`blot_env.batched.BatchedEngine` (compiled, all envs in one call). The
learner plays some seats (default: the side of seat 0, seats 0 and 2 in the 4-player
presets); opponents (:mod:`blot_env.vector.opponents`) play the others, for all envs at
once. One ``step(actions)`` takes one learner action per env, then plays the opponents of
every env until a learner seat is to act again in each, so every observation returned is a
learner's decision. docs/vector.md describes it; the rules are docs/rules.md's, the rewards
and episodes those of the AEC env (docs/env.md "Reward model and episodes").

Implementation: the engine runs with ``autoreset=False`` and float32 observations. Opponent
moves step only the envs where an opponent is to act: the others are held
(``BatchedEngine.step(actions, hold=rows)`` leaves those rows as they are). A finished
deal's row is still in the engine when its episode ends, which gives the final observation
(``BatchedEngine.observe``, all finished envs in one compiled call), the record and the
result; the row is then dealt again with the engine's own seeded stream (``reset_rows``), the
same deals as ``autoreset=True`` would give.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ..batched import BatchedEngine
from ..batched.convert import result_from_array
from ..engine import apply_action
from ..env import EPISODES
from ..errors import ConfigError, IllegalActionError
from ..match import MatchState, after_deal, new_match
from ..observation import KINDS, ObservationEncoder
from ..record import FORMAT, deal_fields, rules_to_record
from ..rules_config import RulesConfig, make_rules, with_overrides
from ..scoring import DealResult
from ..state import Contract
from ..view import seat_view
from .opponents import OpponentBatch, RandomOpponent, opponents_per_seat, resolve_opponent

#: column of the per-side score in ``BatchStep.result`` (its documented layout)
_SCORE = 7
#: opponent moves in a row after which a step gives up (no preset comes near it)
_MAX_OPPONENT_MOVES = 10_000


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_number(name: str, value: Any) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not ok or not np.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {value!r}")


def learner_seats(seats: Any, num_players: int) -> tuple[int, ...]:
    """The learner's seats from a ``seats`` argument: ``None`` (the side of seat 0: seats 0
    and 2 with 4 players, seat 0 with 2), one seat, or a sequence of distinct seats of one
    side.

    Raises:
        ConfigError: a value that is no seat, a repeated seat, or seats of both sides.
    """
    n = num_players
    if seats is None:
        return tuple(s for s in range(n) if s % 2 == 0)
    if _is_int(seats):
        seats = (int(seats),)
    if isinstance(seats, str) or not isinstance(seats, Sequence) or not seats:
        raise ConfigError(f"seats must be None, a seat 0..{n - 1} or a non-empty list of seats, got {seats!r}")
    for s in seats:
        if not _is_int(s) or not 0 <= s < n:
            raise ConfigError(f"seats: {s!r} is no seat 0..{n - 1}")
    out = tuple(int(s) for s in seats)
    if len(set(out)) != len(out):
        raise ConfigError(f"seats: {list(out)} repeats a seat")
    if len({s % 2 for s in out}) != 1:
        raise ConfigError(f"seats: {list(out)} sit on both sides; the learner plays one side (seats of equal parity: "
                          "partners are seats s and s + 2)")
    return out


def rotate_result(res: DealResult, shift: int, n: int) -> DealResult:
    """``res`` with seats moved by ``shift`` (engine seat ``p`` is seat ``(p + shift) % n``)."""
    if shift % n == 0:
        return res
    c = res.contract
    if c is not None:
        c = Contract(seat=(c.seat + shift) % n, strain=c.strain, value=c.value, kind=c.kind, plus=c.plus,
                     double=c.double, call=c.call)
    if shift % 2 == 0:
        return DealResult(c, res.made, res.tricks, res.card_points, res.combinations, res.score)
    sw = lambda t: (t[1], t[0])  # noqa: E731
    return DealResult(c, res.made, sw(res.tricks), sw(res.card_points), sw(res.combinations), sw(res.score))


class BlotVectorEnv(gym.vector.VectorEnv):
    """B blot deals as a Gymnasium vector env, on :class:`blot_env.batched.BatchedEngine`.

    The learner plays ``seats`` in every env; ``opponents`` play the other seats, for all
    envs at once (:mod:`blot_env.vector.opponents`). ``step(actions)`` applies one learner
    action per env, then lets the opponents move in every env until a learner seat is to act
    again, so each observation is one of the learner's decisions.

    Args:
        num_envs: B, the number of envs (rows of the engine).
        preset: a preset of ``blot_env.PRESETS`` (ignored when ``rules`` is given).
        seats: the learner's seats: ``None`` (default: the side of seat 0, seats 0 and 2 in
            the 4-player presets), a seat, or seats of one side (:func:`learner_seats`).
        opponents: ``"random"`` (default), a batch policy ``policy(obs, mask) -> actions``, an
            :class:`~blot_env.vector.opponents.Opponent`, an agent name or ``.pt`` file
            (resolved by the ``blot_env.opponents`` entry points), one of these per seat
            (a list; the learner's entries are ignored) or a dict ``{seat: opponent}``.
        episode: ``"deal"`` (an episode is one deal) or ``"match"`` (deals to the target;
            observations carry the match pieces), as the AEC env's ``episode``.
        observation_kind: ``"observation"``, ``"information_state"`` or ``"observation_voids"``.
        reward_scale: multiplies the score-sheet rewards (deal mode; per-deal rewards).
        deal_rewards: match mode: also reward every deal (score difference x scale).
        dealer: a fixed dealer of every deal (deal mode) or of each match's first deal;
            ``None``: the engine's random dealer.
        max_deals: match mode: truncate a match after this many deals.
        final_obs: put each finished episode's last observation in
            ``infos["final_obs"]`` (Gymnasium's same-step autoreset; built for the finished
            episodes in one compiled call). ``False`` leaves it out (nothing bootstraps from it: deal
            episodes always terminate).
        records: put each finished deal's record (docs/deal-record.md, ``blot_env.record``)
            in ``infos["deal_record"]`` and its result in ``infos["deal_result"]``.
        copy: return observation arrays that stay the caller's (default, as Gymnasium's own
            vector envs; ``step`` returns a new array that the engine wrote and never writes
            again, at no copying cost); ``False`` returns read-only views of the engine's
            buffers, valid until the next ``step`` or ``reset``.
        rules: a :class:`~blot_env.rules_config.RulesConfig` instead of ``preset``.
        **rules_overrides: rules knobs set on top of the preset (rules.md 8).

    Spaces (``single_*``; the batched spaces have a leading ``num_envs``):
        observation ``Dict(observation=Box(0, hi, (D,), float32), action_mask=Box(0, 1,
        (A,), int8))`` (the AEC env's); action ``Discrete(A)``; ``action_masks()`` returns
        ``bool[B, A]`` (sb3-contrib's convention).

    Autoreset: ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``). In the step
    where an env's episode ends, ``terminated[e]`` (or ``truncated[e]``, match mode after
    ``max_deals``) is set, ``rewards[e]`` holds its reward, and the returned observation is
    already the first learner decision of the next episode; the last one is in
    ``infos["final_obs"][e]`` (``final_obs=True``) and the episode's figures in
    ``infos["final_info"]``: ``length`` (learner decisions), ``return``, and ``score``
    (``int64[B, 2]``: the learner side's deal score, the other side's; deal mode),
    ``passed_out``, or ``totals`` and ``won`` (match mode). ``infos["seat"]`` is the seat to
    act in every env.

    Rewards (docs/env.md "Reward model and episodes"): deal mode, at the end of the deal,
    ``reward_scale * (learner side's score - opponents' score)`` in score-sheet units (table
    points for the Armenian presets, raw points for belote; rules.md 2.5), 0 for a passed-out
    deal; match mode: +1 / -1 to the learner side at the end of the match (plus the scaled
    deal scores with ``deal_rewards``). Float64.

    Randomness: ``reset(seed=s)`` seeds everything (the engine's deals, row by row, the
    random opponents, the generator passed to opponent agents). Deal ``k`` of env ``e``
    does not depend on the batch size or on the other envs.

    Attributes:
        cfg, num_envs (B), num_players (n), num_actions (A), obs_size (D), seats (the
        learner's), episode, engine (the :class:`~blot_env.batched.BatchedEngine`; read it, do
        not step it), opponents (one resolved opponent per distinct spec), agent_steps (moves
        applied so far, the learner's and the opponents').

    Raises:
        ConfigError: a bad argument (named); IllegalActionError (``step``): an action that
            is no legal action id, naming the env, the action, the seat and the rule.
    """

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 64, preset: str = "bazar", seats: Any = None, opponents: Any = "random",
                 episode: str = "deal", observation_kind: str = "observation", reward_scale: float = 1.0,
                 deal_rewards: bool = False, dealer: int | None = None, max_deals: int = 1000,
                 final_obs: bool = True, records: bool = False, copy: bool = True,
                 rules: RulesConfig | None = None, **rules_overrides: Any) -> None:
        if isinstance(num_envs, bool) or not _is_int(num_envs) or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive int, got {num_envs!r}")
        if rules is not None:
            if not isinstance(rules, RulesConfig):
                raise ConfigError(f"rules must be a RulesConfig (blot_env.make_rules(...)), got {type(rules).__name__}")
            cfg = with_overrides(rules, rules_overrides) if rules_overrides else rules
        else:
            cfg = make_rules(preset, **rules_overrides)
        if episode not in EPISODES:
            raise ConfigError(f"episode must be one of {EPISODES}, got {episode!r}")
        if observation_kind not in KINDS:
            raise ConfigError(f"observation_kind must be one of {KINDS}, got {observation_kind!r}")
        _check_number("reward_scale", reward_scale)
        for name, flag in (("deal_rewards", deal_rewards), ("final_obs", final_obs), ("records", records),
                           ("copy", copy)):
            _check_flag(name, flag)
        n = cfg.num_players
        if dealer is not None and (not _is_int(dealer) or not 0 <= dealer < n):
            raise ConfigError(f"dealer must be a seat 0..{n - 1} or None, got {dealer!r}")
        if not _is_int(max_deals) or max_deals < 1:
            raise ConfigError(f"max_deals must be an integer of at least 1, got {max_deals!r}")
        self.cfg = cfg
        self.num_envs = B = int(num_envs)
        self.num_players = n
        self.episode = episode
        self.match = episode == "match"
        self.observation_kind = observation_kind
        self.reward_scale = float(reward_scale)
        self.deal_rewards = bool(deal_rewards)
        self.fixed_dealer = None if dealer is None else int(dealer)
        self.max_deals = int(max_deals)
        self.final_obs = bool(final_obs)
        self.records = bool(records)
        self.copy = bool(copy)
        self.seats = learner_seats(seats, n)
        self.learner_side = self.seats[0] % 2
        self.engine = BatchedEngine(rules=cfg, num_envs=B, obs_kind=observation_kind, seed=0, autoreset=False)
        self.layout = self.engine.layout
        self.num_actions = A = self.engine.num_actions
        self._d0 = self.engine.obs_size
        self._o_dealer = ObservationEncoder(cfg, observation_kind).piece("dealer").offset
        self.encoder = ObservationEncoder(cfg, observation_kind, match=self.match)
        self.obs_size = D = self.encoder.size
        single = spaces.Dict({
            "observation": spaces.Box(0.0, self.encoder.upper_bounds(), (D,), np.float32),
            "action_mask": spaces.Box(0, 1, (A,), np.int8),
        })
        self.single_observation_space = single
        self.single_action_space = spaces.Discrete(A)
        self.observation_space = batch_space(single, B)
        self.action_space = batch_space(self.single_action_space, B)
        # controllers per seat: -1 the learner, else an index into self.opponents
        per_seat = opponents_per_seat(opponents, n, self.seats)
        self.opponents: list[Any] = []
        keys: dict[Any, int] = {}
        ctrl = np.full(n, -1, dtype=np.int64)
        for s, spec in enumerate(per_seat):
            if spec is None:
                continue
            key = spec if isinstance(spec, str) else id(spec)
            if key not in keys:
                keys[key] = len(self.opponents)
                self.opponents.append(resolve_opponent(spec, cfg, observation_kind, seed=1000 * len(self.opponents)))
            ctrl[s] = keys[key]
        self._ctrl = ctrl
        self._random = [isinstance(o, RandomOpponent) for o in self.opponents]
        self._random_arr = np.array(self._random + [False], dtype=bool)
        self._resets = [getattr(o, "reset", None) for o in self.opponents]
        self._rows = np.arange(B)
        self._shift = np.zeros(B, dtype=np.int64)  # engine seat p plays seat (p + shift) % n
        self._rotating = self.match or self.fixed_dealer is not None
        self._ctrl_phys = np.tile(ctrl, (B, 1))  # per env and engine seat
        self._acted = np.zeros(B, dtype=bool)  # the learner acted in the episode
        self._last_seat = np.zeros(B, dtype=np.int64)  # engine seat of the learner's last decision
        self._length = np.zeros(B, dtype=np.int64)
        self._return = np.zeros(B, dtype=np.float64)
        self._matches: list[MatchState | None] = [None] * B
        self._pieces = np.zeros((B, 2, 4), dtype=np.float32)  # match pieces per env and observer side
        self._obs = np.zeros((B, D), dtype=np.float32) if self.match else None
        self._hist = np.zeros((B, 64), dtype=np.int64)
        self._hist_len = np.zeros(B, dtype=np.int64)
        self._opp_rng = np.random.default_rng(0)
        self._started = False
        self._handed: np.ndarray | None = None  # the engine's buffer, returned by the last step
        self.agent_steps = 0
        """Moves applied since construction, the learner's and the opponents' (for benchmarks)."""
        # the step's outputs, filled by _end_deals
        self._rew = np.zeros(B, dtype=np.float64)
        self._term = np.zeros(B, dtype=bool)
        self._trunc = np.zeros(B, dtype=bool)
        self._final: dict[str, Any] = {}
        self._deal_infos: dict[str, Any] = {}

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a new episode in every env (or in ``options["reset_mask"]``'s envs).

        Args:
            seed: seeds the deals of every env, the random opponents and the opponents'
                generator (an int >= 0); ``None`` draws from the env's generator (seeded by an
                earlier ``reset(seed=...)``, else by the OS).
            options: ``{"reset_mask": bool[B]}`` abandons the episodes of those envs only and
                starts new ones (the others continue); other keys are refused.

        Returns:
            ``(obs, infos)``: the first learner decision of every env; ``infos["seat"]``.

        Raises:
            ConfigError: a bad seed, a bad ``reset_mask`` or an unknown option.
        """
        if seed is not None and (not _is_int(seed) or seed < 0):
            raise ConfigError(f"seed must be a non-negative int or None, got {seed!r}")
        if self._handed is not None:  # the caller holds the engine's buffer: write elsewhere
            self.engine.swap_obs_buffer(self._handed.copy())
            self._handed = None
        mask = None
        if options:
            if not isinstance(options, dict) or set(options) - {"reset_mask"}:
                raise ConfigError(f"reset options must be None or {{'reset_mask': bool[{self.num_envs}]}}, "
                                  f"got {options!r}")
            mask = np.asarray(options["reset_mask"])
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ConfigError(f"reset_mask must be bool[{self.num_envs}], got {mask.dtype}{list(mask.shape)}")
        if mask is not None and self._started and seed is None:
            rows = np.flatnonzero(mask)
            self._new_episodes(rows)
            self.engine.reset_rows(rows)
            self._new_deals(rows)
        else:
            super().reset(seed=seed)
            self.engine.reset(int(self.np_random.integers(1 << 62)))
            self._opp_rng = np.random.default_rng(int(self.np_random.integers(1 << 62)))
            rows = self._rows
            self._new_episodes(rows)
            self._new_deals(rows)
            self._started = True
        self._clear_outputs()
        self._advance()
        return self._observations(), self._infos()

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Apply one learner action per env, then the opponents' moves until a learner seat is
        to act again in every env (module docstring).

        Args:
            actions: ``int[B]`` action ids, one per env (``action_masks()`` gives the legal ones).

        Returns:
            ``(obs, rewards float64[B], terminated bool[B], truncated bool[B], infos)``
            (same-step autoreset, see the class docstring).

        Raises:
            IllegalActionError: an action that is no integer id or is not legal; the message
                names the env, the action, the seat, the rule and the legal actions.
            ValueError: ``actions`` is not one action per env.
            RuntimeError: ``step`` before ``reset``.
        """
        if not self._started:
            raise RuntimeError("step() before reset(): call reset() first (BlotVectorEnv)")
        a = self._check_learner_actions(actions)
        self._clear_outputs()
        eng = self.engine
        seat = eng.buffers().seat
        self._last_seat[:] = seat
        self._acted[:] = True
        self._length += 1
        if self.records:
            self._log(self._rows, a)
        if self.copy and not self.match:
            # every env moves in this step, so the engine writes every row's observation: into
            # a new array, returned as it is (the copy that copy=True promises, without copying)
            self._handed = np.empty((self.num_envs, self._d0), dtype=np.float32)
            eng.swap_obs_buffer(self._handed)
        out = eng.step(a)
        self.agent_steps += self.num_envs
        self._end_deals(np.flatnonzero(out.done), out)
        self._advance()
        if self._handed is not None:
            obs = {"observation": self._handed, "action_mask": np.ascontiguousarray(eng.buffers().action_mask)}
        else:
            obs = self._observations()
        return obs, self._rew.copy(), self._term.copy(), self._trunc.copy(), self._infos()

    def action_masks(self) -> np.ndarray:
        """``bool[B, A]``: the legal actions of the learner seat to act in every env (a copy)."""
        return self.engine.buffers().action_mask.astype(bool)

    # ------------------------------------------------------------------ checks
    def _check_learner_actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        B = self.num_envs
        if a.shape != (B,):
            raise ValueError(f"actions must have shape ({B},) (one action id per env), got {a.shape}")
        if a.dtype.kind not in "iu":
            e = 0
            seat = int((self.engine.buffers().seat[e] + self._shift[e]) % self.num_players)
            raise IllegalActionError(str(a[e]), seat, f"env {e}: expected integer action ids, got dtype {a.dtype}; "
                                     "an action id is an int in 0..A-1", agent="learner")
        a = a.astype(np.int64, copy=False)
        self._check_legal(a, self._rows, "learner")
        return a

    def _check_legal(self, a: np.ndarray, rows: np.ndarray, who: str) -> None:
        """Raise IllegalActionError for the first env of ``rows`` whose action ``a`` (one per
        row) is not legal for the seat to act there."""
        mask = self.engine.buffers().action_mask
        A = self.num_actions
        inside = (a >= 0) & (a < A)
        ok = inside & (mask[rows, np.where(inside, a, 0)] != 0)
        if ok.all():
            return
        i = int(np.flatnonzero(~ok)[0])
        e, act = int(rows[i]), int(a[i])
        phys = int(self.engine.buffers().seat[e])
        seat = int((phys + self._shift[e]) % self.num_players)
        legal = [self.layout.describe(int(x)) for x in np.flatnonzero(mask[e])]
        if not 0 <= act < A:
            raise IllegalActionError(str(act), seat, f"env {e}: action id outside 0..{A - 1}", legal, agent=who)
        try:
            apply_action(self.engine.state(e), act)
        except IllegalActionError as err:
            raise IllegalActionError(err.action, seat, f"env {e}: {err.reason}", legal, agent=who) from None
        raise IllegalActionError(self.layout.describe(act), seat, f"env {e}: the batched mask forbids it, but the "
                                 "reference engine accepts it (please report this)", legal, agent=who)

    # ------------------------------------------------------------------ stepping
    def _advance(self) -> None:
        """Let the opponents move until a learner seat is to act in every env."""
        eng = self.engine
        for _ in range(_MAX_OPPONENT_MOVES):
            seat = eng.buffers().seat
            who = self._ctrl_phys[self._rows, seat]
            opp = np.flatnonzero(who >= 0)
            if opp.size == 0:
                return
            actions = np.zeros(self.num_envs, dtype=np.int64)
            ctrl = who[opp]
            rand = None
            for k in np.unique(ctrl):
                rows = opp[ctrl == k]
                if self._random[k]:
                    if rand is None:  # one draw for the rows of every random opponent
                        rand = eng.random_actions(opp[self._random_arr[ctrl]])
                    actions[rows] = rand[rows]
                else:
                    actions[rows] = self._opponent_actions(int(k), rows, seat[rows])
            if self.records:
                self._log(opp, actions[opp])
            held = np.flatnonzero(who < 0)
            out = self._step_held(actions, held)
            self.agent_steps += opp.size
            self._end_deals(np.flatnonzero(out.done), out)
        raise RuntimeError(f"the opponents made {_MAX_OPPONENT_MOVES} moves in a row without a learner decision")

    def _step_held(self, actions: np.ndarray, held: np.ndarray):
        """``engine.step(actions)`` with the rows ``held`` left as they are (the learner is to
        act there)."""
        return self.engine.step(actions, hold=held if held.size else None)

    def _opponent_actions(self, k: int, rows: np.ndarray, phys: np.ndarray) -> np.ndarray:
        eng = self.engine
        opp = self.opponents[k]
        seats = (phys + self._shift[rows]) % self.num_players
        buf = eng.buffers()
        obs = buf.obs[rows]
        if self.match:
            obs = np.concatenate([obs, self._pieces[rows, seats % 2]], axis=1)
        batch = OpponentBatch(envs=rows, seats=seats, obs=obs, mask=buf.action_mask[rows].astype(bool),
                              rng=self._opp_rng,
                              _views=lambda: [seat_view(eng.state(int(b)), int(p)) for b, p in zip(rows, phys)])
        acts = np.asarray(opp.act(batch))
        who = f"opponent {getattr(opp, 'name', type(opp).__name__)!s}"
        if acts.shape != rows.shape:
            raise ValueError(f"{who} returned {acts.shape} actions for {rows.size} envs (one per env expected)")
        if acts.dtype.kind not in "iu":
            raise IllegalActionError(str(acts[0]), int(seats[0]), f"env {int(rows[0])}: expected integer action ids, "
                                     f"got dtype {acts.dtype}", agent=who)
        acts = acts.astype(np.int64, copy=False)
        self._check_legal(acts, rows, who)
        return acts

    def _end_deals(self, ended: np.ndarray, out) -> None:
        """Book the deals that ended in ``ended`` (rewards, matches, final observations,
        records), then deal the next deals there."""
        if ended.size == 0:
            return
        n = self.num_players
        res = out.result[ended]
        sh = self._shift[ended]
        side = (self.learner_side - sh) % n % 2  # the learner's side in engine seats
        score = res[:, _SCORE:_SCORE + 2]
        own = score[np.arange(ended.size), side]
        other = score[np.arange(ended.size), 1 - side]
        diff = (own - other).astype(np.float64) * self.reward_scale
        passed = res[:, 0] < 0
        results = None
        if self.match or self.records:
            results = [rotate_result(result_from_array(r), int(s), n) for r, s in zip(res, sh)]
        if self.records:
            self._records_of(ended, results)
        if not self.match:
            real = self._acted[ended]
            ends = ended[real]
            self._rew[ends] += diff[real]
            self._return[ends] += diff[real]
            self._finish(ends, extra={"score": np.stack([own, other], axis=1)[real], "passed_out": passed[real]})
        else:
            over = np.zeros(ended.size, dtype=bool)
            trunc = np.zeros(ended.size, dtype=bool)
            won = np.zeros(ended.size, dtype=bool)
            totals = np.zeros((ended.size, 2), dtype=np.int64)
            r = diff if self.deal_rewards else np.zeros(ended.size)
            for i, e in enumerate(ended):
                m = self._matches[e] = after_deal(self._matches[e], results[i])
                s = self.learner_side
                totals[i] = (m.totals[s], m.totals[1 - s])
                self._pieces[e] = self.encoder.match_pieces(m.totals)
                if m.over:
                    over[i] = True
                    won[i] = m.winner == s
                    r[i] += 1.0 if won[i] else -1.0
                elif m.num_deals >= self.max_deals:
                    trunc[i] = True
            self._rew[ended] += r
            self._return[ended] += r
            fin = over | trunc
            self._trunc[ended[trunc]] = True
            self._finish(ended[fin], extra={"totals": totals[fin], "won": won[fin]})
        self.engine.reset_rows(ended)
        self._new_deals(ended)

    def _finish(self, ends: np.ndarray, extra: dict[str, np.ndarray]) -> None:
        """Episodes that ended in ``ends`` (their rows still hold the finished deal)."""
        if ends.size == 0:
            return
        self._term[ends] = ~self._trunc[ends]
        fin = self._final.setdefault("final_info", {})
        B = self.num_envs
        for key, vals in {"length": self._length[ends], "return": self._return[ends], **extra}.items():
            if key not in fin:
                fin[key] = np.zeros((B, *vals.shape[1:]), dtype=vals.dtype)
                fin["_" + key] = np.zeros(B, dtype=bool)
            fin[key][ends] = vals
            fin["_" + key][ends] = True
        self._final["_final_info"] = self._final.get("_final_info", np.zeros(B, dtype=bool))
        self._final["_final_info"][ends] = True
        if self.final_obs:
            fo = self._final.setdefault("final_obs", np.full(B, None, dtype=object))
            self._final.setdefault("_final_obs", np.zeros(B, dtype=bool))[ends] = True
            zeros = np.zeros(self.num_actions, dtype=np.int8)
            zeros.flags.writeable = False  # one read-only all-zero mask shared by the final observations
            seats = self._last_seat[ends]
            obs = self.engine.observe(ends, seats)  # the finished deals, still in their rows
            if self.match:
                side = (seats + self._shift[ends]) % 2
                obs = np.concatenate([obs, self._pieces[ends, side]], axis=1)
            for i, e in enumerate(ends):
                fo[e] = {"observation": obs[i], "action_mask": zeros}
        self._new_episodes(ends)

    def _new_episodes(self, rows: np.ndarray) -> None:
        self._acted[rows] = False
        self._length[rows] = 0
        self._return[rows] = 0.0
        if self.match:
            for e in rows:
                self._matches[e] = None  # set at the match's first deal (_new_deals)
                self._pieces[e] = self.encoder.match_pieces(None)

    def _new_deals(self, rows: np.ndarray) -> None:
        """Rows that were just dealt: their seat rotation, opponents and history."""
        if rows.size == 0:
            return
        n = self.num_players
        if self._rotating:
            # the dealer from the observation's "dealer" piece (relative to the seat to act)
            buf = self.engine.buffers()
            rel = buf.obs[rows, self._o_dealer:self._o_dealer + n].argmax(axis=1)
            dealt = (buf.seat[rows] + rel) % n
            want = np.empty(rows.size, dtype=np.int64)
            for i, e in enumerate(rows):
                m = self._matches[e] if self.match else None
                if m is not None:
                    want[i] = m.dealer
                elif self.fixed_dealer is not None:
                    want[i] = self.fixed_dealer
                else:
                    want[i] = dealt[i]
                if self.match and m is None:
                    self._matches[e] = new_match(self.cfg, int(want[i]))
            self._shift[rows] = (want - dealt) % n
            self._ctrl_phys[rows] = self._ctrl[(np.arange(n)[None, :] + self._shift[rows, None]) % n]
        self._hist_len[rows] = 0
        for reset in self._resets:
            if reset is not None:
                reset(rows)

    # ------------------------------------------------------------------ outputs
    def _clear_outputs(self) -> None:
        self._rew[:] = 0.0
        self._term[:] = False
        self._trunc[:] = False
        self._final = {}
        self._deal_infos = {}

    def _observations(self) -> dict[str, np.ndarray]:
        buf = self.engine.buffers()
        if self.match:
            side = (buf.seat + self._shift) % 2
            self._obs[:, :self._d0] = buf.obs
            self._obs[:, self._d0:] = self._pieces[self._rows, side]
            if self.copy:
                return {"observation": self._obs.copy(), "action_mask": np.ascontiguousarray(buf.action_mask)}
            view = self._obs.view()
            view.flags.writeable = False
            return {"observation": view, "action_mask": buf.action_mask}
        if self.copy:
            return {"observation": buf.obs.copy(), "action_mask": np.ascontiguousarray(buf.action_mask)}
        return {"observation": buf.obs, "action_mask": buf.action_mask}

    def _infos(self) -> dict[str, Any]:
        infos: dict[str, Any] = {"seat": (self.engine.buffers().seat + self._shift) % self.num_players}
        infos.update(self._final)
        infos.update(self._deal_infos)
        return infos

    # ------------------------------------------------------------------ records
    def _log(self, rows: np.ndarray, actions: np.ndarray) -> None:
        if rows.size == 0:
            return
        if int(self._hist_len[rows].max()) >= self._hist.shape[1]:
            self._hist = np.concatenate([self._hist, np.zeros_like(self._hist)], axis=1)
        self._hist[rows, self._hist_len[rows]] = actions
        self._hist_len[rows] += 1

    def _records_of(self, ended: np.ndarray, results: list[DealResult]) -> None:
        n = self.num_players
        B = self.num_envs
        recs = self._deal_infos.setdefault("deal_record", np.full(B, None, dtype=object))
        jsons = self._deal_infos.setdefault("deal_result", np.full(B, None, dtype=object))
        for key in ("deal_record", "deal_result"):
            self._deal_infos.setdefault("_" + key, np.zeros(B, dtype=bool))[ended] = True
        describe = self.layout.describe
        rules = rules_to_record(self.cfg)
        for i, e in enumerate(ended):
            f = deal_fields(self.engine.state(int(e)))
            sh = int(self._shift[e])
            hands = [f["hands"][(s - sh) % n] for s in range(n)]
            rj = results[i].to_json(describe)
            recs[e] = {"format": FORMAT, "preset": self.cfg.preset, "rules": dict(rules),
                       "dealer": (f["dealer"] + sh) % n, "hands": hands, "stock": f["stock"],
                       "actions": [describe(int(a)) for a in self._hist[e, :self._hist_len[e]]], "result": rj}
            jsons[e] = rj


__all__ = ["BlotVectorEnv", "learner_seats", "rotate_result"]
