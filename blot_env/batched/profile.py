"""Where a step of the batched engine spends its time: its phases timed one by one.

:func:`step_phases` times, on a live :class:`~blot_env.batched.engine.BatchedEngine` under
random legal play, the pieces that one :meth:`~blot_env.batched.engine.BatchedEngine.step`
is made of, each over all B rows: the legality check of the actions, the legal-mask write
and the observation write of the acting seat (the two writes that every row does after its
move), and the step as a whole. The remainder of the step (the move itself, the scoring of
finished deals and the next deal) is the step less the three parts. The parts are timed by
the same compiled functions that the step calls, into scratch buffers of the engine's
shapes, so that the engine's own state and buffers are left as they were
(docs/batched.md, "Where the time goes").
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from . import _core, _obs
from ._jit import jit
from .engine import BatchedEngine, _first_illegal


@jit
def _masks(S, seats, K, block, p0, p1, bstart, out):
    for b in range(S.shape[0]):
        if seats[b] >= 0:
            _core.legal_mask_row(S, b, K, block, p0, p1, bstart, out[b])


@jit
def _observations(S, seats, K, otabs, out):
    for b in range(S.shape[0]):
        if seats[b] >= 0:
            _obs.encode_row(S, b, K, otabs[0], otabs[1], otabs[2], otabs[3], otabs[4], seats[b], out[b])


def step_phases(engine: BatchedEngine, calls: int = 50,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Nanoseconds per agent step (one row's move) of each phase of ``engine.step``.

    Steps ``engine`` ``calls`` times with :meth:`BatchedEngine.random_actions` (it moves the
    engine's deals on, as any stepping does) and, before each step, times the phases on the
    rows as they stand.

    Args:
        engine: the engine to measure (any preset, observation kind and dtype).
        calls: steps to time (``>= 1``); each covers all B rows.
        clock: the clock, in seconds (``time.process_time`` on a machine shared with other
            jobs).

    Returns:
        ``{"sample", "check", "mask", "observation", "move_score_deal", "step"}``: ns per
        agent step. ``sample`` is the random policy's draw (not part of the step); ``step`` is
        the whole :meth:`BatchedEngine.step` call (Python wrapper included); ``check``,
        ``mask`` and ``observation`` are the parts named in the module doc, and
        ``move_score_deal`` is ``step`` less those three.

    Raises:
        ValueError: ``calls < 1``.
    """
    if int(calls) != calls or calls < 1:
        raise ValueError(f"calls must be an integer >= 1, got {calls!r}")
    e = engine
    block, p0, p1, bstart = e._tables
    mask = np.zeros_like(e._mask_full)
    obs = np.zeros_like(e._obs)
    tot = dict.fromkeys(("sample", "check", "mask", "observation", "step"), 0.0)
    for warm in (True, False):  # the first pass compiles and warms the caches
        for _ in range(1 if warm else int(calls)):
            t0 = clock()
            a = e.random_actions()
            t1 = clock()
            _first_illegal(e._mask_full, e.num_actions, e._seat, a)
            t2 = clock()
            _masks(e.S, e._seat, e._K, block, p0, p1, bstart, mask)
            t3 = clock()
            _observations(e.S, e._seat, e._K, e._otabs, obs)
            t4 = clock()
            e.step(a)
            t5 = clock()
            if not warm:
                for k, dt in zip(tot, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                    tot[k] += dt
    per = 1e9 / (int(calls) * e.num_envs)
    out = {k: v * per for k, v in tot.items()}
    out["move_score_deal"] = out["step"] - out["check"] - out["mask"] - out["observation"]
    return out


__all__ = ["step_phases"]
