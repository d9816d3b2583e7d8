"""Cloning data: one agent plays every seat of N seeded deals; its decisions, in parallel, resumable.

The deals are cut into chunks of ``--chunk-deals``; each chunk runs as one task on the pool of
:mod:`agents.eval.board_pool` (this machine's processes with ``--workers``, or a Ray cluster with
``--address``) and is appended to ``--out`` as soon as it finishes, so a run stopped by
``--deadline``, Ctrl-C or a kill keeps every finished chunk, and a rerun with the same file
plays only the chunks it lacks. The file feeds ``pretrain.data`` of a training config
(docs/training.md, "Cloning data (dataset)"); its format is in agents/ppo/clone_data.py.

    python scripts/clone_data.py --preset bazar --agent rules-medium --deals 20000 --workers 2 \\
        --out runs/clone_bazar_rules-medium.pkl
    python scripts/clone_data.py --info runs/clone_bazar_rules-medium.pkl [--json]
    python scripts/clone_data.py --preset bazar --agent ppo --deals 8000 --dd-values --workers 2 \\
        --out runs/dd_bazar_ppo.pkl      # with each legal card's double-dummy value (qvalues)
    python scripts/clone_data.py --preset bazar --agent ppo --deals 8000 --rollout-values --workers 2 \\
        --out runs/ro_bazar_ppo.pkl      # with each legal card's rollout value under the network (qvalues)
    python scripts/clone_data.py --agree runs/clone_bazar_rules-medium/policy.pt runs/heldout.pkl [--json]

``--agree POLICY FILE ...`` prints how often a policy file's greedy action is the recorded one,
over all decisions, auction calls and the rest (build the held-out file with another ``--seed``).
``--agree POLICY FILE --against POLICY2 FILE2`` compares two policies decision by decision on
the same held-out deals (FILE2: the same ``--seed``, ``--deals`` and ``--chunk-deals``, encoded
with POLICY2's ``--obs-kind``): the exact McNemar p-value, which treats decisions as independent,
and the difference with a standard error clustered by deal:

    python scripts/clone_data.py --agree runs/a/policy.pt runs/held_a.pkl --against runs/b/policy.pt runs/held_b.pkl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.eval.cli import add_dataset_options, positive_int
from agents.ppo.clone_data import (
    HEADER_KEYS,
    CloneDataError,
    CloneJob,
    agreement,
    build_clone_data,
    header_value,
    paired_agreement,
    read_clone_data,
)
from agents.registry import UnknownAgentError, make_agent
from blot_env.errors import ConfigError
from blot_env.observation import KINDS
from blot_env.rules_config import PRESETS, make_rules


def info(path: str) -> dict:
    """What a cloning-data file holds: its header, chunks, deals, decisions, bytes and CPU seconds."""
    recs, _ = read_clone_data(path)
    if not recs:
        return {"file": path, "chunks": 0, "deals": 0, "samples": 0, "bytes": Path(path).stat().st_size}
    head = {k: header_value(recs[0], k) for k in HEADER_KEYS}
    chunks = sorted(int(r["chunk"]) for r in recs)
    first_missing = 0
    have = set(chunks)
    while first_missing in have:
        first_missing += 1
    deals = sum(int(r["deals"]) for r in recs)
    cpu = sum(float(r["cpu_seconds"]) for r in recs)
    return {"file": path, **head, "chunk_deals": int(recs[0]["deals"]), "chunks": len(recs),
            "first_missing_chunk": first_missing, "deals": deals,
            "samples": sum(int(r["samples"]) for r in recs), "bytes": Path(path).stat().st_size,
            "cpu_seconds": cpu, "cpu_seconds_per_deal": cpu / deals}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="bazar", choices=tuple(PRESETS))
    ap.add_argument("--agent", default="rules-medium", help="agents.registry name of the agent to imitate")
    ap.add_argument("--deals", type=positive_int, help="deals to play (rounded up to whole chunks)")
    ap.add_argument("--chunk-deals", type=positive_int, default=100, help="deals per task and per record")
    ap.add_argument("--obs-kind", default="observation", choices=tuple(KINDS),
                    help="observation kind of the network that will learn from the file")
    ap.add_argument("--dd-values", action="store_true",
                    help="also record every legal card's exact double-dummy value on the real hands at each card "
                         "decision (qvalues, for pretrain.q_temperature; costs a solve per card decision)")
    ap.add_argument("--rollout-values", action="store_true",
                    help="instead of --dd-values: every legal card's rollout value, the deal played to its end by "
                         "the agent's own network in every seat after that card (a PPO policy agent only)")
    ap.add_argument("--rollout-worlds", type=positive_int, metavar="K",
                    help="with --rollout-values: roll out in K deals sampled from the acting seat's view and record "
                         "the mean (default: the real deal)")
    add_dataset_options(ap, "chunks", "runs/clone_bazar_rules-medium.pkl")
    ap.add_argument("--agree", metavar="POLICY", help="with FILEs after it: how often this policy file's greedy "
                    "action is the recorded one")
    ap.add_argument("--against", nargs=2, metavar=("POLICY2", "FILE2"),
                    help="with --agree POLICY FILE: compare the two policies on the same decisions (McNemar)")
    ap.add_argument("files", nargs="*", metavar="FILE", help="cloning-data files for --agree")
    args = ap.parse_args(argv)
    try:
        return _main(ap, args)
    except (CloneDataError, UnknownAgentError, ConfigError, ImportError, ConnectionError) as e:
        print(f"clone_data: {e}", file=sys.stderr)
        return 2


def _values_kind(path: str) -> str:
    """What a file's ``qvalues`` are, in words: ``double-dummy`` or ``rollout`` (from its first record)."""
    import pickle

    with open(path, "rb") as f:
        first = pickle.load(f)
    return "rollout" if header_value(first, "rollout_values") else "double-dummy"


