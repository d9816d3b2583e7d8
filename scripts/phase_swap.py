"""Which part of the game does an agent win or lose: opponents whose bidding and card play come
from different agents, and how often two agents make the same call.

    python scripts/phase_swap.py --agent ppo --vs rules-medium --vs CLONE --vs CLONE+rules-medium \\
        --vs rules-medium+CLONE --mixed --split dev --boards 1000 --workers 2
    python scripts/phase_swap.py --agreement rules-medium --with CLONE --with ppo --deals 150

A ``--vs`` (or ``--agent``) of the form ``BIDDER+PLAYER`` is a
:class:`agents.base.PhaseSplitAgent`: ``BIDDER`` makes the auction's calls and ``PLAYER`` the
cards and declaration steps; each part is an agent name of :func:`agents.registry.make_agent`
(a policy path too; a name holding a ``+`` is read as a path when its file exists). The rows
are the duplicate evaluation of ``--agent`` against each ``--vs`` (docs/evaluation.md; in
``--mixed``, the candidate and a ``--vs`` partner against two ``--vs``), in the format of
``blot-eval``.

``--agreement REF`` plays the first ``--deals`` boards of the suite (the deal's first table)
with ``REF`` in every seat and, at each of the auction's decisions (forced ones included), asks
``REF`` once more and each ``--with`` agent, each with its own generator: the share of calls
equal to ``REF``'s, with a 95% Wilson interval (the calls of one deal are counted as
independent, so the interval is too narrow). An agent that samples its calls
(``rules-medium`` draws deals) agrees with itself in less than 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agents.base import Agent, CallableAgent  # noqa: E402  (after the path: the script runs from a clone)
from blot_env.rules_config import PRESETS  # noqa: E402
from blot_env.view import SeatView  # noqa: E402


def make_spec(spec: str, preset: str) -> Agent:
    """An agent from a registry name, a :class:`agents.base.PhaseSplitAgent` from
    ``BIDDER+PLAYER`` included (:func:`agents.registry.make_agent`); its ``name`` is ``spec`` (so
    that two policy files both called ``policy.pt`` keep apart in the table).

    Raises:
        ValueError: an empty part, or a name :func:`agents.registry.make_agent` rejects.
        FileNotFoundError: ``ppo:PATH`` with no file at ``PATH``.
        ImportError: a policy file without torch installed.
    """
    from agents.registry import make_agent

    agent = make_agent(spec, preset)
    agent.name = spec
    return agent


def auction_agreement(ref: str, others: list[str], preset: str, deals: list[dict], seed: int = 0
                      ) -> dict[str, tuple[int, int]]:
    """How often agents make ``ref``'s call in ``ref``'s own auctions.

    Args:
        ref, others: agent specs (:func:`make_spec`).
        preset: the rules.
        deals: suite deals (:func:`agents.arena.load_suite`), each played once by ``ref`` in
            every seat to the end of the deal.
        seed: keys every generator: ``ref``'s seat ``s`` on deal ``i`` draws from
            ``(seed, i, s)``, the ``j``-th judge from ``(seed, i, 100 + j)``, so that adding a
            judge changes no other count.

    Returns:
        Per judge (``ref`` itself first, under ``ref + " (again)"``, then ``others``): (calls
        equal to ``ref``'s, auction decisions, forced ones included).

    Raises:
        ValueError: a spec :func:`make_spec` rejects.
    """
    import numpy as np

    from agents.arena import deal_state, play_table
    from agents.base import reset_agent
    from blot_env.rules_config import make_rules
    from blot_env.state import Phase

    cfg = make_rules(preset)
    actor = make_spec(ref, preset)
    judges = {f"{ref} (again)": make_spec(ref, preset)} | {o: make_spec(o, preset) for o in others}
    same = dict.fromkeys(judges, 0)
    n = 0
    sides: list[np.random.Generator] = []

    def judged(view: SeatView, rng: np.random.Generator) -> int:
        """``ref``'s action; on a call, each judge is asked too and its agreement counted."""
        nonlocal n
        action = int(actor.act(view, rng))
        if view.phase == Phase.AUCTION:
            n += 1
            for (key, judge), side in zip(judges.items(), sides):
                same[key] += int(judge.act(view, side)) == action
        return action

    seat_agent = CallableAgent(judged, ref)
    for i, deal in enumerate(deals):
        for a in (actor, *judges.values()):
            reset_agent(a)
        sides[:] = [np.random.default_rng([seed, i, 100 + j]) for j in range(len(judges))]
        rngs = [np.random.default_rng([seed, i, s]) for s in range(cfg.num_players)]
        play_table(deal_state(cfg, deal), [seat_agent] * cfg.num_players, rngs)
    return {k: (v, n) for k, v in same.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", default="ppo", help="candidate: an agent name or BIDDER+PLAYER (default ppo)")
    ap.add_argument("--vs", action="append", default=[], metavar="SPEC",
                    help="opponent: an agent name or BIDDER+PLAYER (repeatable)")
    ap.add_argument("--preset", default="bazar", choices=sorted(PRESETS))
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--boards", type=int, default=1000, help="boards per opponent")
    ap.add_argument("--mixed", action="store_true", help="mixed partnerships (4-player presets)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--agreement", metavar="REF", help="measure auction agreement with REF instead")
    ap.add_argument("--with", dest="others", action="append", default=[], metavar="SPEC",
                    help="agent compared with --agreement's REF (repeatable)")
    ap.add_argument("--deals", type=int, default=150, help="deals played by REF for --agreement")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from agents.arena import load_suite, run
    from agents.arena_cli import format_table
    from agents.stats import wilson_interval
    from blot_env.errors import ConfigError

    if args.boards < 1 or args.workers < 1 or args.deals < 1:
        ap.error("--boards, --workers and --deals must be >= 1")
    given = [flag for flag, on in (("--mixed", args.mixed), ("--vs", bool(args.vs))) if on]
    if args.agreement is not None:
        if not args.agreement:
            ap.error("--agreement needs an agent")
        if given:
            ap.error(f"--agreement plays REF's own deals; {' and '.join(given)} belong to the evaluation")
    elif args.others:
        ap.error("--with is for --agreement REF")
    try:
        if args.agreement:
            deals = load_suite(args.preset, args.split)
            if args.deals > len(deals):
                ap.error(f"--deals {args.deals}: the {args.preset} {args.split} suite has {len(deals)} deals")
            deals = deals[:args.deals]
            res = auction_agreement(args.agreement, args.others, args.preset, deals)
            rows = [{"agent": k, "same": s, "decisions": n, "agreement": s / n,
                     "ci95": list(wilson_interval(s, n))} for k, (s, n) in res.items()]
            if args.json:
                print(json.dumps({"reference": args.agreement, "preset": args.preset, "split": args.split,
                                  "deals": len(deals), "rows": rows}, indent=1))
            else:
                print(f"auction calls equal to {args.agreement}'s, {len(deals)} {args.split} deals of {args.preset}")
                for r in rows:
                    lo, hi = r["ci95"]
                    print(f"  {r['agent']:<40} {r['same']:>5}/{r['decisions']:<5} {r['agreement']:.3f} "
                          f"[{lo:.3f}, {hi:.3f}]")
            return 0
        if not args.vs:
            ap.error("give at least one --vs (or --agreement REF)")
        cand = make_spec(args.agent, args.preset)
        opps = [make_spec(v, args.preset) for v in args.vs]
        report = run(cand, opps, preset=args.preset, boards=args.boards, split=args.split, mixed=args.mixed,
                     workers=args.workers, progress=not args.json)
    except (ValueError, ConfigError, FileNotFoundError, ImportError) as e:
        ap.error(str(e))
    print(json.dumps(report, indent=1) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
