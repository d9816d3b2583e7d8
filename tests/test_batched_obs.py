"""The batched observation encoder equals the reference ``ObservationEncoder`` on random-play states.

For every preset and every kind, states reached by uniform random play (auction, declaration
steps, play, done) are converted with ``convert.from_state`` and encoded for every seat by
``_obs.encode_batch``; each vector must equal ``ObservationEncoder(cfg, kind).encode(
seat_view(state, seat))`` exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from blot_env import PRESETS
from blot_env.batched import _obs
from blot_env.batched._layout import ROW, knobs
from blot_env.batched.convert import from_state
from blot_env.engine import apply_action, deal_random, legal_actions
from blot_env.observation import KINDS, ObservationEncoder
from blot_env.state import Phase
from blot_env.view import seat_view

N_STATES = 400


def _states(cfg, seed: int, want: int, keep: float = 0.35):
    """About ``want`` states of random-play deals, dealers rotating.

    Auction calls pass half of the time (so that many deals reach play and the declaration
    steps), declaration steps avoid their first choice (silence, concede, show) more often;
    every state is kept with probability ``keep`` (the first and last of a deal always).
    """
    rng = np.random.default_rng(seed)
    out = []
    deal = 0
    while len(out) < want:
        st = deal_random(cfg, rng, dealer=deal % cfg.num_players)
        deal += 1
        out.append(st)
        while st.phase != Phase.DONE:
            acts = legal_actions(st)
            if st.phase == Phase.AUCTION and acts[0] == 0 and rng.random() < 0.5:
                a = 0
            elif st.pending and len(acts) > 1 and rng.random() < 0.7:
                # declaration steps: announce / height trump / reveal / noshow
                a = int(acts[1 + rng.integers(len(acts) - 1)])
            else:
                a = int(acts[rng.integers(len(acts))])
            st = apply_action(st, a)
            if st.phase == Phase.DONE or rng.random() < keep:
                out.append(st)
    return out


@pytest.mark.parametrize("preset", list(PRESETS))
def test_encode_matches_reference(preset):
    cfg = PRESETS[preset]
    n = cfg.num_players
    states = _states(cfg, 1000 + list(PRESETS).index(preset), N_STATES)
    phases = {int(s.phase) for s in states}
    assert phases == {0, 1, 2}
    S = np.stack([from_state(s) for s in states])
    assert S.shape == (len(states), ROW)
    K = knobs(cfg)
    encs = {kind: ObservationEncoder(cfg, kind) for kind in KINDS}
    tables = {kind: _obs.obs_tables(cfg, kind) for kind in KINDS}
    views = [[seat_view(st, seat) for seat in range(n)] for st in states]
    for kind in KINDS:
        enc = encs[kind]
        tabs = tables[kind]
        assert tabs[0][_obs.T_D] == enc.size
        for seat in range(n):
            out = np.full((len(states), enc.size), 7.0, dtype=np.float32)
            _obs.encode_batch(S, np.full(len(states), seat, dtype=np.int64), K, *tabs, out)
            for i, st in enumerate(states):
                ref = enc.encode(views[i][seat])
                if not np.array_equal(out[i], ref):
                    bad = np.flatnonzero(out[i] != ref)
                    where = {p.name for p in enc.pieces for j in bad if p.offset <= j < p.offset + p.size}
                    pytest.fail(f"{preset} {kind} seat {seat} state {i} (phase {int(st.phase)}): "
                                f"pieces {sorted(where)} differ at {bad[:8].tolist()}")


def test_encode_row_single():
    """``encode_row`` on one row equals the batch's row (and zeroes stale output)."""
    cfg = PRESETS["bazar"]
    states = _states(cfg, 7, 60)
    S = np.stack([from_state(s) for s in states])
    K = knobs(cfg)
    tabs = _obs.obs_tables(cfg, "observation")
    D = int(tabs[0][_obs.T_D])
    seats = np.arange(len(states), dtype=np.int64) % cfg.num_players
    out2d = np.zeros((len(states), D), dtype=np.float32)
    _obs.encode_batch(S, seats, K, *tabs, out2d)
    one = np.ones(D, dtype=np.float32)
    for b in range(len(states)):
        _obs.encode_row(S, b, K, *tabs, int(seats[b]), one)
        assert np.array_equal(one, out2d[b])
