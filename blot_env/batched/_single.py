"""One deal in compiled code, for the AEC env (:class:`blot_env.env.raw_env`).

The env keeps its live deal as one row (``int64[1, ROW]``, the layout of ``_layout.py``) and
makes **one** compiled call per step: :func:`step_one` applies the action (checked, as
``engine.apply_action``), and then either scores the finished deal (``_score.score_row``) or
writes the next seat's legal mask and observation. The row functions are those of the batched
engine (``_core``, ``_obs``, ``_score``), which ``tests/test_batched_diff.py`` checks move for
move against the reference engine.

Numba's dispatch costs about 50 ns per array argument, so every table the compiled code reads
travels in two flat arrays built once per env by :func:`tables`:

- ``T`` (``int64``): the knobs ``K`` (``NK``), then ``block``, ``p0``, ``p1`` (``A`` each) and
  ``bstart`` (``NB``) of ``_layout.action_tables``, then ``ti`` (``NTI``), ``grid``, ``hpos``
  (``A`` each) and ``cf_idx`` (``A x MAXF``, row-major) of ``_obs.obs_tables``;
- ``F`` (``float32``): ``cf_val`` (``A x MAXF``, row-major).

``tail`` (``float32[2, TT]``) is appended to every observation after the ``D`` entries of the
per-deal encoder: row ``seat % 2`` (the observer's side). The env passes the match pieces there
(``TT = 4``) in match episodes and an empty ``float32[2, 0]`` otherwise.
"""

from __future__ import annotations

import numpy as np

from ..codes import PHASE_DONE
from ..rules_config import RulesConfig
from . import _core, _obs, _score
from . import _layout as L
from ._jit import jit, jit_inline

DEAL_OVER = -10
"""Returned by :func:`step_one` when the action ended the deal (the result is in ``res``)."""
NCONTRACT = 7
"""Contract fields after the score in a result vector: seat, strain, value, kind, plus, double, call."""
NRESULT = _score.NRES + NCONTRACT
"""Length of a result vector (``int64[NRESULT]``)."""


