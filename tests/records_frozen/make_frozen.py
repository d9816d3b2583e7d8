"""Write the frozen deal records of tests/records_frozen/ (run once; the files are then kept as
they are).

Each file is a compatibility fixture: records written by this version of blot-env that every
later version must keep replaying to the same result (docs/deal-record.md: "a record written
by this version keeps replaying in later ones"; tests/test_records_frozen.py checks them).
Per rules config, the first random-play deals (the policy of tests/oracles/invariants.py,
seeds 0, 1, ...) that show each feature the config has: a passed-out deal, a contract made
and one failed, contra and recontra, a kaput contract, a capot, a declaration announced, one shown and
heights compared (manual declarations). Two more files hold a match record and records of rules
that differ from their preset (overrides, and a custom rules value that lists every knob).

    python tests/records_frozen/make_frozen.py            # write the files (refuses to overwrite)
    python tests/records_frozen/make_frozen.py --force    # rewrite them (breaks the freeze: only
                                                          # when the record format itself changes)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: tests/ holds the oracles package
    sys.path.insert(0, str(HERE.parent))

from oracles import choose  # noqa: E402

from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions  # noqa: E402
from blot_env.record import make_record, rules_from_record  # noqa: E402
from blot_env.rules_config import KNOBS, RulesConfig, make_rules  # noqa: E402

#: (file stem, preset, overrides) of the per-config files
CONFIGS = [
    ("bazar_manual", "bazar", {}),
    ("bazar_auto", "bazar", {"declarations": "auto"}),
    ("bazar-app", "bazar-app", {}),
    ("duel", "duel", {}),
    ("duel-app", "duel-app", {}),
    ("open", "open", {}),
    ("open_auto", "open", {"declarations": "auto"}),
    ("belote", "belote", {}),
]
MAX_SEEDS = 30_000


def features(rec: dict) -> set[str]:
    """The features a deal record shows: ``passed_out``, ``made``/``failed``, ``contra``,
    ``recontra``, ``kaput`` (a kaput bid won the auction), ``capot`` (one side took every
    trick), ``announced`` (a declaration class other than none), ``shown``, ``heights`` (two
    opponents announced one class and compared heights, rules.md 2.4)."""
    res = rec["result"]
    c = res["contract"]
    if c is None:
        return {"passed_out"}
    out = {"made" if res["made"] else "failed"}
    if c["double"] != "none":
        out.add(c["double"])
    if "kaput" in c["bid"]:
        out.add("kaput")
    if max(res["tricks"]) == rules_from_record(rec).num_tricks:
        out.add("capot")
    acts = rec["actions"]
    if any(a.startswith("announce ") and a != "announce none" for a in acts):
        out.add("announced")
    if "show" in acts:
        out.add("shown")
    if any(a.startswith("height") for a in acts):
        out.add("heights")
    return out


def possible(cfg: RulesConfig) -> set[str]:
    """The features the config's rules allow."""
    out = {"made", "failed", "capot"}
    if cfg.auction in ("bazar", "belote"):
        out |= {"passed_out", "contra", "recontra"}
    if cfg.kaput_bid != "none":
        out.add("kaput")
    if cfg.declarations in ("manual", "announce"):
        out.add("announced")
    if cfg.declarations == "manual":
        out |= {"shown", "heights"}
    return out


def play(cfg: RulesConfig, seed: int, pass_prob: float) -> dict:
    rng = np.random.default_rng([seed, 2024])
    s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
    while not is_terminal(s):
        s = apply_action(s, choose(s, legal_actions(s), rng, pass_prob))
    return make_record(s)


def frozen_set(preset: str, overrides: dict) -> list[dict]:
    """The first deal (by seed) that shows each feature the config allows."""
    cfg = make_rules(preset, **overrides)
    want = possible(cfg)
    found: dict[str, dict] = {}
    for seed in range(MAX_SEEDS):
        rec = play(cfg, seed, 0.5 if seed % 2 else 0.2)
        new = (features(rec) & want) - set(found)
        for f in new:
            found[f] = rec
        if set(found) == want:
            break
    missing = want - set(found)
    if missing:
        raise SystemExit(f"{preset} {overrides}: no deal with {sorted(missing)} in {MAX_SEEDS} seeds")
    out: list[dict] = []
    for f in sorted(found):
        if found[f] not in out:
            out.append(found[f])
    return out


def match_record() -> dict:
    from blot_env.env import raw_env

    env = raw_env("bazar-app", episode="match", max_deals=3)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    while env.agents:
        a = env.agent_selection
        if env.terminations[a] or env.truncations[a]:
            env.step(None)
            continue
        legal = np.flatnonzero(env.observe(a)["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    return env.match_record()


def custom_rules_records() -> list[dict]:
    over = play(make_rules("bazar", target=301, undertrump="forced", declaration_tie="nobody"), 3, 0.3)
    knobs = {k: getattr(make_rules("duel"), k) for k in KNOBS if k != "preset"}
    custom = play(RulesConfig(preset="duel-house", **dict(knobs, taker_ge=True)), 4, 0.3)
    return [over, custom]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="overwrite existing files")
    args = ap.parse_args(argv)
    files = {stem: frozen_set(preset, over) for stem, preset, over in CONFIGS}
    files["match"] = [match_record()]
    files["custom_rules"] = custom_rules_records()
    for stem, recs in files.items():
        path = HERE / f"{stem}.jsonl"
        if path.exists() and not args.force:
            print(f"{path.name}: exists, left as it is (--force rewrites it)")
            continue
        path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        print(f"{path.name}: {len(recs)} records, " + ", ".join(
            "+".join(sorted(features(r))) if r.get("format") == "blot-record/1" else "match" for r in recs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
