"""Masked PPO on the vector env, CleanRL style: one file, plain torch, no project trainer.

Trains one partnership (seats 0 and 2) of a preset against uniformly random opponents on
``blot_env.vector.BlotVectorEnv`` (the batched engine: all envs step in one compiled call),
then plays the greedy policy against ``random`` on duplicate boards of the preset's frozen
test suite (``agents.eval.arena.evaluate``; each board is dealt twice, the sides swapped) and
prints the mean per deal with its 95% confidence interval. docs/vector.md shows a run.

    python integrations/cleanrl/ppo_masked_vector.py --time-limit 600 --eval-boards 1000 \
        --out runs/cleanrl_bazar

Writes ``OUT/curve.csv`` (one row per update), ``OUT/curve.png`` (the learning curve),
``OUT/policy.pt`` (the network's state dict and arguments) and ``OUT/result.json``.

The algorithm is CleanRL's ``ppo.py`` with invalid-action masking (the logits of illegal
actions set to a large negative number, the entropy taken over legal actions only): GAE over
``num_steps`` steps of ``num_envs`` envs, clipped surrogate, value loss, entropy bonus, Adam
with a linearly decaying learning rate. The vector env resets finished episodes in the same
step (``AutoresetMode.SAME_STEP``), CleanRL's convention: ``dones[t]`` marks that the
observation of step ``t`` starts a new episode. Rewards are the learner side's deal score
difference (table points) times ``--reward-scale``; an episode is one deal, so nothing is
truncated and no final observation is needed (``final_obs=False``).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
from torch import nn

from blot_env.vector import BlotVectorEnv


@dataclass
class Args:
    preset: str = "bazar"
    """rules preset"""
    seed: int = 1
    num_envs: int = 256
    """envs stepped together"""
    num_steps: int = 16
    """steps per env per update (the rollout is num_envs * num_steps learner decisions)"""
    total_timesteps: int = 50_000_000
    """learner decisions to train for (the time limit usually stops first)"""
    time_limit: float = 600.0
    """seconds of training (setup included, evaluation excluded): no update starts that would
    end past it, judged by the last one's duration; 0: no limit"""
    learning_rate: float = 5e-4
    anneal_lr: bool = True
    gamma: float = 1.0
    """discount (rewards come at the end of a deal of at most ~40 decisions)"""
    gae_lambda: float = 0.95
    num_minibatches: int = 2
    update_epochs: int = 2
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    reward_scale: float = 0.02
    """reward per table point"""
    threads: int = 2
    """torch threads"""
    eval_boards: int = 1000
    """duplicate boards against random at the end (0: none)"""
    eval_split: str = "test"
    out: str = "runs/cleanrl_ppo_masked_vector"


def parse_args(argv: list[str] | None = None) -> Args:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type == "bool":
            ap.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default, metavar="BOOL")
        else:
            ap.add_argument(flag, type={"int": int, "float": float, "str": str}[f.type], default=f.default)
    return Args(**vars(ap.parse_args(argv)))