def _check_encoding(path: str, agent, name: str) -> None:
    """Raise CloneDataError when ``path`` is not encoded for ``agent`` (preset and observation kind)."""
    recs, _ = read_clone_data(path)
    if recs and (recs[0]["preset"], recs[0]["obs_kind"]) != (agent.encoder.cfg.preset, agent.encoder.kind):
        raise CloneDataError(f"{path}: decisions of preset {recs[0]['preset']!r} encoded as "
                             f"{recs[0]['obs_kind']!r}; {name} plays {agent.encoder.cfg.preset!r} "
                             f"on {agent.encoder.kind!r}")


def _paired(ap: argparse.ArgumentParser, args: argparse.Namespace, agent) -> int:
    """``--agree POLICY FILE --against POLICY2 FILE2``: the two policies decision by decision."""
    if len(args.files) != 1:
        ap.error("--against compares on one FILE: --agree POLICY FILE --against POLICY2 FILE2")
    name_b, file_b = args.against
    agent_b = make_agent(name_b, agent.encoder.cfg)
    if not hasattr(agent_b, "policy"):
        ap.error(f"--against needs a PPO policy file, got {name_b!r}")
    _check_encoding(file_b, agent_b, name_b)
    res = paired_agreement(agent.policy, args.files[0], agent_b.policy, file_b)
    if args.json:
        print(json.dumps({"a": args.agree, "file_a": args.files[0], "b": name_b, "file_b": file_b, **res}))
        return 0
    print(f"A = {args.agree} on {args.files[0]}; B = {name_b} on {file_b}")
    for k, r in res.items():
        print(f"{k:>8}: {r['n']} decisions in {r['deals']} deals, A {r['a']:.3f}, B {r['b']:.3f}; only A matches "
              f"{r['a_only']}, only B {r['b_only']}; exact McNemar p = {r['p']:.3g} (decisions independent); "
              f"B - A = {r['diff']:+.4f} +- {1.96 * r['se']:.4f}, p = {r['p_deals']:.3g} (clustered by deal)")
    return 0


