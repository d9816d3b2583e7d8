#!/usr/bin/env python
"""Masked PPO in TorchRL on a blot preset: self-play with one shared policy for both teams.

    python integrations/torchrl/masked_ppo.py [--preset bazar-app] [--iterations 10]
        [--frames-per-batch 2048] [--eval-boards 100]

TorchRL pieces: ``PettingZooWrapper(blot_env.env(...), use_mask=True)`` grouped per team
(:func:`blot_env.integrations.torchrl.make_env`), one ``ProbabilisticActor`` per group with
``MaskedCategorical`` over the group's ``action_mask`` (weights shared: self-play),
``Collector`` (TorchRL 0.14's name of ``SyncDataCollector``), ``ValueOperator`` and
``ClipPPOLoss``. The env is turn-based, so each batch is first reduced to the acting agents'
transitions with Monte-Carlo returns
(:func:`blot_env.integrations.torchrl.acting_transitions`); the advantage is that return minus
the critic's value (GAE with gamma = lambda = 1; rewards only come at the end of a deal).
Every iteration prints one JSON line; the greedy policy is evaluated against the random agent
on duplicate boards (agents.eval.arena, table points per deal).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from blot_env.integrations.torchrl import acting_transitions, make_env, team_group_map  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402


def build_nets(obs_dim: int, num_actions: int, hidden: int) -> tuple[nn.Module, nn.Module]:
    actor = MLP(in_features=obs_dim, out_features=num_actions, num_cells=[hidden, hidden], activation_class=nn.ReLU)
    critic = MLP(in_features=obs_dim, out_features=1, num_cells=[hidden, hidden], activation_class=nn.ReLU)
    return actor, critic


def group_policy(actor_net: nn.Module, groups: list[str]) -> TensorDictSequential:
    """Collection policy: per group, logits from the shared net and a masked categorical."""
    mods = []
    for g in groups:
        logits = TensorDictModule(actor_net, in_keys=[(g, "observation", "observation")], out_keys=[(g, "logits")])
        mods.append(ProbabilisticActor(logits, in_keys={"logits": (g, "logits"), "mask": (g, "action_mask")},
                                       out_keys=[(g, "action")], distribution_class=MaskedCategorical,
                                       return_log_prob=True))
    return TensorDictSequential(*mods)


def flat_actor(actor_net: nn.Module) -> ProbabilisticActor:
    """Loss-time actor over the flat acting transitions (keys observation, action_mask)."""
    logits = TensorDictModule(actor_net, in_keys=["observation"], out_keys=["logits"])
    return ProbabilisticActor(logits, in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                              distribution_class=MaskedCategorical, return_log_prob=True)


class GreedyNetAgent:
    """The actor net as an agents/base.py agent (greedy over legal actions) for agents.eval.arena."""

    def __init__(self, actor_net: nn.Module, rules, kind: str = "observation"):
        from blot_env.observation import ObservationEncoder

        self.net, self.enc, self.name = actor_net, ObservationEncoder(rules, kind), "torchrl-ppo"

    def reset(self) -> None:
        pass

    @torch.no_grad()
    def act(self, view, rng: np.random.Generator) -> int:
        legal = list(view.legal)
        logits = self.net(torch.from_numpy(self.enc.encode(view)).unsqueeze(0))[0]
        return int(legal[int(torch.argmax(logits[legal]))])


def evaluate(actor_net: nn.Module, preset: str, boards: int) -> dict[str, float]:
    from agents.eval.arena import evaluate as arena_evaluate
    from agents.eval.arena import load_suite
    from agents.registry import make_agent

    rules = make_rules(preset)
    m = arena_evaluate(GreedyNetAgent(actor_net, rules), "random", rules, load_suite(preset, "dev")[:boards],
                       seed=12345, factory=make_agent).metrics
    return {"eval_random_mean": round(float(m["mean_board_score"]), 2),
            "eval_random_ci95": [round(float(x), 2) for x in m["ci95"]]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="bazar-app")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--frames-per-batch", type=int, default=2048, help="env steps (all seats) per iteration")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--minibatch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--reward-scale", type=float, default=0.02)
    ap.add_argument("--eval-boards", type=int, default=100, help="duplicate boards vs random at the end (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    env = make_env(args.preset, seed=args.seed, reward_scale=args.reward_scale)
    groups = team_group_map(make_rules(args.preset).num_players)
    g0 = next(iter(groups))
    obs_dim = env.observation_spec[g0, "observation", "observation"].shape[-1]
    num_actions = int(env.full_action_spec[g0, "action"].space.n)
    actor_net, critic_net = build_nets(obs_dim, num_actions, args.hidden)
    policy = group_policy(actor_net, list(groups))
    critic = ValueOperator(critic_net, in_keys=["observation"])
    loss = ClipPPOLoss(flat_actor(actor_net), critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5,
                       normalize_advantage=True, loss_critic_type="l2")
    loss.set_keys(sample_log_prob="action_log_prob", value_target="return")
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    collector = Collector(env, policy, frames_per_batch=args.frames_per_batch,
                                  total_frames=args.frames_per_batch * args.iterations,
                                  auto_register_policy_transforms=False)
    rng = torch.Generator().manual_seed(args.seed)
    t0 = time.perf_counter()
    for it, batch in enumerate(collector, start=1):
        data = acting_transitions(batch, groups, extra_keys=("action_log_prob",))
        with torch.no_grad():
            critic(data)
        data["advantage"] = data["return"] - data["state_value"]
        stats = []
        for _ in range(args.epochs):
            perm = torch.randperm(len(data), generator=rng)
            for s in range(0, len(data), args.minibatch):
                mb = data[perm[s:s + args.minibatch]]
                out = loss(mb)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optim.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optim.step()
                stats.append([float(out[k].detach()) for k in ("loss_objective", "loss_critic", "entropy")])
        collector.update_policy_weights_()
        deals = int(batch.get(("next", "done")).sum())
        s = np.mean(stats, axis=0)
        print(json.dumps({"iteration": it, "frames": it * args.frames_per_batch, "deals": deals,
                          "decisions": len(data), "loss_objective": round(float(s[0]), 4),
                          "loss_critic": round(float(s[1]), 4),
                          "entropy": round(float(s[2]), 4), "wall_s": round(time.perf_counter() - t0, 1)}),
              flush=True)
    collector.shutdown()
    if args.eval_boards:
        print(json.dumps({"final_eval": evaluate(actor_net, args.preset, args.eval_boards),
                          "wall_s": round(time.perf_counter() - t0, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
