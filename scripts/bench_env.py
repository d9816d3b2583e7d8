"""Throughput of the env layers, one core: agent steps per second with random masked moves.

    python scripts/bench_env.py [--preset bazar] [--engine auto] [--steps 20000] [--batch 4096]
                                [--json] [--profile] [--batched-profile] [--no-vector] [--clock wall|cpu]

Keys: ``aec_steps_per_s`` (``blot_env.env()`` with PettingZoo's wrapper stack: ``last()``
with the observation, then ``step``), ``raw_env_steps_per_s`` (the unwrapped env, same loop;
both with the deal engine of ``--engine``, docs/env.md "Two engines"),
``deal_loop_steps_per_s`` (the same loop around that engine's deal object alone, no AEC
bookkeeping: the ceiling of the other two),
``engine_steps_per_s`` (the reference engine's ``legal_actions`` + ``apply_action`` only),
``seat_view_us`` and ``encode_us`` (per call), ``batched_steps_per_s``
(:class:`blot_env.batched.BatchedEngine` with B = ``--batch`` rows: a compiled random legal
action per row, then ``step``, which returns every row's observation and mask; agent steps =
rows x steps; numba runs on one thread), ``batched_uint8_steps_per_s`` (the same with
``obs_dtype="uint8"``, the observations' integer numerators that the PPO trainer collects),
``batched_<preset>_<dtype>_steps_per_s`` (both, for each preset of ``--batched-presets``),
``vector_env_steps_per_s`` (learner steps of
:class:`blot_env.vector.BlotVectorEnv` at B = ``--batch``, random learner actions, random
opponents at the other side's seats, Gymnasium's defaults: copied observations and final
observations), ``vector_env_agent_steps_per_s`` (the same run's moves of every seat, the unit of
``batched_steps_per_s``) and ``vector_env_vs_batched`` (their ratio), ``vector_env_fast_*``
(the same with ``copy=False, final_obs=False``), ``vector_env_vs_<name>_steps_per_s`` (learner
steps against each opponent of ``--vector-opponents``), ``sb3_vec_env_steps_per_s`` (learner steps of
:class:`blot_env.vector.sb3.BlotSB3VecEnv`, when Stable-Baselines3 is installed), and
``peer_<name>_steps_per_s`` for each peer that is
installed, with the same random-play loop (a uniformly random legal action, observations
computed at every step): OpenSpiel bridge and hearts through ``pyspiel`` (observation
tensors), OpenSpiel bridge through its Python RL environment
(``openspiel_bridge_rl_env``: ``open_spiel.python.rl_environment.Environment("bridge",
use_double_dummy_result=False)``, the interface OpenSpiel's RL agents use; each ``TimeStep``
carries every player's information-state tensor and legal actions, and the loop steps a random
one of ``time_step.observations["legal_actions"][current_player]``), RLCard's bridge and
PettingZoo classic Leduc and Limit Texas hold'em (``pip install -e ".[bench]"`` installs them
all). ``aec_vs_openspiel_rl_env`` is ``aec_steps_per_s`` over that rl_env peer's figure (same
run; left out when the peer is missing). Each figure is the best of ``--repeat`` runs (other
load only slows a run down; on a machine shared with other jobs ``--clock cpu`` times this
process's CPU time instead of the elapsed time). ``--profile`` prints the top functions of a cProfile run of the
wrapped loop (by internal time). ``--batched-profile`` adds ``batched_profile_<dtype>``: for
``--preset`` and both observation dtypes, nanoseconds per agent step of each phase of the
batched step (:func:`blot_env.batched.profile.step_phases`: the random draw, the legality
check, the mask write, the observation write, the move with scoring and re-dealing, the step
in all).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
import warnings

import numpy as np

from blot_env import make_rules
from blot_env.deal import ENGINES, make_deal
from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions
from blot_env.env import env, raw_env
from blot_env.observation import KINDS, ObservationEncoder
from blot_env.rules_config import PRESETS
from blot_env.view import seat_view

#: the clock of every figure: ``time.perf_counter`` (wall, default) or ``time.process_time``
#: (``--clock cpu``: this process's CPU time, which other jobs on a shared machine slow less)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def bench_aec(e, steps: int, seed: int = 0) -> float:
    """Agent steps per second of an AEC env under random masked play (episodes restarted)."""
    rng = np.random.default_rng(seed)
    done = 0
    e.reset(seed=seed)
    t0 = _clock()
    while done < steps:
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            done += 1
        e.reset()
    return done / (_clock() - t0)


def bench_deal_loop(cfg, kind: str, engine: str, steps: int, seed: int = 0) -> float:
    """Agent steps per second of :func:`bench_aec`'s loop around the env's deal object alone
    (:func:`blot_env.deal.make_deal`: ``deal_random``, ``start``, ``observe`` of the seat to
    act as an observation dict, ``flatnonzero`` of its mask, a random legal ``step``): what the
    AEC env costs without its bookkeeping and wrappers, a ceiling of ``aec_steps_per_s``."""
    rng = np.random.default_rng(seed)
    deal = make_deal(cfg, kind, engine=engine)
    n = cfg.num_players
    done = 0
    t0 = _clock()
    while done < steps:
        seat = deal.start(deal_random(cfg, rng, int(rng.integers(n))))
        while seat >= 0:
            o, m = deal.observe(seat)
            obs = {"observation": o, "action_mask": m}
            legal = np.flatnonzero(obs["action_mask"])
            seat = deal.step(int(legal[rng.integers(len(legal))]))
            done += 1
    return done / (_clock() - t0)


def bench_engine(cfg, steps: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    done = 0
    t0 = _clock()
    while done < steps:
        s = deal_random(cfg, rng, done % cfg.num_players)
        while not is_terminal(s):
            legal = legal_actions(s)
            s = apply_action(s, legal[rng.integers(len(legal))])
            done += 1
    return done / (_clock() - t0)


def bench_observation(cfg, kind: str, deals: int = 60, seed: int = 0) -> tuple[float, float]:
    """Microseconds per ``seat_view`` and per ``encode`` call over every seat of random deals."""
    rng = np.random.default_rng(seed)
    states = []
    for d in range(deals):
        s = deal_random(cfg, rng, d % cfg.num_players)
        while not is_terminal(s):
            states.append(s)
            s = apply_action(s, int(rng.choice(legal_actions(s))))
    pairs = [(s, o) for s in states for o in range(cfg.num_players)]
    t0 = _clock()
    views = [seat_view(s, o) for s, o in pairs]
    t1 = _clock()
    enc = ObservationEncoder(cfg, kind)
    t2 = _clock()
    for v in views:
        enc.encode(v)
    t3 = _clock()
    return (t1 - t0) / len(pairs) * 1e6, (t3 - t2) / len(pairs) * 1e6


def bench_batched(preset: str, kind: str, batch: int, steps: int, seed: int = 0, obs_dtype: str = "float32") -> float:
    """Agent steps per second of the batched engine at B = ``batch`` (compile excluded), with
    observations of ``obs_dtype`` (``"uint8"``: the integer numerators the trainer reads)."""
    from blot_env.batched import BatchedEngine

    eng = BatchedEngine(preset, num_envs=batch, obs_kind=kind, seed=seed, obs_dtype=obs_dtype)
    for _ in range(3):  # warm up: compile, caches
        eng.step(eng.random_actions())
    calls = max(steps // batch, 20)
    t0 = _clock()
    for _ in range(calls):
        eng.step(eng.random_actions())
    return calls * batch / (_clock() - t0)


def bench_vector(preset: str, kind: str, batch: int, steps: int, sb3: bool = False, **kwargs) -> tuple[float, float]:
    """(learner steps, agent steps) per second of :class:`blot_env.vector.BlotVectorEnv` (or,
    ``sb3``, of :class:`blot_env.vector.sb3.BlotSB3VecEnv`) at B = ``batch``: random legal learner
    actions from the engine's sampler, random opponents; compile excluded."""
    from blot_env.vector import BlotVectorEnv

    if sb3:
        from blot_env.vector.sb3 import BlotSB3VecEnv

        venv = BlotSB3VecEnv(num_envs=batch, preset=preset, observation_kind=kind, seed=0, **kwargs)
        env, step = venv.venv, (lambda a: venv.step(a))
        venv.reset()
    else:
        env = BlotVectorEnv(num_envs=batch, preset=preset, observation_kind=kind, **kwargs)
        step = env.step
        env.reset(seed=0)
    for _ in range(3):  # warm up: compile, caches
        step(env.engine.random_actions().copy())
    calls = max(steps // batch, 20)
    moves0 = env.agent_steps
    t0 = _clock()
    for _ in range(calls):
        step(env.engine.random_actions().copy())  # every env's learner is to act: legal learner moves
    dt = _clock() - t0
    return calls * batch / dt, (env.agent_steps - moves0) / dt


def _peer_openspiel(game: str, steps: int, seed: int = 0) -> float:
    """pyspiel directly: chance outcomes sampled, then per decision the acting player's
    observation tensor (the information-state tensor where the game has none, e.g. hearts),
    its legal actions and a random one."""
    import pyspiel

    # bridge: play the cards (the default scores the auction by a double-dummy solve instead)
    g = pyspiel.load_game(game, {"use_double_dummy_result": False} if game == "bridge" else {})
    tensor = "observation_tensor" if g.get_type().provides_observation_tensor else "information_state_tensor"
    rng = np.random.default_rng(seed)
    done = 0
    t0 = _clock()
    while done < steps:
        st = g.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outs = st.chance_outcomes()
                st.apply_action(outs[rng.integers(len(outs))][0])
                continue
            p = st.current_player()
            getattr(st, tensor)(p)
            legal = st.legal_actions(p)
            st.apply_action(legal[rng.integers(len(legal))])
            done += 1
    return done / (_clock() - t0)


def _peer_openspiel_rl_env(game: str, steps: int, seed: int = 0) -> float:
    """OpenSpiel's Python RL environment (``open_spiel.python.rl_environment.Environment``, the
    interface of its RL agents): chance outcomes sampled inside ``reset``/``step``, every
    player's information-state tensor and legal actions in each ``TimeStep``; per decision a
    random action of ``time_step.observations["legal_actions"][current_player]``."""
    from open_spiel.python import rl_environment

    # bridge: play the cards (game parameters are keyword arguments of Environment)
    params = {"use_double_dummy_result": False} if game == "bridge" else {}
    e = rl_environment.Environment(game, chance_event_sampler=rl_environment.ChanceEventSampler(seed=seed),
                                   **params)
    rng = np.random.default_rng(seed)
    done = 0
    t0 = _clock()
    while done < steps:
        ts = e.reset()
        while not ts.last():
            obs = ts.observations
            legal = obs["legal_actions"][obs["current_player"]]
            ts = e.step([legal[rng.integers(len(legal))]])
            done += 1
    return done / (_clock() - t0)


def _peer_rlcard(game: str, steps: int, seed: int = 0) -> float:
    import rlcard

    e = rlcard.make(game, config={"seed": seed})
    rng = np.random.default_rng(seed)
    done = 0
    t0 = _clock()
    while done < steps:
        state, _ = e.reset()
        while not e.is_over():
            legal = list(state["legal_actions"])
            state, _ = e.step(legal[rng.integers(len(legal))])
            done += 1
    return done / (_clock() - t0)


def _peer_pettingzoo(name: str, steps: int, seed: int = 0) -> float:
    import importlib

    mod = importlib.import_module(f"pettingzoo.classic.{name}")
    return bench_aec(mod.env(), steps, seed)


#: name -> (runner, argument); a peer whose package is missing is skipped
PEERS = {
    "openspiel_bridge": (_peer_openspiel, "bridge"),
    "openspiel_bridge_rl_env": (_peer_openspiel_rl_env, "bridge"),
    "openspiel_hearts": (_peer_openspiel, "hearts"),
    "rlcard_bridge": (_peer_rlcard, "bridge"),
    "pettingzoo_leduc_holdem": (_peer_pettingzoo, "leduc_holdem_v4"),
    "pettingzoo_texas_holdem": (_peer_pettingzoo, "texas_holdem_v4"),
}


def bench_peers(steps: int, repeat: int) -> dict[str, int]:
    """``{peer_<name>_steps_per_s: figure}`` for every installed peer. A missing peer is left
    out; one that fails is left out with a warning on stderr (the other figures still print)."""
    out = {}
    for name, (fn, arg) in PEERS.items():
        try:
            out[f"peer_{name}_steps_per_s"] = round(max(fn(arg, steps) for _ in range(repeat)))
        except ImportError:
            continue
        except Exception as e:  # a broken third-party peer must not end the benchmark
            print(f"peer {name} failed: {type(e).__name__}: {e}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bazar")
    ap.add_argument("--kind", default="observation", choices=list(KINDS))
    ap.add_argument("--engine", default="auto", choices=list(ENGINES), help="the env's deal engine")
    ap.add_argument("--steps", type=int, default=20_000, help="agent steps per measurement")
    ap.add_argument("--repeat", type=int, default=3, help="measurements per figure; the best is kept")
    ap.add_argument("--batch", type=int, default=4096, help="rows B of the batched engine")
    ap.add_argument("--batched-steps", type=int, default=2_000_000, help="agent steps of the batched measurement")
    ap.add_argument("--batched-presets", default="", metavar="all|P,P",
                    help="also time the batched engine on these presets (all: every preset), float32 and uint8 "
                         "observations: batched_<preset>_<dtype>_steps_per_s")
    ap.add_argument("--no-peers", action="store_true", help="skip the peer environments")
    ap.add_argument("--no-vector", action="store_true", help="skip the vector envs (blot_env.vector)")
    ap.add_argument("--vector-steps", type=int, default=1_000_000, help="learner steps of each vector measurement")
    ap.add_argument("--vector-opponents", default="",
                    help="comma-separated opponents of BlotVectorEnv to time (names of docs/vector.md "
                         "'Opponents', e.g. random,L0,rules,ppo): vector_env_vs_<name>_steps_per_s")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--profile", action="store_true", help="cProfile the wrapped AEC loop")
    ap.add_argument("--batched-profile", action="store_true",
                    help="time the phases of the batched step (ns per agent step): batched_profile_<dtype>")
    ap.add_argument("--clock", default="wall", choices=list(CLOCKS),
                    help="wall: elapsed time; cpu: this process's CPU time (a machine shared with other jobs)")
    args = ap.parse_args(argv)
    global _clock
    _clock = CLOCKS[args.clock]
    warnings.simplefilter("ignore")
    cfg = make_rules(args.preset)
    r = range(max(args.repeat, 1))
    res = {
        "preset": args.preset,
        "observation_kind": args.kind,
        "engine": raw_env(args.preset, engine=args.engine).engine,
        "aec_steps_per_s": round(max(bench_aec(env(args.preset, observation_kind=args.kind, engine=args.engine),
                                               args.steps) for _ in r)),
        "raw_env_steps_per_s": round(max(bench_aec(raw_env(args.preset, observation_kind=args.kind,
                                                           engine=args.engine), args.steps) for _ in r)),
        "deal_loop_steps_per_s": round(max(bench_deal_loop(cfg, args.kind, args.engine, args.steps) for _ in r)),
        "engine_steps_per_s": round(max(bench_engine(cfg, args.steps) for _ in r)),
    }
    res["batched_steps_per_s"] = round(max(bench_batched(args.preset, args.kind, args.batch, args.batched_steps)
                                           for _ in r))
    res["batched_uint8_steps_per_s"] = round(max(bench_batched(args.preset, args.kind, args.batch,
                                                               args.batched_steps, obs_dtype="uint8") for _ in r))
    res["batch"] = args.batch
    presets = sorted(PRESETS) if args.batched_presets == "all" else list(filter(None, args.batched_presets.split(",")))
    for p in presets:
        for dt in ("float32", "uint8"):
            res[f"batched_{p}_{dt}_steps_per_s"] = round(max(bench_batched(p, args.kind, args.batch,
                                                                           args.batched_steps, obs_dtype=dt)
                                                              for _ in r))
    if args.batched_profile:
        from blot_env.batched import BatchedEngine
        from blot_env.batched.profile import step_phases

        for dt in ("float32", "uint8"):
            eng = BatchedEngine(args.preset, num_envs=args.batch, obs_kind=args.kind, obs_dtype=dt)
            calls = max(args.batched_steps // args.batch, 20)
            runs = [step_phases(eng, calls, clock=_clock) for _ in r]
            best = min(runs, key=lambda p: p["step"])
            res[f"batched_profile_{dt}"] = {k: round(v, 1) for k, v in best.items()}
    if not args.no_vector:
        for name, kw in (("vector_env", {}), ("vector_env_fast", {"copy": False, "final_obs": False})):
            ls, ags = max(bench_vector(args.preset, args.kind, args.batch, args.vector_steps, **kw) for _ in r)
            res[f"{name}_steps_per_s"] = round(ls)
            res[f"{name}_agent_steps_per_s"] = round(ags)
            res[f"{name}_vs_batched"] = round(ags / res["batched_steps_per_s"], 3)
        if args.vector_opponents:
            try:
                import torch  # a policy-file opponent's forward passes: one thread, as the engine
            except ImportError:
                pass
            else:
                torch.set_num_threads(1)
        for name in filter(None, args.vector_opponents.split(",")):
            ls, _ = max(bench_vector(args.preset, args.kind, args.batch, args.vector_steps, opponents=name)
                        for _ in r)
            res[f"vector_env_vs_{name}_steps_per_s"] = round(ls)
        try:
            import stable_baselines3  # noqa: F401
        except ImportError:
            pass
        else:
            res["sb3_vec_env_steps_per_s"] = round(max(bench_vector(args.preset, args.kind, args.batch,
                                                                    args.vector_steps, sb3=True)[0] for _ in r))
    if not args.no_peers:
        res.update(bench_peers(args.steps, len(r)))
        peer = res.get("peer_openspiel_bridge_rl_env_steps_per_s")
        if peer:
            res["aec_vs_openspiel_rl_env"] = round(res["aec_steps_per_s"] / peer, 2)
    sv, en = min(bench_observation(cfg, args.kind) for _ in r)
    res["seat_view_us"] = round(sv, 2)
    res["encode_us"] = round(en, 2)
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:>22}: {v}")
    if args.profile:
        prof = cProfile.Profile()
        e = env(args.preset, observation_kind=args.kind, engine=args.engine)
        prof.enable()
        bench_aec(e, args.steps // 2)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        print(buf.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
