"""sb3-contrib MaskablePPO training speed: the SB3 VecEnv over the batched engine vs the single-deal env.

    python scripts/bench_sb3.py [--preset bazar] [--timesteps 16384] [--envs 64] [--epochs 1]
                                [--batch-size 2048] [--json]

Trains ``MaskablePPO("MlpPolicy", ...)`` (SB3's default network, two layers of 64; one torch
thread; rollouts of 2048 learner steps, ``--epochs`` epochs of minibatches of ``--batch-size``)
for ``--timesteps`` learner steps after a warm-up rollout, on

* ``vec``: :class:`blot_env.vector.sb3.BlotSB3VecEnv` with ``--envs`` envs (the batched
  engine; ``dict_observations=False``, so the same ``Box`` observation as the single env);
* ``gym_1``: one :class:`blot_env.gym_env.BlotGymEnv` (SB3 wraps it in a ``DummyVecEnv``);
* ``gym_n``: ``DummyVecEnv`` of ``--envs`` :class:`~blot_env.gym_env.BlotGymEnv` (the same batch
  of forward passes as ``vec``, the envs stepped one by one in Python).

The learner plays seat 0 and random opponents play the other seats in all three (the
single-deal env's setting). Prints, per env, learner steps per second of the whole ``learn``
call and the seconds spent collecting (``collect_rollouts``) and updating (``train``), then
the ratios of ``vec`` to ``gym_1`` and ``gym_n``: of the whole ``learn`` call (``*_vs_*``) and
of the collection alone (``collect_*_vs_*``). The update does not depend on the env, so the
end-to-end ratio shrinks as ``--epochs`` grows.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings


def _model(env, seed: int, epochs: int, batch_size: int):
    from sb3_contrib import MaskablePPO

    n_steps = max(2048 // env.num_envs, 1)
    return MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, n_epochs=epochs, seed=seed,
                       device="cpu", verbose=0)


def bench(kind: str, preset: str, envs: int, timesteps: int, epochs: int = 1, batch_size: int = 2048,
          seed: int = 0) -> tuple[float, float, float]:
    """(learner steps per second of ``MaskablePPO.learn``, seconds collecting, seconds
    updating) on one of the envs of the module doc."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from blot_env.gym_env import BlotGymEnv
    from blot_env.vector.sb3 import BlotSB3VecEnv

    if kind == "vec":
        env = BlotSB3VecEnv(num_envs=envs, preset=preset, seats=0, seed=seed, dict_observations=False)
    else:
        n = 1 if kind == "gym_1" else envs
        env = DummyVecEnv([lambda: BlotGymEnv(preset=preset, seat=0) for _ in range(n)])
        env.seed(seed)
    model = _model(env, seed, epochs, batch_size)
    model.learn(2048)  # warm-up: compile, allocations
    spent = {"collect_rollouts": 0.0, "train": 0.0}
    for name in spent:
        method = getattr(model, name)

        def timed(*a, _method=method, _name=name, **k):
            t = time.perf_counter()
            try:
                return _method(*a, **k)
            finally:
                spent[_name] += time.perf_counter() - t

        setattr(model, name, timed)
    t0 = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    return timesteps / (time.perf_counter() - t0), spent["collect_rollouts"], spent["train"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bazar")
    ap.add_argument("--timesteps", type=int, default=16384, help="learner steps per measurement")
    ap.add_argument("--envs", type=int, default=64, help="envs of the vector envs")
    ap.add_argument("--epochs", type=int, default=1, help="PPO epochs per rollout (n_epochs)")
    ap.add_argument("--batch-size", type=int, default=2048, help="PPO minibatch size")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch

    torch.set_num_threads(1)
    res: dict = {"preset": args.preset, "envs": args.envs, "timesteps": args.timesteps, "epochs": args.epochs,
                 "batch_size": args.batch_size}
    for kind in ("vec", "gym_n", "gym_1"):
        sps, collect, train = bench(kind, args.preset, args.envs, args.timesteps, args.epochs, args.batch_size)
        res[f"maskable_ppo_{kind}_steps_per_s"] = round(sps)
        res[f"{kind}_collect_s"] = round(collect, 2)
        res[f"{kind}_train_s"] = round(train, 2)
    v = res["maskable_ppo_vec_steps_per_s"]
    for base in ("gym_1", "gym_n"):
        res[f"vec_vs_{base}"] = round(v / res[f"maskable_ppo_{base}_steps_per_s"], 2)
        res[f"collect_vec_vs_{base}"] = round(res[f"{base}_collect_s"] / res["vec_collect_s"], 2)
    if args.json:
        print(json.dumps(res))
    else:
        for k, val in res.items():
            print(f"{k:>34}: {val}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