def tables(cfg: RulesConfig, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """``(T, F)``: the flat ``int64`` and ``float32`` tables of ``(cfg, kind)`` (module doc)."""
    K = L.knobs(cfg)
    block, p0, p1, bstart = L.action_tables(cfg)
    ti, cf_idx, cf_val, grid, hpos = _obs.obs_tables(cfg, kind)
    T = np.concatenate([K, block, p0, p1, bstart, ti, grid, hpos, cf_idx.ravel()]).astype(np.int64)
    return np.ascontiguousarray(T), np.ascontiguousarray(cf_val.ravel(), dtype=np.float32)


@jit_inline
def _unpack(T, F):
    A = T[L.K_NUM_ACTIONS]
    o = L.NK
    K = T[0:o]
    block = T[o:o + A]
    o += A
    p0 = T[o:o + A]
    o += A
    p1 = T[o:o + A]
    o += A
    bstart = T[o:o + L.NB]
    o += L.NB
    ti = T[o:o + _obs.NTI]
    o += _obs.NTI
    grid = T[o:o + A]
    o += A
    hpos = T[o:o + A]
    o += A
    cf_idx = T[o:o + A * _obs.MAXF].reshape((A, _obs.MAXF))
    cf_val = F[0:A * _obs.MAXF].reshape((A, _obs.MAXF))
    return K, block, p0, p1, bstart, ti, grid, hpos, cf_idx, cf_val


@jit
def _encode(S, K, ti, cf_idx, cf_val, grid, hpos, tail, seat, obs):
    _obs.encode_row(S, 0, K, ti, cf_idx, cf_val, grid, hpos, seat, obs)
    D = ti[_obs.T_D]
    side = seat & 1
    for j in range(tail.shape[1]):
        obs[D + j] = tail[side, j]


@jit
def _refresh(S, T, F, tail, obs, mask):
    K, block, p0, p1, bstart, ti, grid, hpos, cf_idx, cf_val = _unpack(T, F)
    seat = _core.current_seat(S, 0, K)
    _core.legal_mask_row(S, 0, K, block, p0, p1, bstart, mask)
    _encode(S, K, ti, cf_idx, cf_val, grid, hpos, tail, seat, obs)
    return seat


@jit
def start_one(S, T, F, tail, dealer, cards, obs, mask):
    """Deal row 0 of ``S`` (``_core.deal_row``: ``cards`` as ``engine.deal_random`` lays them out,
    seat ``s`` holding ``cards[s*k:(s+1)*k]``, the stock after them) and write the first seat's
    mask (``int8[A]``) and observation (``float32[D + TT]``). Returns that seat."""
    K = T[0:L.NK]
    _core.deal_row(S, 0, K, dealer, cards)
    return _refresh(S, T, F, tail, obs, mask)


@jit
def step_one(S, T, F, tail, a, obs, mask, res):
    """The seat to act in row 0 takes action ``a``.

    Returns a negative ``_core.ERR_*`` code (the deal is over, ``a`` outside ``0..A-1``, or
    ``a`` illegal; the row is untouched), :data:`DEAL_OVER` (``res`` then holds the result:
    ``_score.score_row``'s made, tricks[2], card points[2], combinations[2], score[2], then the
    contract's seat, strain, value, kind, plus, double, call), or the next seat to act, whose
    mask and observation are then written to ``mask`` and ``obs``.
    """
    K, block, p0, p1, bstart = _unpack(T, F)[:5]
    err = _core.apply_row(S, 0, K, block, p0, p1, bstart, a)
    if err < 0:
        return err
    if S[0, L.PHASE] == PHASE_DONE:
        _write_result(S, K, res)
        return DEAL_OVER
    return _refresh(S, T, F, tail, obs, mask)


@jit
def _write_result(S, K, res):
    _score.score_row(S, 0, K, res)
    for i in range(NCONTRACT):
        res[_score.NRES + i] = S[0, L.C_SEAT + i]


@jit
def result_one(S, T, res):
    """The result of the finished deal in row 0 into ``res`` (``int64[NRES + 7]``, the layout
    :func:`step_one` writes). Returns 0, or ``_core.ERR_DONE``'s opposite, -1, while the deal
    is still running (``res`` untouched)."""
    if S[0, L.PHASE] != PHASE_DONE:
        return -1
    _write_result(S, T[0:L.NK], res)
    return 0


@jit
def seat_one(S, T):
    """The seat to act in row 0 (-1: the deal is over)."""
    return _core.current_seat(S, 0, T[0:L.NK])


@jit
def apply_many(S, T, F, actions):
    """Apply ``actions`` (``int64[m]``) to row 0 in turn, with no observation or mask written.
    Returns how many were applied: ``m``, or the index of the first one that is illegal (or
    comes after the end of the deal); the row then holds the state before it."""
    K, block, p0, p1, bstart = _unpack(T, F)[:5]
    for i in range(actions.shape[0]):
        if _core.apply_row(S, 0, K, block, p0, p1, bstart, actions[i]) < 0:
            return i
    return actions.shape[0]


@jit
def observe_one(S, T, F, tail, seat, with_mask, obs, mask):
    """Observation of any ``seat`` into ``obs``; ``mask`` gets the legal mask when ``with_mask``
    and ``seat`` is to act, else zeros. Returns the seat to act (-1: the deal is over)."""
    K, block, p0, p1, bstart, ti, grid, hpos, cf_idx, cf_val = _unpack(T, F)
    _encode(S, K, ti, cf_idx, cf_val, grid, hpos, tail, seat, obs)
    to_act = _core.current_seat(S, 0, K)
    if with_mask and to_act == seat:
        _core.legal_mask_row(S, 0, K, block, p0, p1, bstart, mask)
    else:
        for i in range(mask.shape[0]):
            mask[i] = 0
    return to_act


@jit
def replay_one(S, T, F, dealer, cards, actions):
    """Deal row 0 of ``S`` (``int64[>=1, ROW]``) as :func:`start_one` does, from ``cards``
    (``int64[deck]``, hands then stock), and apply ``actions`` (``int64[m]``, action ids) in
    turn, with no observation or mask written. Returns how many were applied: ``m``, or the
    index of the first one that is illegal (or comes after the end of the deal); the row
    then holds the state before it."""
    _core.deal_row(S, 0, T[0:L.NK], dealer, cards)
    return apply_many(S, T, F, actions)


__all__ = ["DEAL_OVER", "NRESULT", "apply_many", "observe_one", "replay_one", "result_one", "seat_one", "start_one",
           "step_one", "tables"]