class Agent(nn.Module):
    """An MLP trunk shared by the policy head (one logit per action id) and the value head."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: int) -> None:
        super().__init__()

        def layer(i: int, o: int, std: float = np.sqrt(2)) -> nn.Linear:
            lin = nn.Linear(i, o)
            nn.init.orthogonal_(lin.weight, std)
            nn.init.zeros_(lin.bias)
            return lin

        self.trunk = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh())
        self.policy_head = layer(hidden, num_actions, 0.01)
        self.value_head = layer(hidden, 1, 1.0)

    def actor(self, x: torch.Tensor) -> torch.Tensor:
        return self.policy_head(self.trunk(x))

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.value_head(self.trunk(x)).squeeze(-1)

    def act(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        """(action, log prob, entropy over the legal actions, value)."""
        h = self.trunk(x)
        logits = self.policy_head(h).masked_fill(~mask, -1e8)
        logp_all = torch.log_softmax(logits, dim=-1)
        if action is None:
            action = torch.distributions.Categorical(logits=logits).sample()
        logp = logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        entropy = -(logp_all.exp() * torch.where(mask, logp_all, torch.zeros_like(logp_all))).sum(-1)
        return action, logp, entropy, self.value_head(h).squeeze(-1)


def train(args: Args) -> tuple[Agent, list[dict], float]:
    t0 = time.perf_counter()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    envs = BlotVectorEnv(num_envs=args.num_envs, preset=args.preset, opponents="random",
                         reward_scale=args.reward_scale, final_obs=False, copy=False)
    D, A, N, T = envs.obs_size, envs.num_actions, args.num_envs, args.num_steps
    agent = Agent(D, A, args.hidden)
    opt = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
    batch = N * T
    minibatch = batch // args.num_minibatches
    updates = max(args.total_timesteps // batch, 1)

    obs = torch.zeros((T, N, D))
    masks = torch.zeros((T, N, A), dtype=torch.bool)
    actions = torch.zeros((T, N), dtype=torch.long)
    logps = torch.zeros((T, N))
    rewards = torch.zeros((T, N))
    dones = torch.zeros((T, N))
    values = torch.zeros((T, N))

    o, _ = envs.reset(seed=args.seed)
    next_obs = torch.from_numpy(np.array(o["observation"]))
    next_mask = torch.from_numpy(np.array(o["action_mask"], dtype=bool))
    next_done = torch.zeros(N)
    curve: list[dict] = []
    step = 0
    last = 0.0  # seconds of the last update: stop before one would end past the time limit
    for update in range(1, updates + 1):
        started = time.perf_counter()
        if args.time_limit and started - t0 + last > args.time_limit:
            break
        if args.anneal_lr:
            opt.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1.0) / updates)
        ep_returns = []
        for t in range(T):
            step += N
            obs[t], masks[t], dones[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                a, logp, _, v = agent.act(next_obs, next_mask)
            actions[t], logps[t], values[t] = a, logp, v
            o, r, term, trunc, info = envs.step(a.numpy())
            done = term | trunc
            rewards[t] = torch.from_numpy(r.astype(np.float32))
            next_obs = torch.from_numpy(np.array(o["observation"]))
            next_mask = torch.from_numpy(np.array(o["action_mask"], dtype=bool))
            next_done = torch.from_numpy(done.astype(np.float32))
            if done.any():
                ep_returns.extend((info["final_info"]["return"][done] / args.reward_scale).tolist())
        with torch.no_grad():  # GAE (CleanRL's ppo.py)
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rewards)
            gae = torch.zeros(N)
            for t in reversed(range(T)):
                if t == T - 1:
                    nonterminal, nextv = 1.0 - next_done, next_value
                else:
                    nonterminal, nextv = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextv * nonterminal - values[t]
                adv[t] = gae = delta + args.gamma * args.gae_lambda * nonterminal * gae
            returns = adv + values
        b_obs, b_masks = obs.reshape(batch, D), masks.reshape(batch, A)
        b_actions, b_logps = actions.reshape(batch), logps.reshape(batch)
        b_adv, b_returns = adv.reshape(batch), returns.reshape(batch)
        for _ in range(args.update_epochs):
            perm = torch.randperm(batch)
            for start in range(0, batch, minibatch):
                mb = perm[start:start + minibatch]
                _, newlogp, entropy, newv = agent.act(b_obs[mb], b_masks[mb], b_actions[mb])
                ratio = (newlogp - b_logps[mb]).exp()
                mb_adv = b_adv[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * clipped).mean()
                v_loss = 0.5 * ((newv - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                opt.step()
        row = {"update": update, "learner_steps": step, "seconds": round(time.perf_counter() - t0, 1),
               "episodes": len(ep_returns), "mean_score_diff": float(np.mean(ep_returns)) if ep_returns else None}
        curve.append(row)
        last = time.perf_counter() - started
        if update % 10 == 0 or update == 1:
            print(f"update {update} steps {step} t={row['seconds']}s episodes {row['episodes']} "
                  f"mean score difference {row['mean_score_diff']:+.1f} tp", flush=True)
    return agent, curve, time.perf_counter() - t0


def evaluate(agent: Agent, args: Args) -> dict:
    """Duplicate boards of the frozen suite against ``random`` (the project's evaluation)."""
    from agents.base import BaseAgent
    from agents.eval.arena import evaluate as duplicate
    from agents.eval.arena import load_suite
    from agents.registry import make_agent
    from blot_env import make_rules
    from blot_env.observation import ObservationEncoder

    cfg = make_rules(args.preset)
    encoder = ObservationEncoder(cfg, "observation")

    class Greedy(BaseAgent):
        name = "cleanrl-ppo"

        @torch.no_grad()
        def act(self, view, rng):
            logits = agent.actor(torch.from_numpy(encoder.encode(view)).unsqueeze(0))[0]
            legal = list(view.legal)
            return legal[int(torch.argmax(logits[legal]))]

    deals = load_suite(args.preset, args.eval_split)[:args.eval_boards]
    ev = duplicate(Greedy(), "random", cfg, deals, seed=args.seed, factory=make_agent)
    m = ev.metrics
    return {"boards": m["boards"], "mean_per_deal": m["mean_board_score"], "ci95": m["ci95"],
            "board_win_rate": m["board_win_rate"], "seconds": round(ev.seconds, 1) if hasattr(ev, "seconds") else None}


def plot(curve: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = np.array([r["learner_steps"] for r in curve if r["mean_score_diff"] is not None]) / 1e6
    ys = np.array([r["mean_score_diff"] for r in curve if r["mean_score_diff"] is not None])
    k = max(1, len(ys) // 30)
    smooth = np.convolve(ys, np.ones(k) / k, mode="valid")
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    ax.plot(xs, ys, color="0.8", lw=0.8, label="per update")
    ax.plot(xs[k - 1:], smooth, color="C0", lw=1.8, label=f"mean of {k} updates")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("learner decisions (millions)")
    ax.set_ylabel("score difference per deal (tp)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    agent, curve, seconds = train(args)
    with open(out / "curve.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(curve[0]))
        w.writeheader()
        w.writerows(curve)
    torch.save({"state_dict": agent.state_dict(), "args": asdict(args)}, out / "policy.pt")
    plot(curve, out / "curve.png", f"masked PPO on BlotVectorEnv ({args.preset}, {args.num_envs} envs) vs random")
    result = {"args": asdict(args), "train_seconds": round(seconds, 1), "learner_steps": curve[-1]["learner_steps"],
              "updates": len(curve)}
    print(f"trained {result['learner_steps']} learner decisions in {seconds:.0f} s", flush=True)
    if args.eval_boards:
        t = time.perf_counter()
        result["eval"] = evaluate(agent, args)
        result["eval"]["seconds"] = round(time.perf_counter() - t, 1)
        e = result["eval"]
        print(f"vs random, {e['boards']} duplicate boards: {e['mean_per_deal']:+.2f} tp per deal "
              f"[{e['ci95'][0]:+.2f}, {e['ci95'][1]:+.2f}] (95% CI)", flush=True)
    (out / "result.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