def _main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.against and not args.agree:
        ap.error("--against needs --agree POLICY FILE before it")
    if args.info:
        rows = [info(p) for p in args.info]
        if args.json:
            print(json.dumps(rows))
        else:
            for r in rows:
                if not r["chunks"]:
                    print(f"{r['file']}: no finished chunk")
                    continue
                worlds = f" over {r['rollout_worlds']} sampled worlds" if r["rollout_worlds"] else ""
                print(f"{r['file']}: {r['preset']}, {r['agent']} in every seat, seed {r['seed']}, {r['obs_kind']}"
                      f"{', double-dummy card values' if r['dd_values'] else ''}"
                      f"{', rollout card values' if r['rollout_values'] else ''}"
                      f"{worlds}; "
                      f"{r['chunks']} chunks of {r['chunk_deals']} deals (chunks 0..{r['first_missing_chunk'] - 1} "
                      f"complete), {r['deals']} deals, {r['samples']} decisions, {r['bytes'] / 1e6:.1f} MB, "
                      f"{r['cpu_seconds']:.0f} CPU s ({r['cpu_seconds_per_deal'] * 1000:.0f} ms a deal)")
        return 0
    if args.agree:
        if not args.files:
            ap.error("--agree POLICY needs one or more cloning-data FILEs after it")
        first, _ = read_clone_data(args.files[0])
        agent = make_agent(args.agree, make_rules(first[0]["preset"] if first else "bazar"))
        if not hasattr(agent, "policy"):
            ap.error(f"--agree needs a PPO policy file, got {args.agree!r}")
        for p in args.files:
            _check_encoding(p, agent, args.agree)
        if args.against:
            return _paired(ap, args, agent)
        rows = [{"file": p, "policy": args.agree, **agreement(agent.policy, p)} for p in args.files]
        if args.json:
            print(json.dumps(rows))
        else:
            for r in rows:
                print(f"{r['file']}: {r['policy']} takes the recorded action in {r['all']:.3f} of "
                      f"{int(r['n_all'])} decisions (auction {r['auction']:.3f} of {int(r['n_auction'])}, "
                      f"play {r['play']:.3f} of {int(r['n_play'])})"
                      + (f"; {_values_kind(p)} regret of its greedy card {r['dd_regret']:.3f} table points, above "
                         f"zero on {r['dd_suboptimal']:.3f} of {int(r['n_cards'])} cards" if "dd_regret" in r else ""))
        return 0
    if args.deals is None or args.out is None:
        ap.error("--deals and --out are required (or --info FILE ...)")
    if args.deadline is not None and args.deadline <= 0:
        ap.error(f"--deadline must be a positive number of seconds, got {args.deadline}")
    if args.dd_values and args.rollout_values:
        ap.error("--dd-values and --rollout-values fill the same qvalues: give one of them")
    if args.rollout_worlds and not args.rollout_values:
        ap.error("--rollout-worlds needs --rollout-values")
    cfg = make_rules(args.preset)
    agent = make_agent(args.agent, cfg)  # an unknown name fails here, before any worker starts
    if args.rollout_values:
        from agents.ppo.demos import check_rollout_agent

        check_rollout_agent(agent, args.agent)
    job = CloneJob(cfg, args.agent, args.seed, args.chunk_deals, args.obs_kind, args.dd_values, args.rollout_values,
                   args.rollout_worlds or 0, factory=make_agent)
    res = build_clone_data(job, args.out, args.deals, args.workers, args.address, args.deadline)
    stopped = " (deadline reached)" if res["deadline"] else " (interrupted)" if res["interrupted"] else ""
    print(f"[clone_data] {res['played']} chunks ({res['played'] * args.chunk_deals} deals) played in "
          f"{res['seconds']:.0f} s{stopped}; {res['chunks']} chunks in {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
