"""``BatchedEngine``: B deals of one preset stepped in lockstep by compiled code.

Each row of the batch is one deal in the ``int64`` row layout of ``_layout.py``; the
transitions (``_core``), the scoring (``_score``) and the observation encoder (``_obs``) are
numba ports of the reference engine, which stays the source of truth: the differential test
(``tests/test_batched_diff.py``) checks masks, observations, acting seats, rewards and results
step by step against ``blot_env.engine`` on every preset.

Step convention (Gymnasium's "same-step" autoreset, as in EnvPool and Pgx): ``step(actions)``
applies one action per row; a row whose deal ends reports ``done[b] = True``, its reward per
seat and its result, and with ``autoreset=True`` (the default) the returned observation,
mask and acting seat already belong to the next deal of that row. With ``autoreset=False``
a finished row goes idle: ``seat[b] = -1``, its observation is zeros, its mask allows action
0 only (so a masked policy never sees an all-zero mask; the action given for an idle row is
ignored), until :meth:`BatchedEngine.reset_rows` deals it again.

Dealing: deal ``k`` of row ``b`` is shuffled from ``(seed, b, k)`` by a counter-based
generator (SplitMix64), so a row's sequence of deals does not depend on the batch size or on
when other rows finish; the dealer is drawn from the same stream.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ..actions import layout_for
from ..cards import cards_of
from ..codes import PHASE_DONE
from ..engine import apply_action, deck_mask
from ..errors import ConfigError, IllegalActionError
from ..observation import privileged_size
from ..rules_config import RulesConfig, make_rules, with_overrides
from ..scoring import DealResult
from ..state import State
from . import _core, _obs, _score
from . import _layout as L
from ._jit import jit, jit_inline, stack_array
from ._single import NCONTRACT
from .convert import result_from_array, to_state

_U = nb.uint64
OBS_DTYPES = ("float32", "uint8")
"""Observation buffer dtypes of :class:`BatchedEngine` (``obs_dtype``)."""


class BatchStep(NamedTuple):
    """What :meth:`BatchedEngine.step` and :meth:`BatchedEngine.reset` return (B rows).

    The arrays are read-only views of the engine's own buffers, overwritten by the next call:
    copy what you keep (the engine relies on nobody else writing there).
    """

    obs: np.ndarray
    """``float32[B, D]``: the acting seat's observation (the AEC env's ``observation``); with
    ``obs_dtype="uint8"`` its integer numerators ``uint8[B, D]`` (value = numerator times
    ``ObservationEncoder.quantum``)."""
    action_mask: np.ndarray
    """``int8[B, A]``: legal actions of the acting seat (never all zero, see the module doc)."""
    seat: np.ndarray
    """``int64[B]``: the acting seat (0..n-1), or -1 for an idle row (``autoreset=False``)."""
    reward: np.ndarray
    """``float32[B, n]``: per seat, the reward of the deal that ended at this step (its team's
    score minus the opponents', score-sheet units times ``reward_scale``); 0 elsewhere."""
    done: np.ndarray
    """``bool[B]``: the row's deal ended at this step."""
    result: np.ndarray
    """``int64[B, 16]``: for rows with ``done``, the deal result: made (-1 passed out, 0, 1),
    tricks[2], card_points[2] (raw), combinations[2], score[2] (score-sheet units), per side;
    then the contract: seat, strain, value, kind (0 num, 1 kaput, 2 kaput_plus, 3 take,
    4 name), plus, double, call (-1 / 0 when passed out)."""


_card_buf = stack_array((32,))


@jit_inline
def _mix(x):
    x = x + _U(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
    return z ^ (z >> _U(31)), x


@jit
def _deal(S, b, K, seed, deal_no, deck, cards):
    """Shuffle deal ``deal_no[b]`` of row ``b`` and deal it (rules.md 2.1, 3, 4, 5.1, 6)."""
    key = _U(seed) ^ (_U(b) * _U(0xD1B54A32D192ED03)) ^ (_U(deal_no[b]) * _U(0xABC98388FB8FAC03))
    deal_no[b] += 1
    _deal_key(S, b, K, key, deck, cards)


@jit
def _deal_key(S, b, K, key, deck, cards):
    """Shuffle the deck (Fisher-Yates over a SplitMix64 stream started at ``key``), draw the
    dealer from the same stream, and deal row ``b``."""
    nd = deck.shape[0]
    for i in range(nd):
        cards[i] = deck[i]
    z, x = _mix(key)
    z, x = _mix(x ^ z)
    for i in range(nd - 1, 0, -1):
        z, x = _mix(x)
        j = np.int64((z >> _U(33)) % _U(i + 1))
        t = cards[i]
        cards[i] = cards[j]
        cards[j] = t
    z, x = _mix(x)
    dealer = np.int64((z >> _U(33)) % _U(K[L.K_N]))
    _core.deal_row(S, b, K, dealer, cards[:nd])


@jit
def _refresh(S, b, K, block, p0, p1, bstart, otabs, obs, mask, seats):
    seat = _core.current_seat(S, b, K)
    seats[b] = seat
    _core.legal_mask_row(S, b, K, block, p0, p1, bstart, mask[b])
    _obs.encode_row(S, b, K, otabs[0], otabs[1], otabs[2], otabs[3], otabs[4], seat, obs[b])


@jit
def _idle(b, obs, mask, seats):
    seats[b] = -1
    obs[b, :] = 0.0
    mask[b, :] = 0
    mask[b, 0] = 1


@jit
def _reset_rows(S, rows, keys, K, block, p0, p1, bstart, otabs, seed, deal_no, deck, obs, mask, seats):
    cards = _card_buf()
    for i in range(rows.shape[0]):
        b = rows[i]
        if keys.shape[0]:
            _deal_key(S, b, K, keys[i], deck, cards)
        else:
            _deal(S, b, K, seed, deal_no, deck, cards)
        _refresh(S, b, K, block, p0, p1, bstart, otabs, obs, mask, seats)


@jit
def _step(S, actions, K, block, p0, p1, bstart, otabs, seed, deal_no, deck, autoreset, scale,
          obs, mask, seats, rew, done, res):
    n = K[L.K_N]
    cards = _card_buf()
    for b in range(S.shape[0]):
        done[b] = False
        for s in range(n):
            rew[b, s] = 0.0
        if seats[b] < 0:
            continue
        _core.apply_legal(S, b, K, block, p0, p1, bstart, actions[b])  # checked against the mask
        if S[b, L.PHASE] == PHASE_DONE:
            _score.score_row(S, b, K, res[b])
            for i in range(NCONTRACT):
                res[b, _score.NRES + i] = S[b, L.C_SEAT + i]
            done[b] = True
            if res[b, _score.R_MADE] >= 0:
                score = res[b, _score.R_SCORE:_score.R_SCORE + 2]
                for s in range(n):
                    rew[b, s] = np.float32(_score.side_score_difference(score, s) * scale)
            if autoreset:
                _deal(S, b, K, seed, deal_no, deck, cards)
            else:
                _idle(b, obs, mask, seats)
                continue
        _refresh(S, b, K, block, p0, p1, bstart, otabs, obs, mask, seats)


@jit
def _observe_rows(S, rows, seats, K, otabs, out):
    for i in range(rows.shape[0]):
        _obs.encode_row(S, rows[i], K, otabs[0], otabs[1], otabs[2], otabs[3], otabs[4], seats[i], out[i])


@jit
def _first_illegal(mask, A, seats, actions):
    """The first busy row whose action is outside ``0..A-1`` or its mask, else -1."""
    for b in range(actions.shape[0]):
        if seats[b] >= 0:
            a = actions[b]
            if a < 0 or a >= A or mask[b, a] == 0:
                return b
    return -1


@jit
def _sample_legal(words, key, out):
    """Per row, a uniformly random legal action into ``out``. ``words`` is the mask buffer
    (int8[B, A8], A8 a multiple of 8, zero beyond A) seen as uint64[B, A8 / 8]: each byte is 0
    or 1, so a word's byte sum (its legal count) is ``(w * 0x0101010101010101) >> 56``."""
    for b in range(words.shape[0]):
        _sample_row(words, key, b, out)


@jit
def _sample_legal_rows(words, key, rows, out):
    """``_sample_legal`` for the rows ``rows`` only (each row draws what it would in a full call)."""
    for i in range(rows.shape[0]):
        _sample_row(words, key, rows[i], out)


@jit_inline
def _sample_row(words, key, b, out):
    W = words.shape[1]
    ones = _U(0x0101010101010101)
    cnt = 0
    for i in range(W):
        cnt += np.int64((words[b, i] * ones) >> _U(56))
    z, _ = _mix(_U(key) ^ (_U(b) * _U(0xD1B54A32D192ED03)))
    k = np.int64((z >> _U(33)) % _U(max(cnt, 1)))
    out[b] = 0
    for i in range(W):
        w = words[b, i]
        c = np.int64((w * ones) >> _U(56))
        if k < c:
            for j in range(8):
                if (w >> _U(8 * j)) & _U(1):
                    if k == 0:
                        out[b] = 8 * i + j
                        break
                    k -= 1
            break
        k -= c


class BatchedEngine:
    """B deals of one preset in lockstep, with observations and masks.

    Args:
        preset: a preset of :data:`blot_env.PRESETS` (ignored when ``rules`` is given).
        num_envs: B, rows in the batch (1..8192 is the tested range; any positive int works).
        obs_kind: ``"observation"``, ``"information_state"`` or ``"observation_voids"`` (:mod:`blot_env.observation`;
            the same layout and values as the AEC env, episode ``"deal"``).
        obs_dtype: ``"float32"`` (the env's values) or ``"uint8"``: the same observation as
            integer numerators, a quarter of the memory (value = numerator times
            :attr:`~blot_env.observation.ObservationEncoder.quantum`, exact; for learners that
            turn it into floats themselves).
        seed: seed of the deal generator (see the module doc); ``None`` draws one.
        autoreset: finished rows start their next deal in the same step (see module doc).
        reward_scale: multiplies the per-deal rewards.
        rules: a :class:`~blot_env.rules_config.RulesConfig` to use instead of ``preset``.
        **overrides: rules knobs to override on the preset (rules.md 8).

    Attributes:
        num_envs, num_players, num_actions (A), obs_size (D), cfg, S (``int64[B, ROW]`` rows).

    Raises:
        ValueError: ``num_envs < 1`` or a bad ``obs_kind``; ConfigError: bad preset or knob.
    """

    def __init__(self, preset: str = "bazar", num_envs: int = 1024, obs_kind: str = "observation",
                 seed: int | None = 0, autoreset: bool = True, reward_scale: float = 1.0,
                 rules: RulesConfig | None = None, obs_dtype: str = "float32", **overrides) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if rules is not None and not isinstance(rules, RulesConfig):
            raise ConfigError(f"rules must be a RulesConfig (blot_env.make_rules(...)), got {type(rules).__name__}")
        if not isinstance(autoreset, (bool, np.bool_)):
            raise ValueError(f"autoreset must be a bool, got {autoreset!r}")
        if not np.isfinite(reward_scale):
            raise ValueError(f"reward_scale must be a finite number, got {reward_scale!r}")
        if rules is not None:
            self.cfg = with_overrides(rules, overrides) if overrides else rules
        else:
            self.cfg = make_rules(preset, **overrides)
        problem = L.capacity_problem(self.cfg)
        if problem is not None:
            raise ConfigError(f"the batched engine cannot run this rules config: {problem}. "
                              "blot_env.env() runs it on the reference engine.")
        self.num_envs = B = int(num_envs)
        self.num_players = n = self.cfg.num_players
        self.layout = layout_for(self.cfg)
        self.num_actions = A = self.layout.num_actions
        self.obs_kind = obs_kind
        self._K = L.knobs(self.cfg)
        self._tables = L.action_tables(self.cfg)
        if obs_dtype not in OBS_DTYPES:
            raise ValueError(f"obs_dtype must be one of {OBS_DTYPES}, got {obs_dtype!r}")
        self.obs_dtype = obs_dtype
        self._otabs = _obs.obs_tables(self.cfg, obs_kind, quantized=obs_dtype == "uint8")
        self.obs_size = D = int(self._otabs[0][_obs.T_D])
        self.autoreset = bool(autoreset)
        self.reward_scale = float(reward_scale)
        self._deck = np.array(cards_of(deck_mask(self.cfg)), dtype=np.int64)
        self.S = np.zeros((B, L.ROW), dtype=np.int64)
        self._deal_no = np.zeros(B, dtype=np.int64)
        self._obs = np.zeros((B, D), dtype=np.dtype(obs_dtype))
        self.privileged_size = privileged_size(n)
        # the mask buffer is padded to a multiple of 8 columns so the sampler reads it by words;
        # the compiled code gets the whole (C-contiguous) buffer, callers the first A columns
        self._mask_full = np.zeros((B, (A + 7) // 8 * 8), dtype=np.int8)
        self._mask = self._mask_full[:, :A]
        self._seat = np.full(B, -1, dtype=np.int64)
        self._rew = np.zeros((B, n), dtype=np.float32)
        self._done = np.zeros(B, dtype=bool)
        self._res = np.zeros((B, 16), dtype=np.int64)
        self._actions = np.zeros(B, dtype=np.int64)
        self._draws = 0
        self.seed = 0
        self.reset(seed)

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> BatchStep:
        """Deal a new deal in every row; ``seed`` restarts the deal generator and the stream of
        :meth:`random_actions` (``None``: a fresh seed from the OS, kept in ``self.seed``).

        Raises:
            ValueError: ``seed`` is not an int in ``0 .. 2**64 - 1`` or ``None``.
        """
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 63))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        if seed >= 1 << 64:
            raise ValueError(f"seed must be below 2**64, got {seed!r}")
        self.seed = int(seed)
        self._deal_no[:] = 0
        self._draws = 0
        return self.reset_rows(np.arange(self.num_envs))

    def reset_rows(self, rows: ArrayLike, keys: ArrayLike | None = None) -> BatchStep:
        """Deal the next deal of each row in ``rows`` (ints 0..B-1); other rows are untouched.

        ``keys`` (``uint64[len(rows)]``, optional): shuffle each row's deal from its key instead
        of the engine's seeded stream (a caller that owns the randomness, e.g. a resumable
        trainer, draws the keys from its own generator).

        Raises:
            ValueError: ``rows`` not distinct integers in ``0..B-1``, or ``keys`` not one
                non-negative integer per row.
        """
        rows = self._rows(rows)
        if keys is None:
            keys = np.zeros(0, dtype=np.uint64)
        else:
            k = np.asarray(keys).reshape(-1)
            if k.shape != rows.shape:
                raise ValueError(f"keys must have one entry per row ({rows.size}), got {k.size}")
            if k.size and (k.dtype.kind not in "iu" or (k.dtype.kind == "i" and k.min() < 0)):
                raise ValueError(f"keys must be non-negative integers (uint64), got {k.dtype} {k[:4]}")
            keys = k.astype(np.uint64)
        self._done[rows] = False
        self._rew[rows] = 0.0
        block, p0, p1, bstart = self._tables
        _reset_rows(self.S, rows, keys, self._K, block, p0, p1, bstart, self._otabs, np.uint64(self.seed),
                    self._deal_no, self._deck, self._obs, self._mask_full, self._seat)
        return self._out()

    def step(self, actions: ArrayLike, hold: ArrayLike | None = None) -> BatchStep:
        """Apply one action per row (``int[B]``; ignored for idle rows).

        ``hold`` (optional row indices): rows to leave exactly as they are in this call, as if
        idle (no move, their observation, mask and seat buffers untouched; ``done`` and
        ``reward`` are 0 there). A caller whose seats to act differ by row (a learner at some
        seats, opponents at others) steps the opponents' rows and holds the learner's.

        Raises:
            ValueError: ``actions`` is not a 1-D integer array of length B, or bad ``hold``
                rows (integers in 0..B-1).
            IllegalActionError: an action is not legal in its row; the message names the row,
                the action, the seat and the rule (as the reference engine words it).
        """
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},) (one per row), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        held = None if hold is None else self._rows_any(hold)
        if held is not None and held.size:
            # held rows are made idle for this call (the compiled step skips seat -1 and
            # leaves those rows' buffers as they are) and given their seats back after it
            saved = self._seat[held].copy()
            self._seat[held] = -1
            try:
                self._step_checked(a)
            finally:
                self._seat[held] = saved
        else:
            self._step_checked(a)
        return self._out()

    def _step_checked(self, a: np.ndarray) -> None:
        bad = _first_illegal(self._mask_full, self.num_actions, self._seat, a)
        if bad >= 0:
            self._raise_illegal(bad, int(a[bad]))
        block, p0, p1, bstart = self._tables
        _step(self.S, a, self._K, block, p0, p1, bstart, self._otabs, np.uint64(self.seed), self._deal_no,
              self._deck, self.autoreset, self.reward_scale, self._obs, self._mask_full, self._seat,
              self._rew, self._done, self._res)

    def swap_obs_buffer(self, buf: np.ndarray) -> np.ndarray:
        """Write the observations into ``buf`` from now on and return the buffer used so far.

        Nothing is copied: a row's entry in ``buf`` holds its observation once the engine
        writes that row again (a :meth:`step` that moves it, :meth:`reset_rows`,
        :meth:`release_rows`). A caller that moves every row in a step gets a fresh array of
        observations per step without a copy (``BlotVectorEnv`` does, with ``copy=True``):
        the array returned stays the caller's, as the engine no longer writes into it.

        Args:
            buf: a C-contiguous, writeable ``[B, D]`` array of the engine's ``obs_dtype``.

        Raises:
            ValueError: ``buf`` of the wrong shape, dtype or layout.
        """
        old = self._obs
        ok = (isinstance(buf, np.ndarray) and buf.shape == old.shape and buf.dtype == old.dtype
              and buf.flags.c_contiguous and buf.flags.writeable)
        if not ok:
            got = f"{buf.dtype}{list(buf.shape)}" if isinstance(buf, np.ndarray) else type(buf).__name__
            raise ValueError(f"buf must be a C-contiguous writeable {old.dtype}{list(old.shape)} array, got {got}")
        self._obs = buf
        return old

    def observe(self, rows: ArrayLike, seats: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of ``seats[i]`` in row ``rows[i]``, for any seat and any row that
        holds a deal, finished deals included (``autoreset=False``: a row keeps its finished
        deal until :meth:`reset_rows`), as the reference ``ObservationEncoder`` gives it.

        Args:
            rows: ``int[k]`` row indices (repeats allowed).
            seats: ``int[k]`` absolute seats 0..n-1, one per row.
            out: optional ``[k, D]`` buffer of the engine's observation dtype.

        Returns:
            ``[k, D]`` observations (``obs_dtype``, float32 by default).

        Raises:
            ValueError: bad ``rows`` or ``seats``, or an ``out`` of the wrong shape or dtype.
        """
        r = self._rows_any(rows)
        s = np.asarray(seats).reshape(-1)
        if s.shape != r.shape or (s.size and s.dtype.kind not in "iu"):
            raise ValueError(f"seats must be one integer seat per row ({r.size}), got {s.dtype}{list(s.shape)}")
        s = s.astype(np.int64)
        if s.size and (s.min() < 0 or s.max() >= self.num_players):
            raise ValueError(f"seats must lie in 0..{self.num_players - 1}, got {s.min()}..{s.max()}")
        dt = self._obs.dtype
        if out is None:
            out = np.zeros((r.size, self.obs_size), dtype=dt)
        elif out.shape != (r.size, self.obs_size) or out.dtype != dt:
            raise ValueError(f"out must be {dt}[{r.size}, {self.obs_size}], got {out.dtype}{list(out.shape)}")
        if r.size:
            _observe_rows(self.S, r, s, self._K, self._otabs, out)
        return out

    def release_rows(self, rows: ArrayLike) -> BatchStep:
        """Make the rows in ``rows`` idle (``seat = -1``; see the module doc) until
        :meth:`reset_rows` deals them again. Their deals are abandoned without a result.

        Raises:
            ValueError: ``rows`` not distinct integers in ``0..B-1``.
        """
        rows = self._rows(rows)
        for b in rows:
            _idle(int(b), self._obs, self._mask_full, self._seat)
        return self._out()

    def buffers(self) -> BatchStep:
        """The current buffers (what the last call returned), without stepping."""
        return self._out()

    def random_actions(self, rows: ArrayLike | None = None) -> np.ndarray:
        """``int64[B]``: a uniformly random legal action per row (compiled; the random
        baseline at batch speed). Draws from the engine's seeded stream. The array is a buffer
        that the next call overwrites.

        ``rows`` (optional row indices): draw for these rows only; the other entries are left
        as they were. A row draws the same action as a full call would (the draw depends on
        the call's key and the row, not on the other rows).

        Raises:
            ValueError: bad ``rows`` (integers in 0..B-1).
        """
        self._draws += 1
        key = np.uint64((self.seed * 0x9E3779B97F4A7C15 + self._draws) % (1 << 64))
        if rows is None:
            _sample_legal(self._mask_full.view(np.uint64), key, self._actions)
        else:
            _sample_legal_rows(self._mask_full.view(np.uint64), key, self._rows_any(rows), self._actions)
        return self._actions

    def privileged(self, rows: ArrayLike | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """``uint8[len(rows), P]``: what the acting seat of each row cannot see (P =
        ``privileged_size`` = 32 n + 32), egocentric: for each relative seat ``r`` the cards seat
        ``(seat + r) % n`` holds now (``r = 0`` is the acting seat's own hand), then the cards
        still in the stock. Zeros for idle rows.

        **Hidden information**, for a critic that sees all hands during training (the
        "perfect-training, imperfect-execution" scheme); a policy must never read it. The
        reference twin is :func:`blot_env.observation.privileged_features`.

        Args:
            rows: row indices (default: all rows, in order).
            out: optional ``uint8[len(rows), P]`` buffer to write into.

        Raises:
            ValueError: bad ``rows`` or an ``out`` of the wrong shape or dtype.
        """
        r = np.arange(self.num_envs) if rows is None else self._rows_any(rows)
        if out is None:
            out = np.zeros((r.size, self.privileged_size), dtype=np.uint8)
        elif out.shape != (r.size, self.privileged_size) or out.dtype != np.uint8:
            raise ValueError(f"out must be uint8[{r.size}, {self.privileged_size}], got {out.dtype}{list(out.shape)}")
        _obs.privileged_rows(self.S, r, self._seat[r], self._K, out)
        return out

    def state(self, row: int) -> State:
        """The reference :class:`~blot_env.state.State` of a row (for Python agents and tests).

        Its ``history`` keeps the auction calls; play-phase action ids are ``-1`` placeholders.
        """
        return to_state(self.S[self._row(row)], self.cfg)

    def deal_result(self, row: int) -> DealResult | None:
        """The :class:`~blot_env.scoring.DealResult` of the deal that ended last in ``row``
        (from the last step's ``result``; ``None`` if it has not ended at that step)."""
        row = self._row(row)
        if not self._done[row]:
            return None
        return result_from_array(self._res[row])

    # ------------------------------------------------------------------ internals
    def _rows(self, rows: ArrayLike) -> np.ndarray:
        r = np.asarray(rows).reshape(-1)
        if r.size == 0:
            return np.zeros(0, dtype=np.int64)
        if r.dtype.kind not in "iu":
            raise ValueError(f"rows must be integer row indices, got dtype {r.dtype}")
        r = r.astype(np.int64)
        if r.min() < 0 or r.max() >= self.num_envs:
            raise ValueError(f"rows must lie in 0..{self.num_envs - 1}, got {r.min()}..{r.max()}")
        if np.unique(r).size != r.size:
            raise ValueError("rows must be distinct")
        return r

    def _rows_any(self, rows: ArrayLike) -> np.ndarray:
        """Row indices in ``0..B-1``, repeats allowed (read-only uses)."""
        r = np.asarray(rows).reshape(-1)
        if r.size and r.dtype.kind not in "iu":
            raise ValueError(f"rows must be integer row indices, got dtype {r.dtype}")
        r = r.astype(np.int64)
        if r.size and (r.min() < 0 or r.max() >= self.num_envs):
            raise ValueError(f"rows must lie in 0..{self.num_envs - 1}, got {r.min()}..{r.max()}")
        return r

    def _row(self, row: int) -> int:
        if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)) or not 0 <= row < self.num_envs:
            raise ValueError(f"row must be an int in 0..{self.num_envs - 1}, got {row!r}")
        return int(row)

    def _out(self) -> BatchStep:
        return BatchStep(*(_readonly(x) for x in (self._obs, self._mask, self._seat, self._rew, self._done,
                                                  self._res)))

    def _raise_illegal(self, row: int, action: int) -> None:
        seat = int(self._seat[row])
        try:
            apply_action(self.state(row), action)
        except IllegalActionError as e:
            raise IllegalActionError(e.action, seat, f"row {row}: {e.reason}", e.legal) from None
        raise IllegalActionError(str(action), seat, f"row {row}: the batched mask forbids it, "
                                 "but the reference engine accepts it (please report this)")


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v
